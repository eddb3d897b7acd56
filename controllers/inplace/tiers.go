package inplace

import (
	"fmt"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// A group restart brings each member back in one of three ways, which
// cost very different times: its worker's process restarted inside
// containers that kept running (the process tier), its containers
// restarted by the kubelet (the Pod tier, or an escalation to it), or a
// new Pod (a replacement). A process-tier restart leaves no trace in the
// Pod's status (no restartCount moves), so each agent reports how its Pod
// joined (agentspec.WorkerRestartsAnnotation), and the controller says
// how the members came back in the completion's event and a metric.
//
// The reports are informational: Decide never reads them, and nothing the
// protocol decides may depend on them. The admission policy checks their
// grammar and epoch, not their truth.

// Tiers counts the members of a synced epoch by the way they came back
// from the group restart that led there.
type Tiers struct {
	Process  int32 `json:"process"`
	Pod      int32 `json:"pod"`
	Replaced int32 `json:"replaced"`
	// Unreported members carry no report of their join of the epoch (an
	// agent of an earlier version, one without a state directory, or one
	// whose report the API server denied).
	Unreported int32 `json:"unreported,omitempty"`
}

// String is how a completion's note says it (WithTiers).
func (t Tiers) String() string {
	s := fmt.Sprintf("%d by restarting the worker's process, %d by restarting its containers, %d replaced", t.Process, t.Pod, t.Replaced)
	if t.Unreported > 0 {
		s += fmt.Sprintf(", %d unreported", t.Unreported)
	}
	return s
}

// RestartTiers sorts the live members of s at epoch synced by the way
// their agents report they joined it.
func RestartTiers(s Snapshot, synced int32) Tiers {
	var t Tiers
	for _, p := range s.Pods {
		if !p.live() || !p.at(synced) {
			continue
		}
		r, err := agentspec.ParseWorkerRestarts(p.Restarts)
		switch {
		case err != nil || r.Epoch != synced:
			t.Unreported++
		case r.Tier == agentspec.TierProcess:
			t.Process++
		case r.Tier == agentspec.TierPod:
			t.Pod++
		default:
			t.Replaced++
		}
	}
	return t
}
