package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// Status is a JobSet's in-place group as the controller reads it.
type Status struct {
	Namespace       string `json:"namespace"`
	Name            string `json:"name"`
	RestartStrategy string `json:"restartStrategy"`
	// Group is the in-place group reported ("" the default group), and
	// Groups every group of the JobSet with members, when it names any.
	Group  string   `json:"group,omitempty"`
	Groups []string `json:"groups,omitempty"`
	// Synced and Deprecated are the group's epochs: status.syncedEpoch
	// and status.deprecatedEpoch for the default group, its
	// status.inPlaceGroups entry's for a named one.
	Synced     int32 `json:"syncedEpoch"`
	Deprecated int32 `json:"deprecatedEpoch"`
	// State says where the group is: in sync, gathering (and why), or
	// not restarting in place.
	State string `json:"state"`
	// GatheringAt is the epoch the group gathers at, 0 in sync;
	// GatheringSince since when.
	GatheringAt    int32      `json:"gatheringAt,omitempty"`
	GatheringSince *time.Time `json:"gatheringSince,omitempty"`
	Budget         Budget     `json:"budget"`
	// Decision is what the controller decides on this reading (without
	// what only it holds: failure signs seen in earlier Pod updates, and
	// the lost nodes' fence reports).
	Decision string `json:"decision,omitempty"`
	// MissingPods counts the expected Pods of the group that do not exist.
	MissingPods int32 `json:"missingPods,omitempty"`
	// Conditions are the JobSet's True conditions: the controller's
	// diagnosis (GatherStalled, KeptOffNodes, InvalidEpoch...) among them;
	// and a named group's, after them.
	Conditions []Condition `json:"conditions,omitempty"`
	Members    []Member    `json:"members"`
}

// Budget is spec.failurePolicy.maxRestarts and what counts against it.
type Budget struct {
	MaxRestarts     int32 `json:"maxRestarts"`
	Used            int32 `json:"used"`
	FullRestarts    int32 `json:"fullRestarts"`
	OneJobRestarts  int32 `json:"oneJobRestarts"`
	InPlaceRestarts int32 `json:"inPlaceRestarts"`
	Left            int32 `json:"left"`
}

// Condition is one of the JobSet's True conditions.
type Condition struct {
	Type    string    `json:"type"`
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	Since   time.Time `json:"since"`
}

// Member is one Pod of the group's current restart attempt.
type Member struct {
	Pod           string `json:"pod"`
	ReplicatedJob string `json:"replicatedJob"`
	// Index is the Pod's Job and completion index: a replacement has its
	// predecessor's.
	Index string `json:"index"`
	Node  string `json:"node,omitempty"`
	Epoch string `json:"epoch,omitempty"`
	// WorkerRestarts is how often the Pod's worker restarted in place, by
	// tier, as its agent last reported it (nil: no report). A restart of
	// the worker's process moves no restartCount.
	WorkerRestarts *agentspec.WorkerRestarts `json:"workerRestarts,omitempty"`
	// State is one of the Member* states.
	State string `json:"state"`
	Why   string `json:"why,omitempty"`
}

// Member states.
const (
	// MemberJoined: live, at the epoch the group is at (or gathers at).
	MemberJoined = "Joined"
	// MemberMissing: live, but not at that epoch.
	MemberMissing = "Missing"
	// MemberTerminating: being deleted.
	MemberTerminating = "Terminating"
	// MemberLost: the controller marked it Failed, its node lost.
	MemberLost = "NodeLost"
	// MemberReplacedOffNode: the controller marked it Failed for failing
	// in place again and again, its replacement kept off its node.
	MemberReplacedOffNode = "ReplacedOffNode"
	// MemberFailed: it failed; its Job replaces it.
	MemberFailed = "Failed"
	// MemberSucceeded: it finished its work.
	MemberSucceeded = "Succeeded"
)

// ReadStatus reads the JobSet's in-place group named groupName ("" the
// default group) from its Pods and Jobs (any of the JobSet's: those of
// earlier restart attempts and outside the group are left out as the
// controller leaves them out). A JobSet that names groups must be read one
// group at a time: without a name, the default group, when it has members.
func ReadStatus(js *jobset.JobSet, groupName string, pods []corev1.Pod, jobs []batchv1.Job) (Status, error) {
	group, groups := inplace.DefaultGroup(js), inplace.Groups(js)
	var names []string
	if inplace.Scoped(js) {
		for _, g := range groups {
			names = append(names, cmp.Or(g.Name, `"" (the default group)`))
		}
	}
	if i := slices.IndexFunc(groups, func(g inplace.InPlaceGroup) bool { return g.Name == groupName }); i >= 0 {
		group = groups[i]
	} else if groupName != "" || len(groups) > 0 {
		return Status{}, fmt.Errorf("JobSet %s/%s has no in-place group %q with members: its groups are %s; name one with --group",
			js.Namespace, js.Name, groupName, strings.Join(names, ", "))
	}
	s := Status{
		Namespace:       js.Namespace,
		Name:            js.Name,
		RestartStrategy: string(jobset.RestartStrategyOf(js)),
		Group:           group.Name,
		Groups:          names,
		Synced:          group.Synced,
		Deprecated:      group.Deprecated,
		Budget: Budget{
			MaxRestarts:     inplace.MaxRestarts(js),
			Used:            inplace.RestartsUsed(js),
			FullRestarts:    js.Status.RestartsCountTowardsMax,
			OneJobRestarts:  inplace.OneJobRestartsCounted(js),
			InPlaceRestarts: js.Status.InPlaceRestarts,
		},
	}
	s.Budget.Left = max(0, s.Budget.MaxRestarts-s.Budget.Used)
	conditions := js.Status.Conditions
	if group.Name != "" {
		conditions = append(slices.Clone(conditions), group.Conditions...)
	}
	for _, c := range conditions {
		if c.Status == metav1.ConditionTrue {
			s.Conditions = append(s.Conditions, Condition{Type: c.Type, Reason: c.Reason, Message: c.Message, Since: c.LastTransitionTime.UTC()})
		}
	}
	if jobset.RestartStrategyOf(js) != jobset.InPlaceRestart {
		s.State = "not restarting in place (restartStrategy " + s.RestartStrategy + ")"
		return s, nil
	}

	jobPointers := make([]*batchv1.Job, len(jobs))
	for i := range jobs {
		jobPointers[i] = &jobs[i]
	}
	snapshot := inplace.SnapshotOf(js, group, pods, jobPointers, nil, nil)
	gathering := inplace.Gathering(s.Synced, s.Deprecated, snapshot.Regathering)
	target := s.Synced
	if gathering {
		target = s.Synced + 1
		s.GatheringAt = target
		if since, ok := group.GatherStart(js); ok {
			s.GatheringSince = ptr.To(since.UTC())
		}
	}
	s.State = groupState(js, s.Synced, s.Deprecated, snapshot.Regathering)

	current, _ := inplace.GroupChildren(group, inplace.CurrentAttempt(js, pods), nil)
	live := int32(0)
	for _, pod := range current {
		if inplace.Live(pod) {
			live++
		}
		s.Members = append(s.Members, readMember(pod, target, gathering))
	}
	s.MissingPods = max(0, snapshot.ExpectedPods-live)
	slices.SortFunc(s.Members, func(a, b Member) int {
		if c := strings.Compare(a.Index, b.Index); c != 0 {
			return c
		}
		return strings.Compare(a.Pod, b.Pod)
	})
	if !finished(js) && !ptr.Deref(js.Spec.Suspend, false) {
		s.Decision = describeDecision(inplace.Decide(snapshot), snapshot, target, s.Members, s.MissingPods)
	}
	return s, nil
}

func groupState(js *jobset.JobSet, synced, deprecated int32, regathering bool) string {
	switch {
	case finished(js):
		return "finished"
	case ptr.Deref(js.Spec.Suspend, false):
		return "suspended"
	case regathering:
		return fmt.Sprintf("the Pods were recreated (a full restart or a resume) and gather at epoch %d", synced+1)
	case synced == 0:
		return "first run: the Pods gather at epoch 1"
	case inplace.RestartInProgress(synced, deprecated):
		return fmt.Sprintf("group restart %d in progress: the Pods gather at epoch %d", js.Status.InPlaceRestarts, synced+1)
	}
	return fmt.Sprintf("in sync at epoch %d", synced)
}

func finished(js *jobset.JobSet) bool {
	return meta.IsStatusConditionTrue(js.Status.Conditions, string(jobset.JobSetCompleted)) ||
		meta.IsStatusConditionTrue(js.Status.Conditions, string(jobset.JobSetFailed))
}

// readMember says where a Pod of the group stands against the epoch the
// group is at (in sync) or gathers at.
func readMember(pod *corev1.Pod, target int32, gathering bool) Member {
	p := inplace.ReadPod(pod, !gathering)
	m := Member{
		Pod:           pod.Name,
		ReplicatedJob: pod.Labels[jobset.ReplicatedJobNameKey],
		Index:         indexOf(pod),
		Node:          pod.Spec.NodeName,
		Epoch:         p.Epoch,
	}
	if r, err := agentspec.ParseWorkerRestarts(p.Restarts); err == nil {
		m.WorkerRestarts = &r
	}
	mark := jobset.ControllerMark(pod)
	stillRuns := ""
	if inplace.Stopping(pod) {
		stillRuns = "; its containers may still run, and the group syncs only once they have stopped"
	}
	switch {
	case mark != nil && mark.Type == corev1.DisruptionTarget:
		m.State, m.Why = MemberLost, fmt.Sprintf("node %s lost: %s%s", pod.Spec.NodeName, mark.Message, stillRuns)
	case mark != nil:
		m.State, m.Why = MemberReplacedOffNode, fmt.Sprintf("%s: %s%s", mark.Reason, mark.Message, stillRuns)
	case pod.DeletionTimestamp != nil:
		m.State, m.Why = MemberTerminating, "being deleted"+stillRuns
	case pod.Status.Phase == corev1.PodSucceeded:
		m.State = MemberSucceeded
	case pod.Status.Phase == corev1.PodFailed:
		m.State, m.Why = MemberFailed, failureOf(pod)+"; its Job replaces it"
	case p.Epoch == fmt.Sprint(target):
		m.State = MemberJoined
		if p.FailureSignal != "" {
			m.Why = p.FailureSignal
		}
	case !gathering && p.Epoch == fmt.Sprint(target+1):
		m.State, m.Why = MemberMissing, fmt.Sprintf("it restarted and joined epoch %d: a group restart starts", target+1)
	default:
		m.State, m.Why = MemberMissing, inplace.WhyNotJoined(pod)
	}
	if inplace.Live(pod) && !inplace.Held(pod) {
		m.Why = strings.TrimPrefix(m.Why+"; not yet held by the finalizer "+jobset.GroupMemberFinalizer+" (no epoch syncs until it is)", "; ")
	}
	return m
}

func indexOf(pod *corev1.Pod) string {
	job, index := pod.Labels[batchv1.JobNameLabel], pod.Annotations[batchv1.JobCompletionIndexAnnotation]
	if job == "" || index == "" {
		return ""
	}
	return job + "/" + index
}

// failureOf describes how a failed Pod ended: its reason, or the first
// container that exited non-zero.
func failureOf(pod *corev1.Pod) string {
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for _, c := range statuses {
			if t := c.State.Terminated; t != nil && t.ExitCode != 0 {
				return fmt.Sprintf("container %s exited with code %d", c.Name, t.ExitCode)
			}
		}
	}
	if pod.Status.Reason != "" {
		return pod.Status.Reason + ": " + pod.Status.Message
	}
	return "failed"
}

// describeDecision says what the controller does next on this reading.
func describeDecision(d inplace.Decision, s inplace.Snapshot, target int32, members []Member, missingPods int32) string {
	switch {
	case d.LostIndex != "":
		return "restart fully: " + d.LostIndex
	case d.BudgetExceeded:
		return "fail the JobSet: " + d.Message
	case d.RestartStarted && d.Synced != s.Synced:
		return fmt.Sprintf("count a group restart and sync epoch %d: %s", d.Synced, d.Trigger)
	case d.RestartStarted:
		return fmt.Sprintf("start a group restart (epoch %d and below restart in place): %s", d.Deprecated, d.Trigger)
	case d.Synced != s.Synced:
		return fmt.Sprintf("sync epoch %d: every live Pod joined it", d.Synced)
	case d.Deprecated != s.Deprecated:
		return fmt.Sprintf("deprecate epoch %d: Pods that outlived the suspension restart in place", d.Deprecated)
	case inplace.Gathering(s.Synced, s.Deprecated, s.Regathering):
		var waiting []string
		for _, m := range members {
			if m.State != MemberJoined && m.State != MemberSucceeded {
				waiting = append(waiting, m.Pod)
			}
		}
		why := fmt.Sprintf("wait for the group to gather at epoch %d", target)
		if len(waiting) > 0 {
			why += fmt.Sprintf(": %d Pods have not joined or have not stopped (%s)", len(waiting), strings.Join(waiting, ", "))
		}
		if missingPods > 0 {
			why += fmt.Sprintf("; %d expected Pods do not exist (see the Jobs' events)", missingPods)
		}
		return why
	}
	return "nothing: the group runs"
}
