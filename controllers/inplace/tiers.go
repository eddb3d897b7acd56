package inplace

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// A group restart brings each member back in one of three ways, which
// cost very different times: its worker's process restarted inside
// containers that kept running (the process tier), its containers
// restarted by the kubelet (the Pod tier, or an escalation to it), or a
// new Pod (a replacement). A process-tier restart leaves no trace in the
// Pod's status (no restartCount moves), so the controller says which way
// each member came back, in the completion's event and a metric.

// Tiers counts the members of a synced epoch by the way they came back
// from the group restart that led there.
type Tiers struct {
	Process  int32 `json:"process"`
	Pod      int32 `json:"pod"`
	Replaced int32 `json:"replaced"`
}

func (t Tiers) String() string {
	return fmt.Sprintf("%d by restarting the worker's process, %d by restarting its containers, %d replaced", t.Process, t.Pod, t.Replaced)
}

// RestartTiers sorts the live Pods of pods (the current attempt's) by the
// way they came back from a group restart that started at started: one
// with a regular container that the kubelet restarted since had its
// containers restarted; one created since, none of its containers
// restarted, is a replacement; any other kept its containers running and
// restarted its worker's process. The API's times are to the second: a
// container that ended in the restart's first second counts as restarted
// by it, a Pod created in that second as older.
func RestartTiers(pods []*corev1.Pod, started time.Time) Tiers {
	started = started.Truncate(time.Second)
	var t Tiers
	for _, pod := range pods {
		if !Live(pod) {
			continue
		}
		switch {
		case containersRestartedSince(pod, started):
			t.Pod++
		case pod.CreationTimestamp.After(started):
			t.Replaced++
		default:
			t.Process++
		}
	}
	return t
}

// containersRestartedSince: a regular container of the Pod other than the
// agent was restarted by the kubelet since started (its last run ended
// then).
func containersRestartedSince(pod *corev1.Pod, started time.Time) bool {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == agentspec.ContainerName || s.RestartCount == 0 {
			continue
		}
		if ended := s.LastTerminationState.Terminated; ended != nil && !ended.FinishedAt.Time.Before(started) {
			return true
		}
	}
	return false
}
