package jobsetwebhook

import (
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// wantsAgent: the JobSet opted in to injection.
func wantsAgent(js *jobset.JobSet) bool {
	return jobset.RestartStrategyOf(js) == jobset.InPlaceRestart && js.Annotations[jobset.InjectAgentKey] == "true"
}

// InjectAgent adds to every Pod template that has no agent yet the agent
// sidecar exactly as docs/user-guide.md shows it, and to every container
// without restart rules of its own a RestartAllContainers rule for the
// non-zero exits that its Job's podFailurePolicy does not map to FailJob.
// Initializers and launchers stay outside the in-place group (injectable).
func InjectAgent(js *jobset.JobSet, o sidecar.Options) {
	for i := range js.Spec.ReplicatedJobs {
		if injectable(js, js.Spec.ReplicatedJobs[i]) {
			sidecar.Inject(&js.Spec.ReplicatedJobs[i].Template.Spec, o)
		}
	}
}
