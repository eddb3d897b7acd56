package jobsetcontroller

import (
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// startupGate says which replicatedJobs may have their Jobs created now:
// with startupPolicy InOrder, each once every earlier one has started (all
// its Jobs ready or succeeded); with dependsOn, each once the replicatedJobs
// it depends on reached the status asked (Ready: every Job ready, succeeded
// or failed; Complete: every Job succeeded). inOrderPending is true while an
// InOrder startup has replicatedJobs still to start.
func startupGate(js *jobset.JobSet, status []jobset.ReplicatedJobStatus) (allowed map[string]bool, inOrderPending bool) {
	byName := map[string]jobset.ReplicatedJobStatus{}
	for _, s := range status {
		byName[s.Name] = s
	}
	replicas := map[string]int32{}
	for _, rj := range js.Spec.ReplicatedJobs {
		replicas[rj.Name] = rj.Replicas
	}
	started := func(name string) bool {
		s := byName[name]
		return s.Ready+s.Succeeded >= replicas[name]
	}
	reached := func(d jobset.DependsOn) bool {
		s := byName[d.Name]
		if d.Status == jobset.DependencyComplete {
			return s.Succeeded >= replicas[d.Name]
		}
		return s.Ready+s.Succeeded+s.Failed >= replicas[d.Name]
	}

	inOrder := js.Spec.StartupPolicy != nil && js.Spec.StartupPolicy.StartupPolicyOrder == jobset.InOrder
	allowed = map[string]bool{}
	earlierStarted := true
	for _, rj := range js.Spec.ReplicatedJobs {
		ok := !inOrder || earlierStarted
		for _, d := range rj.DependsOn {
			ok = ok && reached(d)
		}
		allowed[rj.Name] = ok
		if inOrder && !started(rj.Name) {
			earlierStarted = false
			inOrderPending = true
		}
	}
	return allowed, inOrderPending
}
