package jobsetcontroller

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
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

// stalledGather reports a gather that has lasted threshold or longer: the
// message names the Pods that have not joined, and why. Otherwise it
// returns "" and, while the gather lasts, when to look again.
func stalledGather(js *jobset.JobSet, g inplace.InPlaceGroup, pods []*corev1.Pod, expected int32, now time.Time, threshold time.Duration) (report string, lookAgain time.Duration) {
	since, gathering := g.GatherStart(js)
	if !gathering || threshold <= 0 {
		return "", 0
	}
	if waited := now.Sub(since); waited < threshold {
		return "", threshold - waited
	}
	target := g.Synced + 1
	var waiting, stopping, unheld []string
	live := int32(0)
	group := g.Members
	for _, pod := range pods {
		if inplace.Stopping(pod) && group.Has(pod.Labels[jobset.ReplicatedJobNameKey]) {
			stopping = append(stopping, pod.Name)
		}
		if !inplace.Live(pod) {
			continue
		}
		live++
		if !inplace.Held(pod) && group.Has(pod.Labels[jobset.ReplicatedJobNameKey]) {
			unheld = append(unheld, pod.Name)
		}
		if e, err := agentspec.ParseEpoch(pod.Annotations[jobset.EpochKey]); err != nil || e != target {
			waiting = append(waiting, fmt.Sprintf("%s (%s)", pod.Name, inplace.WhyNotJoined(pod)))
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

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}
