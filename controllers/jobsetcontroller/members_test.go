package jobsetcontroller

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

func TestReleasable(t *testing.T) {
	running := func() *jobset.JobSet {
		js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		js.UID = "uid-1"
		js.Status.Restarts = 2
		return js
	}
	job := func(mutate ...func(*batchv1.Job)) map[string]*batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "js-workers-0"}}
		for _, m := range mutate {
			m(j)
		}
		return map[string]*batchv1.Job{j.Name: j}
	}
	now := metav1.Now()
	// member: Pod at index 1 of the current attempt, running, holding the
	// group-member finalizer (and the Job's tracking one).
	member := func(mutate ...func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: "js-workers-0-1",
				UID:  "pod-uid",
				Labels: map[string]string{
					jobset.JobSetUIDKey: "uid-1", jobset.RestartsKey: "2", batchv1.JobNameLabel: "js-workers-0",
				},
				Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: "1"},
				Finalizers:  []string{jobset.GroupMemberFinalizer, batchv1.JobTrackingFinalizer},
			},
			Spec:   corev1.PodSpec{NodeName: "node-a"},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		}
		for _, m := range mutate {
			m(p)
		}
		return p
	}
	deleted := func(p *corev1.Pod) { p.DeletionTimestamp = &now }
	succeeded := func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }
	accounted := func(p *corev1.Pod) { p.Finalizers = []string{jobset.GroupMemberFinalizer} }
	indexOneComplete := func(j *batchv1.Job) { j.Status.CompletedIndexes = "0-1" }
	declaredLost := func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: ReasonNodeLost})
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
		p.DeletionTimestamp = &now
	}
	stopped := func(p *corev1.Pod) {
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137}}
	}
	withAgent := func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{sidecar.Container(sidecar.Options{Image: "agent"})}
	}
	markedAgo := func(d time.Duration) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			mark := &p.Status.Conditions[len(p.Status.Conditions)-1]
			mark.LastTransitionTime = metav1.NewTime(now.Add(-d))
		}
	}
	// silentFor: node-a has not renewed its Lease for that long.
	silentFor := func(d time.Duration) nodeLoss {
		return nodeLoss{threshold: DefaultNodeLossThreshold, silence: func(node string) (time.Duration, time.Duration, bool) {
			return d, 10 * time.Second, node == "node-a"
		}}
	}

	cases := []struct {
		name string
		js   *jobset.JobSet
		pod  *corev1.Pod
		jobs map[string]*batchv1.Job
		want bool
	}{
		{"a running member is held", running(), member(), job(), false},
		{"a member deleted while it runs is held until it ends", running(), member(deleted), job(), false},
		{"a member seen to finish before any deletion is done", running(), member(succeeded), job(), true},
		{"a failed member is done: its Job replaces it", running(), member(func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }, deleted), job(), true},
		{"a deleted member that never scheduled ran no worker", running(), member(deleted, func(p *corev1.Pod) { p.Spec.NodeName = "" }), job(), true},
		{"left while running, its Job has not accounted for it yet", running(), member(deleted, succeeded), job(indexOneComplete), false},
		{"left while running, its Job counted the index complete: held for the full restart", running(), member(deleted, succeeded, accounted), job(indexOneComplete), false},
		{"left while running, its Job counted it failed (a replacement comes)", running(), member(deleted, succeeded, accounted), job(), true},
		// The Job controller records a finished Pod in
		// uncountedTerminatedPods, then removes its tracking finalizer,
		// then moves it to completedIndexes: in between, neither says
		// the index is complete.
		{"left while running, its Job has it among the uncounted succeeded Pods", running(), member(deleted, succeeded, accounted), job(func(j *batchv1.Job) {
			j.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"pod-uid"}}
		}), false},
		{"left while running, its Job has it among the uncounted failed Pods", running(), member(deleted, succeeded, accounted), job(func(j *batchv1.Job) {
			j.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Failed: []types.UID{"pod-uid"}}
		}), false},
		{"a Pod of an earlier attempt", running(), member(deleted, succeeded, func(p *corev1.Pod) { p.Labels[jobset.RestartsKey] = "1" }), job(indexOneComplete), true},
		{"a Pod of an earlier JobSet of the same name", running(), member(func(p *corev1.Pod) { p.Labels[jobset.JobSetUIDKey] = "uid-0" }), job(), true},
		{"a Pod whose Job is being deleted", running(), member(), job(func(j *batchv1.Job) { j.DeletionTimestamp = &now }), true},
		{"a Pod whose Job is gone", running(), member(), nil, true},
		// A suspension stops the workers: one that exits 0 did not finish.
		{"a Pod whose Job is suspended, left while running and counted complete: held for the full restart", running(), member(deleted, succeeded, accounted), job(indexOneComplete, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) }), false},
		{"a Pod whose Job is suspended, stopped and failed", running(), member(deleted, func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }), job(func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) }), true},
		{"the JobSet is gone", nil, member(), job(), true},
		{"the JobSet is being deleted", func() *jobset.JobSet { js := running(); js.DeletionTimestamp = &now; return js }(), member(), job(), true},
		{"the JobSet finished", func() *jobset.JobSet {
			js := running()
			js.Status.Conditions = []metav1.Condition{{Type: string(jobset.JobSetCompleted), Status: metav1.ConditionTrue}}
			return js
		}(), member(deleted, succeeded), job(indexOneComplete), true},
		{"the JobSet is suspended: a member it stopped that exited 0 is held", func() *jobset.JobSet { js := running(); js.Spec.Suspend = ptr.To(true); return js }(), member(deleted, succeeded), job(indexOneComplete), false},
		{"the JobSet uses Recreate: no group to keep", func() *jobset.JobSet {
			js := running()
			js.Spec.FailurePolicy.RestartStrategy = jobset.Recreate
			return js
		}(), member(deleted, succeeded), job(indexOneComplete), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := releasable(tc.js, tc.pod, tc.jobs, func(*corev1.Pod) bool { return true }, nodeLoss{}, now.Time); got != tc.want {
				t.Errorf("releasable = %v, want %v", got, tc.want)
			}
		})
	}
	lostCases := []struct {
		name string
		js   *jobset.JobSet
		pod  *corev1.Pod
		jobs map[string]*batchv1.Job
		want bool
		loss nodeLoss
	}{
		// Declared lost, it counts among the JobSet's silent nodes while
		// it may run (nodeLoss.sharedSilence), so it stays readable.
		{"declared lost, on a node still silent, not reported stopped: held", running(), member(declaredLost), job(), false, silentFor(time.Minute)},
		{"declared lost, of an earlier attempt, on a node still silent: held", running(), member(declaredLost, func(p *corev1.Pod) { p.Labels[jobset.RestartsKey] = "1" }), job(), false, silentFor(time.Minute)},
		{"declared lost, its kubelet reported it stopped", running(), member(declaredLost, stopped), job(), true, silentFor(time.Minute)},
		{"declared lost, its node renews again: its kubelet stops it", running(), member(declaredLost), job(), true, silentFor(2 * time.Second)},
		{"declared lost, its node gone", running(), member(declaredLost, func(p *corev1.Pod) { p.Spec.NodeName = "node-gone" }), job(), true, silentFor(time.Minute)},
		// Its agent may have vouched for a silent peer, unseen: it counts
		// until its witness bound (nodeLoss.mayVouchUnseen).
		{"declared lost a minute ago, its node renews again and its kubelet reported it stopped: held for its agent's promises",
			running(), member(withAgent, declaredLost, stopped, markedAgo(time.Minute)), job(), false, silentFor(2 * time.Second)},
		{"declared lost past its witness bound, its kubelet reported it stopped",
			running(), member(withAgent, declaredLost, stopped, markedAgo(11*time.Minute)), job(), true, silentFor(2 * time.Second)},
	}
	for _, tc := range lostCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := releasable(tc.js, tc.pod, tc.jobs, func(*corev1.Pod) bool { return true }, tc.loss, now.Time); got != tc.want {
				t.Errorf("releasable = %v, want %v", got, tc.want)
			}
		})
	}
}

// A member marked lost is held until its Job created its replacement: the
// Pod webhook keeps the replacement off the lost node by the mark it reads
// on this Pod, which a deletion with no grace period would otherwise
// remove first.
func TestReleasesHoldAPodMarkedLostUntilItsReplacementExists(t *testing.T) {
	js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
	js.UID = "uid-1"
	created := metav1.NewTime(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	pod := func(name, index string, age time.Duration, mutate ...func(*corev1.Pod)) corev1.Pod {
		p := corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created.Add(age)),
				Labels:      map[string]string{jobset.JobSetUIDKey: "uid-1", jobset.RestartsKey: "0", batchv1.JobNameLabel: "js-workers-0"},
				Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: index},
				Finalizers:  []string{jobset.GroupMemberFinalizer}},
			Spec:   corev1.PodSpec{NodeName: "node-a"},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		}
		for _, m := range mutate {
			m(&p)
		}
		return p
	}
	lost := func(p *corev1.Pod) {
		p.Status.Phase, p.DeletionTimestamp, p.DeletionGracePeriodSeconds = corev1.PodFailed, &metav1.Time{Time: created.Add(time.Hour)}, ptr.To[int64](0)
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: ReasonNodeLost}}
	}
	failed := func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }
	cases := map[string]struct {
		pods      []corev1.Pod
		want      []string
		suspended bool
	}{
		"marked lost, not replaced yet: held": {[]corev1.Pod{pod("w-1-a", "1", 0, lost), pod("w-0", "0", time.Hour)}, nil, false},
		"marked lost, its replacement exists": {[]corev1.Pod{pod("w-1-a", "1", 0, lost), pod("w-1-b", "1", time.Hour)}, []string{"w-1-a"}, false},
		"marked lost, only an older Pod of its index": {[]corev1.Pod{pod("w-1-a", "1", 0, lost), pod("w-1-0", "1", -time.Hour, failed)},
			[]string{"w-1-0"}, false},
		"marked lost with no index: nothing would tell its replacement": {[]corev1.Pod{pod("w-1-a", "", 0, lost)}, []string{"w-1-a"}, false},
		"failed otherwise: released at once":                            {[]corev1.Pod{pod("w-1-a", "1", 0, failed)}, []string{"w-1-a"}, false},
		"marked lost, its Job suspended: no replacement comes, released": {[]corev1.Pod{pod("w-1-a", "1", 0, lost), pod("w-0", "0", time.Hour)},
			[]string{"w-1-a"}, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			jobs := []*batchv1.Job{{ObjectMeta: metav1.ObjectMeta{Name: "js-workers-0"}, Spec: batchv1.JobSpec{Suspend: ptr.To(tc.suspended)}}}
			release, _ := releases(js, tc.pods, jobs, nodeLoss{}, time.Now())
			var got []string
			for _, p := range release {
				got = append(got, p.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("released %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLostIndexDecision(t *testing.T) {
	js := func(synced, deprecated, inPlaceRestarts int32) *jobset.JobSet {
		js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).MaxRestarts(2).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		js.Status.SyncedEpoch, js.Status.DeprecatedEpoch = ptr.To(synced), ptr.To(deprecated)
		js.Status.InPlaceRestarts = inPlaceRestarts
		return js
	}
	cases := []struct {
		name    string
		js      *jobset.JobSet
		kind    decisionKind
		counts  bool
		message string
	}{
		{"the deletion's group restart already counted: escalated, not counted again", js(1, 1, 1), restartJobSet, false, "counts once"},
		{"no reconcile saw the group restart start: the full restart counts", js(1, 0, 0), restartJobSet, true, "restart 1 of 2"},
		{"no restart left: the JobSet fails, saying why", js(1, 0, 2), failJobSet, false, "used all 2 restarts"},
		{"stopped by a suspension: not counted, whatever the budget", func() *jobset.JobSet { s := js(1, 0, 2); s.Spec.Suspend = ptr.To(true); return s }(), restartJobSet, false, "the JobSet is suspended"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := lostIndexDecision(tc.js, inplace.DefaultGroup(tc.js), "Pod w-1 was deleted while its worker ran")
			if d.kind != tc.kind || d.countsTowardMax != tc.counts {
				t.Errorf("decision %v (counts %v), want %v (counts %v)", d.kind, d.countsTowardMax, tc.kind, tc.counts)
			}
			if !strings.Contains(d.message, "Pod w-1 was deleted") || !strings.Contains(d.message, tc.message) {
				t.Errorf("message %q should name the Pod and say %q", d.message, tc.message)
			}
		})
	}
}
