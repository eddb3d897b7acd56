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
// way they came back from the group restart that followed the group's last
// sync, at lastSync: one with a regular container that the kubelet
// restarted since had its containers restarted; one created since, none of
// its containers restarted, is a replacement; any other kept its
// containers running and restarted its worker's process. The reference is
// the sync, not the restart's start: a failing member's containers may
// have ended and restarted before the controller saw anything. The API's
// times are to the second: what happened in the sync's own second counts
// as before it (a restart of the one before ends just before its sync).
func RestartTiers(pods []*corev1.Pod, lastSync time.Time) Tiers {
	lastSync = lastSync.Truncate(time.Second)
	var t Tiers
	for _, pod := range pods {
		if !Live(pod) {
			continue
		}
		switch {
		case containersRestartedAfter(pod, lastSync):
			t.Pod++
		case pod.CreationTimestamp.Truncate(time.Second).After(lastSync):
			t.Replaced++
		default:
			t.Process++
		}
	}
	return t
}

// containersRestartedAfter: a regular container of the Pod other than the
// agent was restarted by the kubelet after t (its last run ended then).
func containersRestartedAfter(pod *corev1.Pod, t time.Time) bool {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == agentspec.ContainerName || s.RestartCount == 0 {
			continue
		}
		if ended := s.LastTerminationState.Terminated; ended != nil && ended.FinishedAt.Truncate(time.Second).After(t) {
			return true
		}
	}
	return false
}
