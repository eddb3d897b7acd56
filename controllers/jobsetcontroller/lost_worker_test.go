package jobsetcontroller

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// TestLostWorkerMayRun: a Pod declared lost whose agent drives a worker
// wrapper is held as still running, its kubelet silent, until its agent
// confirms the stop of its epoch's worker or the bound from the mark (2 s
// for the deprecation to reach the agent, its fence of 15 s and a tick, the
// wrapper's 2 s grace and 1 s) has passed.
func TestLostWorkerMayRun(t *testing.T) {
	marked := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	wrapped := agentEnv(agentspec.EnvWrapperControl, agentspec.WrapperControl)
	lost := func(p *corev1.Pod) {
		p.Annotations = map[string]string{jobset.EpochKey: "3"}
		p.Status.Phase = corev1.PodFailed
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: ReasonNodeLost, LastTransitionTime: metav1.NewTime(marked)})
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: agentspec.ContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	}
	confirmed := func(epoch string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Annotations[agentspec.WorkerStoppedAnnotation] = epoch }
	}
	cases := []struct {
		name   string
		pod    corev1.Pod
		after  time.Duration
		mayRun bool
		left   time.Duration
	}{
		{"lost, wrapped, unconfirmed: held until the bound", memberOn("w", "dead", wrapped, lost), 5 * time.Second, true, 15250 * time.Millisecond},
		{"past the bound", memberOn("w", "dead", wrapped, lost), 21 * time.Second, false, 0},
		{"its agent confirmed the stop of its epoch", memberOn("w", "dead", wrapped, lost, confirmed("3")), 0, false, 0},
		{"a confirmation of an earlier epoch proves nothing of this one", memberOn("w", "dead", wrapped, lost, confirmed("2")), 0, true, 20250 * time.Millisecond},
		{"its kubelet reported every container stopped", memberOn("w", "dead", wrapped, lost, func(p *corev1.Pod) {
			p.Status.InitContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}
		}), 0, false, 0},
		{"never joined an epoch: its worker never passed the barrier", memberOn("w", "dead", wrapped, lost, func(p *corev1.Pod) { p.Annotations = nil }), 0, false, 0},
		{"no wrapper: only the kubelet stops it, and the node-loss bound is all there is", memberOn("w", "dead", lost), 0, false, 0},
		{"a longer fence makes a longer bound", memberOn("w", "dead", wrapped, lost, agentEnv(agentspec.EnvFenceAfterSeconds, "40")), 30 * time.Second, true, 15250 * time.Millisecond},
		{"not declared lost", memberOn("w", "dead", wrapped), 0, false, 0},
		{"its agent fences on its node's Lease: stopped before the mark, not held", memberOn("w", "dead", wrapped, lost, agentEnv(agentspec.EnvFenceNodeLease, "true")), 0, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mayRun, left := lostWorkerMayRun(&tc.pod, marked.Add(tc.after))
			if mayRun != tc.mayRun || left != tc.left {
				t.Errorf("lostWorkerMayRun = %t, %s; want %t, %s", mayRun, left, tc.mayRun, tc.left)
			}
		})
	}
}

// TestHoldLostWorkersKeepsTheGroupFromSyncing: the replacement of a lost
// Pod has joined the next epoch with the rest of the group; while the lost
// Pod's worker may still run (its kubelet down, its agent in contact but
// not yet confirmed), Decide must not sync; once confirmed, it syncs.
func TestHoldLostWorkersKeepsTheGroupFromSyncing(t *testing.T) {
	marked := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	old := memberOn("w-0-old", "dead", agentEnv(agentspec.EnvWrapperControl, agentspec.WrapperControl), func(p *corev1.Pod) {
		p.Annotations = map[string]string{jobset.EpochKey: "1"}
		p.Status.Phase = corev1.PodFailed
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: ReasonNodeLost, LastTransitionTime: metav1.NewTime(marked)}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	})
	snapshot := func() inplace.Snapshot {
		return inplace.Snapshot{Synced: 1, Deprecated: 1, ExpectedPods: 2, Pods: []inplace.Pod{
			{Name: "w-0-old", Index: "j/0", Epoch: "1", Failed: true},
			{Name: "w-0-new", Index: "j/0", Epoch: "2"},
			{Name: "w-1", Index: "j/1", Epoch: "2"},
		}}
	}
	s := snapshot()
	if lookAgain := holdLostWorkers(&s, []corev1.Pod{old}, marked.Add(time.Second)); lookAgain != 19250*time.Millisecond {
		t.Errorf("look again in %s, want 19.25s", lookAgain)
	}
	if d := inplace.Decide(s); d.Synced != 1 {
		t.Errorf("synced %d beside the lost Pod's worker that may still run, want 1 (held)", d.Synced)
	}
	old.Annotations[agentspec.WorkerStoppedAnnotation] = "1"
	s = snapshot()
	holdLostWorkers(&s, []corev1.Pod{old}, marked.Add(time.Second))
	if d := inplace.Decide(s); d.Synced != 2 {
		t.Errorf("synced %d once the agent confirmed its worker stopped, want 2", d.Synced)
	}
}
