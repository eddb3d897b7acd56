package jobsetcontroller

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// While an in-place group gathers (its first run, a group restart, the new
// Pods after a full restart or a resume), most of its Pod events cannot
// change the epoch decision: the kubelet's status writes while a Pod
// restarts, and every join but the last. inplace.Decide syncs only once
// every expected live Pod of the group has joined, and reads no failure
// signal while the group gathers. A reconcile reads every Pod of the
// JobSet, so reconciling those events cost the controller the Pods times
// the gather's length in CPU (14.7 ms a Pod at 5000 Pods in B2, 2.8 ms at
// 1000).
//
// The pod tally tells, at O(1) per event, the events that may change the
// decision from the rest: it follows each Pod of the JobSet from its
// events, and, while the last reconcile left the group gathering, counts
// the group's live Pods that have not joined the gather's epoch. An event
// may change the decision when it changes who is in the group (a Pod
// created, deleted, ended, being deleted or relabelled) or when it leaves
// no live Pod waiting. The reconcile that the others cause waits longer
// (pace.go), so a gather costs a few reconciles of every Pod, whatever
// its length. Nothing is decided from the tally: it only says when to
// look.

// gather is what a reconcile that left the group gathering publishes:
// the epoch its Pods gather at, and which Pods are the group's.
type gather struct {
	// jobSetUID and restarts name the JobSet's current restart attempt, as
	// its Pods' labels do (ofCurrentAttempt).
	jobSetUID, restarts string
	epoch               string
	// group holds the in-place group's replicatedJobs (inPlaceGroup).
	group sets.Set[string]
}

func (g *gather) equal(o *gather) bool {
	if g == nil || o == nil {
		return g == o
	}
	return g.jobSetUID == o.jobSetUID && g.restarts == o.restarts && g.epoch == o.epoch && g.group.Equal(o.group)
}

// podMark is what the tally keeps of one Pod: the labels that place it in
// an attempt and a replicatedJob, its epoch, and whether it is live (not
// ended, not being deleted), as epochSnapshot reads them.
type podMark struct {
	jobSetUID, restarts, replicatedJob string
	epoch                              string
	live                               bool
}

func markOf(pod *corev1.Pod) podMark {
	return podMark{
		jobSetUID:     pod.Labels[jobset.JobSetUIDKey],
		restarts:      pod.Labels[jobset.RestartsKey],
		replicatedJob: pod.Labels[jobset.ReplicatedJobNameKey],
		epoch:         pod.Annotations[jobset.EpochKey],
		live:          pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed,
	}
}

// podTally is one JobSet's: its Pods as their events showed them, and the
// gather its last reconcile published.
type podTally struct {
	pods   map[string]podMark // by Pod name
	gather *gather            // nil: not gathering, or not known
	// waiting counts the live Pods of the gather's attempt and group that
	// are not at its epoch.
	waiting int
}

func newPodTally() *podTally {
	return &podTally{pods: map[string]podMark{}}
}

// waits: the Pod keeps the published gather from syncing.
func (t *podTally) waits(m podMark) bool {
	g := t.gather
	return g != nil && m.live && m.jobSetUID == g.jobSetUID && m.restarts == g.restarts &&
		g.group.Has(m.replicatedJob) && m.epoch != g.epoch
}

// observe records a Pod's event (pod nil: the Pod is gone) and reports
// whether it may change the epoch decision.
func (t *podTally) observe(name string, pod *corev1.Pod) bool {
	before, known := t.pods[name]
	if known && t.waits(before) {
		t.waiting--
	}
	if pod == nil {
		delete(t.pods, name)
		return true
	}
	after := markOf(pod)
	t.pods[name] = after
	if t.waits(after) {
		t.waiting++
	}
	switch {
	case t.gather == nil || !known:
		return true
	case before.live != after.live || before.jobSetUID != after.jobSetUID || before.restarts != after.restarts ||
		before.replicatedJob != after.replicatedJob:
		return true
	case before.epoch != after.epoch:
		return t.waiting == 0
	}
	return false
}

// publish records the gather that the last reconcile left (nil when the
// group is not gathering). It reports whether the Pods' events already
// show no Pod waiting for a gather that is new: those events were
// weighed against the gather before it, so the reconcile must look again.
func (t *podTally) publish(g *gather) (lookAgain bool) {
	if t.gather.equal(g) {
		return false
	}
	t.gather, t.waiting = g, 0
	for _, m := range t.pods {
		if t.waits(m) {
			t.waiting++
		}
	}
	return g != nil && t.waiting == 0
}

// empty: the tally follows no Pod and no gather, and can be dropped.
func (t *podTally) empty() bool {
	return len(t.pods) == 0 && t.gather == nil
}
