package jobsetcontroller

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// A gather (the Pods joining the next epoch: the first run, a group restart,
// the new Pods after a full restart or a resume) waits for every Pod's
// agent. One agent that cannot join keeps the whole group waiting, and
// nothing else says so: an agent with a configuration error exits 2 and
// restarts its Pod in place forever; one without RBAC retries its 403s.
// Past a threshold, the GatherStalled condition names the Pods that have
// not joined and why, and an event says it once.

// DefaultGatherStallThreshold is how long a gather may take before it is
// reported: far above a group restart's seconds, below what a user waits
// before looking.
const DefaultGatherStallThreshold = 5 * time.Minute

// WithGatherStallThreshold sets how long a gather may take before the
// GatherStalled condition reports it.
func WithGatherStallThreshold(d time.Duration) Option {
	return func(r *Reconciler) { r.gatherStallThreshold = d }
}

// gatherStart returns since when the JobSet's Pods have been gathering at
// the epoch after the synced one, or false when they are not.
func gatherStart(js *jobset.JobSet) (time.Time, bool) {
	if c := meta.FindStatusCondition(js.Status.Conditions, string(jobset.JobSetInPlaceRestarting)); c != nil {
		// True from a group restart's start, or from a full restart or a
		// suspension, until the next sync.
		return c.LastTransitionTime.Time, c.Status == metav1.ConditionTrue
	}
	if ptr.Deref(js.Status.SyncedEpoch, 0) > 0 {
		return time.Time{}, false
	}
	// The first gather, from the JobSet's creation or its last resume.
	since := js.CreationTimestamp.Time
	if c := meta.FindStatusCondition(js.Status.Conditions, string(jobset.JobSetSuspended)); c != nil && c.LastTransitionTime.After(since) {
		since = c.LastTransitionTime.Time
	}
	return since, true
}

// stalledGather reports a gather that has lasted threshold or longer: the
// message names the Pods that have not joined, and why. Otherwise it
// returns "" and, while the gather lasts, when to look again.
func stalledGather(js *jobset.JobSet, pods []*corev1.Pod, expected int32, now time.Time, threshold time.Duration) (report string, lookAgain time.Duration) {
	since, gathering := gatherStart(js)
	if !gathering || threshold <= 0 {
		return "", 0
	}
	if waited := now.Sub(since); waited < threshold {
		return "", threshold - waited
	}
	target := ptr.Deref(js.Status.SyncedEpoch, 0) + 1
	var waiting, stopping, unheld []string
	live := int32(0)
	_, group := inPlaceGroup(js)
	for _, pod := range pods {
		if inplace.Stopping(pod) && group.Has(pod.Labels[jobset.ReplicatedJobNameKey]) {
			stopping = append(stopping, pod.Name)
		}
		if !inplace.Live(pod) {
			continue
		}
		live++
		if !holdsMember(pod) && group.Has(pod.Labels[jobset.ReplicatedJobNameKey]) {
			unheld = append(unheld, pod.Name)
		}
		if e, err := agentspec.ParseEpoch(pod.Annotations[jobset.EpochKey]); err != nil || e != target {
			waiting = append(waiting, fmt.Sprintf("%s (%s)", pod.Name, whyNotJoined(pod)))
		}
	}
	missing := expected - live
	if len(waiting) == 0 && missing <= 0 && len(stopping) == 0 && len(unheld) == 0 {
		return "", 0
	}
	report = fmt.Sprintf("the Pods have been gathering at epoch %d for %s", target, now.Sub(since).Round(time.Second))
	if len(waiting) > 0 {
		report += fmt.Sprintf("; %d of %d have not joined: %s", len(waiting), live, boundedList(waiting, len(waiting)))
	}
	if missing > 0 {
		report += fmt.Sprintf("; %d expected Pods do not exist (see the Jobs' events)", missing)
	}
	if len(stopping) > 0 {
		report += fmt.Sprintf("; %d are being deleted or were marked Failed and have not stopped, and the group syncs only once they have (their workers may run an older epoch): %s",
			len(stopping), boundedList(stopping, len(stopping)))
	}
	if len(unheld) > 0 {
		report += fmt.Sprintf("; %d do not carry the finalizer %s, which the controller adds to every member before the group syncs (see its log: can it patch Pods?): %s",
			len(unheld), jobset.GroupMemberFinalizer, boundedList(unheld, len(unheld)))
	}
	return report, 0
}

// whyNotJoined says, from its agent's state or its own, why a live Pod has
// not joined.
func whyNotJoined(pod *corev1.Pod) string {
	if c := podCondition(pod, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse {
		return fmt.Sprintf("not scheduled: %s", c.Message)
	}
	i := sidecar.Index(pod.Spec)
	if i < 0 {
		return "it has no agent sidecar"
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
