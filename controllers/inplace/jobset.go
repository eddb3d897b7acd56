package inplace

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// Reading a JobSet and its children in the protocol's terms: the one
// reading that the controller decides on and that `kubectl jobset` shows,
// so that what a user reads is what the controller acts on.

// Group returns the replicatedJobs whose Pods run the agent, in every
// in-place group, and their names: the members the controller holds,
// watches for node loss and never lets shrink. Others (an initializer the
// group waits for to Complete, a launcher that waits for the group to be
// Ready; the webhook admits only shapes that cannot deadlock) are ordinary
// Jobs: the epoch protocol neither expects nor counts their Pods, and
// their failures go to the failure policy.
func Group(js *jobset.JobSet) ([]jobset.ReplicatedJob, sets.Set[string]) {
	var members []jobset.ReplicatedJob
	names := sets.New[string]()
	for _, rj := range js.Spec.ReplicatedJobs {
		if sidecar.Index(rj.Template.Spec.Template.Spec) >= 0 {
			members = append(members, rj)
			names.Insert(rj.Name)
		}
	}
	return members, names
}

// InPlaceGroup is one in-place group of a JobSet: replicatedJobs whose
// Pods run the agent and restart in place together, with epochs of their
// own. A failure in one group restarts that group alone; what a group
// cannot absorb (a lost index, a spent budget) escalates to the JobSet.
type InPlaceGroup struct {
	// Name is the group's name (GroupNameOf); "" is the default group,
	// the replicatedJobs that name none, whose state is the top of the
	// JobSet's status.
	Name           string
	ReplicatedJobs []jobset.ReplicatedJob
	Members        sets.Set[string]
	// Synced, Deprecated and Conditions are the group's state as the
	// JobSet's status holds it (the default group's conditions are the
	// JobSet's).
	Synced, Deprecated int32
	Conditions         []metav1.Condition
}

// GroupNameOf is the in-place group a replicatedJob names, "" for the
// default group.
func GroupNameOf(rj *jobset.ReplicatedJob) string {
	return rj.Template.Annotations[jobset.InPlaceGroupKey]
}

// Groups returns the JobSet's in-place groups that have members: the
// default group first, then the named ones in the order of their first
// replicatedJob.
func Groups(js *jobset.JobSet) []InPlaceGroup {
	members, _ := Group(js)
	names := []string{}
	for _, rj := range members {
		if name := GroupNameOf(&rj); !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.SortStableFunc(names, func(a, b string) int {
		return cmp.Compare(min(len(a), 1), min(len(b), 1)) // the default group first
	})
	groups := make([]InPlaceGroup, len(names))
	for i, name := range names {
		groups[i] = GroupState(js, name)
		for _, rj := range members {
			if GroupNameOf(&rj) == name {
				groups[i].ReplicatedJobs = append(groups[i].ReplicatedJobs, rj)
				groups[i].Members.Insert(rj.Name)
			}
		}
	}
	return groups
}

// Scoped: the JobSet has named in-place groups, each restarting on its
// own.
func Scoped(js *jobset.JobSet) bool {
	groups := Groups(js)
	return len(groups) > 1 || len(groups) == 1 && groups[0].Name != ""
}

// DefaultGroup is the JobSet's default in-place group, empty when every
// replicatedJob names a group.
func DefaultGroup(js *jobset.JobSet) InPlaceGroup {
	for _, g := range Groups(js) {
		if g.Name == "" {
			return g
		}
	}
	return GroupState(js, "")
}

// GroupOf returns the in-place group of the replicatedJob named rjName,
// and false when its Pods run no agent.
func GroupOf(js *jobset.JobSet, rjName string) (InPlaceGroup, bool) {
	for _, g := range Groups(js) {
		if g.Members.Has(rjName) {
			return g, true
		}
	}
	return InPlaceGroup{}, false
}

// GroupState reads the named group's state from the status, without its
// members.
func GroupState(js *jobset.JobSet, name string) InPlaceGroup {
	g := InPlaceGroup{Name: name, Members: sets.New[string]()}
	if name == "" {
		g.Synced, g.Deprecated = ptr.Deref(js.Status.SyncedEpoch, 0), ptr.Deref(js.Status.DeprecatedEpoch, 0)
		g.Conditions = js.Status.Conditions
		return g
	}
	for _, s := range js.Status.InPlaceGroups {
		if s.Name == name {
			g.Synced, g.Deprecated = ptr.Deref(s.SyncedEpoch, 0), ptr.Deref(s.DeprecatedEpoch, 0)
			g.Conditions = s.Conditions
		}
	}
	return g
}

// StateIn returns the group with its state as js's status holds it: a
// status being written holds the group's new epochs and conditions.
func (g InPlaceGroup) StateIn(js *jobset.JobSet) InPlaceGroup {
	state := GroupState(js, g.Name)
	g.Synced, g.Deprecated, g.Conditions = state.Synced, state.Deprecated, state.Conditions
	return g
}

// Regathering: the controller recreated every Pod of the group (a full
// restart or a suspension) since it last synced, and said so in its
// InPlaceRestarting condition in the same status write.
func (g InPlaceGroup) Regathering() bool {
	c := meta.FindStatusCondition(g.Conditions, string(jobset.JobSetInPlaceRestarting))
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == jobset.ReasonPodsRecreated
}

// RestartInProgress: a group restart of the group started and has not
// synced yet.
func (g InPlaceGroup) RestartInProgress() bool {
	return RestartInProgress(g.Synced, g.Deprecated)
}

// AnyRestartInProgress: a group restart of some in-place group of the
// JobSet (the default group's, by its status, whatever its members)
// started and has not synced yet.
func AnyRestartInProgress(js *jobset.JobSet) bool {
	return GroupState(js, "").RestartInProgress() || slices.ContainsFunc(Groups(js), InPlaceGroup.RestartInProgress)
}

// Describe names the group for messages: "" for the default group, which
// messages have always meant.
func (g InPlaceGroup) Describe() string {
	if g.Name == "" {
		return ""
	}
	return fmt.Sprintf("in-place group %q: ", g.Name)
}

// GroupChildren keeps the Pods and Jobs of the in-place group's
// replicatedJobs.
func GroupChildren(g InPlaceGroup, pods []*corev1.Pod, jobs []*batchv1.Job) ([]*corev1.Pod, []*batchv1.Job) {
	groupPods := make([]*corev1.Pod, 0, len(pods))
	for _, pod := range pods {
		if g.Members.Has(pod.Labels[jobset.ReplicatedJobNameKey]) {
			groupPods = append(groupPods, pod)
		}
	}
	var groupJobs []*batchv1.Job
	for _, job := range jobs {
		if g.Members.Has(job.Labels[jobset.ReplicatedJobNameKey]) {
			groupJobs = append(groupJobs, job)
		}
	}
	return groupPods, groupJobs
}

// CurrentAttempt is the JobSet's Pods of its current restart attempt:
// pointers into pods, not copies (a reconcile reads thousands).
func CurrentAttempt(js *jobset.JobSet, pods []corev1.Pod) []*corev1.Pod {
	current := make([]*corev1.Pod, 0, len(pods))
	for i := range pods {
		if pod := &pods[i]; OfCurrentAttempt(js, pod) {
			current = append(current, pod)
		}
	}
	return current
}

// OfCurrentAttempt: the Pod is the JobSet's (not an earlier JobSet's of the
// same name) and of its current restart attempt.
func OfCurrentAttempt(js *jobset.JobSet, pod *corev1.Pod) bool {
	return pod.Labels[jobset.JobSetUIDKey] == string(js.UID) && pod.Labels[jobset.RestartsKey] == strconv.Itoa(int(js.Status.Restarts))
}

// RestartsUsed is what spec.failurePolicy.maxRestarts limits: full
// restarts that count, counted restarts of one Job, and group restarts in
// place.
func RestartsUsed(js *jobset.JobSet) int32 {
	return js.Status.RestartsCountTowardsMax + OneJobRestartsCounted(js) + js.Status.InPlaceRestarts
}

// OneJobRestartsCounted sums the restarts of one Job (a RestartJob failure
// policy rule) that count toward maxRestarts.
func OneJobRestartsCounted(js *jobset.JobSet) int32 {
	var n int32
	for _, s := range js.Status.ReplicatedJobsStatus {
		for _, c := range s.JobRestartsCountTowardsMax {
			n += c
		}
	}
	return n
}

// MaxRestarts is spec.failurePolicy.maxRestarts, 0 without a failure
// policy.
func MaxRestarts(js *jobset.JobSet) int32 {
	if js.Spec.FailurePolicy == nil {
		return 0
	}
	return js.Spec.FailurePolicy.MaxRestarts
}

// Regathering: the controller recreated every Pod of the default group
// since it last synced (InPlaceGroup.Regathering).
func Regathering(js *jobset.JobSet) bool {
	return DefaultGroup(js).Regathering()
}

// GatherStart returns since when the group's Pods have been gathering at
// the epoch after its synced one, or false when they are not.
func (g InPlaceGroup) GatherStart(js *jobset.JobSet) (time.Time, bool) {
	if c := meta.FindStatusCondition(g.Conditions, string(jobset.JobSetInPlaceRestarting)); c != nil {
		// True from a group restart's start, or from a full restart or a
		// suspension, until the next sync.
		return c.LastTransitionTime.Time, c.Status == metav1.ConditionTrue
	}
	if g.Synced > 0 {
		return time.Time{}, false
	}
	// The first gather, from the JobSet's creation or its last resume.
	since := js.CreationTimestamp.Time
	if c := meta.FindStatusCondition(js.Status.Conditions, string(jobset.JobSetSuspended)); c != nil && c.LastTransitionTime.After(since) {
		since = c.LastTransitionTime.Time
	}
	return since, true
}

// Held reports whether the Pod still carries the group-member finalizer.
func Held(pod *corev1.Pod) bool {
	return slices.Contains(pod.Finalizers, jobset.GroupMemberFinalizer)
}

// LeftWhileRunning: the Pod finished Succeeded while being deleted, and
// the controller never saw it finish first (it would have released it):
// its worker was stopped, not done.
func LeftWhileRunning(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded && pod.DeletionTimestamp != nil && Held(pod)
}

// JobFailure returns the condition that says the Job failed: Failed, or
// FailureTarget, which the Job controller sets as soon as it decides the
// failure and keeps until the Job's Pods have terminated (only then comes
// Failed). Acting on FailureTarget lets the failure policy answer first:
// otherwise the Pods the Job controller deletes would look, to the epoch
// protocol, like members lost, and start a group restart.
func JobFailure(job *batchv1.Job) *batchv1.JobCondition {
	if c := JobCondition(job, batchv1.JobFailed); c != nil {
		return c
	}
	return JobCondition(job, batchv1.JobFailureTarget)
}

// JobCondition returns the Job's condition of type t if it is true.
func JobCondition(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		c := &job.Status.Conditions[i]
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// ParseIndexes reads a Job's status.completedIndexes ("1,3-5").
func ParseIndexes(list string) sets.Set[int] {
	out := sets.New[int]()
	for _, part := range strings.Split(list, ",") {
		first, last, isRange := strings.Cut(part, "-")
		from, err := strconv.Atoi(first)
		if err != nil {
			continue
		}
		to := from
		if isRange {
			if to, err = strconv.Atoi(last); err != nil {
				continue
			}
		}
		for i := from; i <= to; i++ {
			out.Insert(i)
		}
	}
	return out
}

// SnapshotOf reads the protocol's inputs for one in-place group: the Pods
// of its replicatedJobs of the current restart attempt, the expected Pod
// count (less the indexes the current Jobs count
// complete, from their status: the Pods that completed them may be gone)
// and the restart budget. A Pod shows a failure signal too when signs
// holds one seen at the epoch it shows (Tally.Signs). A Pod marked lost
// whose worker fenced reports (nil: none does) is not still running,
// though no kubelet reported it stopped.
func SnapshotOf(js *jobset.JobSet, g InPlaceGroup, pods []corev1.Pod, jobs []*batchv1.Job, signs map[string]string, fenced func(*corev1.Pod) bool) Snapshot {
	current, jobs := GroupChildren(g, CurrentAttempt(js, pods), jobs)
	s := Snapshot{
		Synced:       g.Synced,
		Deprecated:   g.Deprecated,
		Regathering:  g.Regathering(),
		RestartsUsed: RestartsUsed(js),
		MaxRestarts:  MaxRestarts(js),
	}
	for _, rj := range g.ReplicatedJobs {
		s.ExpectedPods += rj.Replicas * ptr.Deref(rj.Template.Spec.Parallelism, 1)
	}
	failurePolicies := map[string]*batchv1.PodFailurePolicy{}
	for i := range js.Spec.ReplicatedJobs {
		rj := &js.Spec.ReplicatedJobs[i]
		failurePolicies[rj.Name] = rj.Template.Spec.PodFailurePolicy
	}
	// A failed Job dooms its Pods: the Job controller deletes them next,
	// which must not look like members lost. So does a Pod whose failure
	// fails its Job, seen before the Job's own status. (Pod events arrive in
	// order, so the failed Pod's status is seen before its siblings'
	// deletion.)
	doomedJobs := map[string]bool{}
	completed := map[string]sets.Set[int]{}
	for _, job := range jobs {
		if JobFailure(job) != nil {
			doomedJobs[job.Name] = true
		}
		done := ParseIndexes(job.Status.CompletedIndexes)
		completed[job.Name] = done
		s.ExpectedPods -= int32(done.Len())
	}
	// Decide reads failure signals only in sync: while the group gathers,
	// a Pod's sign is not read, and its managedFields check costs more
	// than the rest of the snapshot.
	readsSignals := !Gathering(s.Synced, s.Deprecated, s.Regathering)
	s.Pods = make([]Pod, 0, len(current))
	for _, pod := range current {
		if EndsJob(pod, failurePolicies[pod.Labels[jobset.ReplicatedJobNameKey]]) {
			doomedJobs[pod.Labels[batchv1.JobNameLabel]] = true
		}
	}
	for _, pod := range current {
		job := pod.Labels[batchv1.JobNameLabel]
		index, err := strconv.Atoi(pod.Annotations[batchv1.JobCompletionIndexAnnotation])
		key := "" // unknown: a Pod the Job controller did not create
		if job != "" && err == nil {
			key = job + "/" + strconv.Itoa(index)
		}
		p := ReadPod(pod, readsSignals)
		if p.StillRunning && fenced != nil && fenced(pod) {
			p.StillRunning = false
		}
		p.Index, p.IndexComplete, p.EndsJob = key, key != "" && completed[job].Has(index), doomedJobs[job]
		if epoch, seen := signs[pod.Name]; readsSignals && p.FailureSignal == "" && seen && epoch == p.Epoch {
			p.FailureSignal = "its status showed a failure at epoch " + epoch + " (a kubelet write seen in an event, written over since)"
		}
		s.Pods = append(s.Pods, p)
	}
	return s
}

// ReadPod is what the protocol reads of a Pod by itself (its Index,
// IndexComplete and EndsJob need its Jobs): the one reading that both the
// epoch snapshot and the controller's Pod tally take. Its failure signal
// only when withSignal: reading it may decode the Pod's managedFields.
func ReadPod(pod *corev1.Pod, withSignal bool) Pod {
	marked := jobset.ControllerMark(pod) != nil
	p := Pod{
		Name:      pod.Name,
		Epoch:     pod.Annotations[jobset.EpochKey],
		Fenced:    pod.Annotations[agentspec.FencedAnnotation],
		Hung:      pod.Annotations[agentspec.HungAnnotation],
		Restarts:  pod.Annotations[agentspec.WorkerRestartsAnnotation],
		Succeeded: pod.Status.Phase == corev1.PodSucceeded,
		Failed:    pod.Status.Phase == corev1.PodFailed || marked,
		Deleting:  pod.DeletionTimestamp != nil,
		Left:      LeftWhileRunning(pod),
		Unheld:    !Held(pod),
	}
	p.StillRunning = marked && Stopping(pod)
	if withSignal {
		p.FailureSignal = FailureSignal(pod)
	}
	return p
}

// WhyNotJoined says, from its agent's state or its own, why a live Pod
// has not joined the epoch its group gathers at.
func WhyNotJoined(pod *corev1.Pod) string {
	if c := podCondition(pod, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse {
		return fmt.Sprintf("not scheduled: %s", c.Message)
	}
	i := sidecar.Index(pod.Spec)
	if i < 0 {
		return "it has no agent sidecar"
	}
	if sign := sidecar.CommunityAgentSign(pod.Spec.InitContainers[i]); sign != "" {
		return fmt.Sprintf("its agent is community JobSet's in-place restart agent (%s), which never joins this controller's groups: recreate the JobSet with this controller's agent (annotation %s: \"true\")",
			sign, jobset.InjectAgentKey)
	}
	var agent *corev1.ContainerStatus
	for j := range pod.Status.InitContainerStatuses {
		if pod.Status.InitContainerStatuses[j].Name == pod.Spec.InitContainers[i].Name {
			agent = &pod.Status.InitContainerStatuses[j]
		}
	}
	if agent == nil {
		return fmt.Sprintf("its agent has not started; the Pod is %s", pod.Status.Phase)
	}
	if last := agent.LastTerminationState.Terminated; last != nil && last.ExitCode == agentspec.ExitConfigError {
		return fmt.Sprintf("its agent exits with code %d, a configuration error, and has restarted %d times: see its log", last.ExitCode, agent.RestartCount)
	}
	switch {
	case agent.State.Waiting != nil:
		why := "its agent is waiting: " + agent.State.Waiting.Reason
		if agent.State.Waiting.Message != "" {
			why += ": " + agent.State.Waiting.Message
		}
		return why
	case agent.State.Terminated != nil:
		return fmt.Sprintf("its agent exited with code %d", agent.State.Terminated.ExitCode)
	case agent.RestartCount > 0:
		return fmt.Sprintf("its agent has restarted %d times without joining (it exits with code %d on a configuration error): see its log",
			agent.RestartCount, agentspec.ExitConfigError)
	default:
		return "its agent runs but has not written its Pod's epoch: a 403 in its log means the agent's Role or RoleBinding is missing in the namespace"
	}
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}
