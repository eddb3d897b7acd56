package inplace

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

func TestRestartTiers(t *testing.T) {
	synced := time.Date(2026, 11, 29, 12, 0, 0, 400_000_000, time.UTC)
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(synced.Truncate(time.Second).Add(d)) }
	pod := func(created time.Duration, statuses ...corev1.ContainerStatus) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: at(created)},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: statuses}}
	}
	restarted := func(name string, n int32, ended time.Duration) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, RestartCount: n,
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 88, FinishedAt: at(ended)}}}
	}
	failed := pod(-time.Hour, restarted("worker", 1, time.Second))
	failed.Status.Phase = corev1.PodFailed
	marked := pod(-time.Hour, restarted("worker", 1, time.Second))
	marked.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: jobset.PodReasonNodeLost}}

	for name, tc := range map[string]struct {
		pods []*corev1.Pod
		want Tiers
	}{
		"containers kept running: the worker's process restarted": {
			pods: []*corev1.Pod{pod(-time.Hour, corev1.ContainerStatus{Name: "worker"}), pod(-time.Hour)},
			want: Tiers{Process: 2},
		},
		"the kubelet restarted its containers since the sync (the failing Pod's, before the controller saw it, too)": {
			pods: []*corev1.Pod{pod(-time.Hour, restarted("worker", 2, 2*time.Second))},
			want: Tiers{Pod: 1},
		},
		"a container restart in the sync's own second belongs to the restart before": {
			pods: []*corev1.Pod{pod(-time.Hour, restarted("worker", 1, 500*time.Millisecond))},
			want: Tiers{Process: 1},
		},
		"a container restart before the sync does not count": {
			pods: []*corev1.Pod{pod(-time.Hour, restarted("worker", 1, -time.Minute))},
			want: Tiers{Process: 1},
		},
		"the agent's own restart is not the Pod's": {
			pods: []*corev1.Pod{pod(-time.Hour, restarted(agentspec.ContainerName, 1, time.Second))},
			want: Tiers{Process: 1},
		},
		"created since, nothing restarted: a replacement": {
			pods: []*corev1.Pod{pod(3 * time.Second)},
			want: Tiers{Replaced: 1},
		},
		"created in the sync's own second: older": {
			pods: []*corev1.Pod{pod(0)},
			want: Tiers{Process: 1},
		},
		"Pods no longer live are not members": {
			pods: []*corev1.Pod{failed, marked, pod(-time.Hour)},
			want: Tiers{Process: 1},
		},
	} {
		t.Run(name, func(t *testing.T) {
			if got := RestartTiers(tc.pods, synced); got != tc.want {
				t.Errorf("RestartTiers = %+v, want %+v", got, tc.want)
			}
		})
	}
}
