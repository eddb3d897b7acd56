package jobsetwebhook

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

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
//
// With the agent, it puts the worker wrapper in place where
// sidecar.WorkerToWrap finds the worker and the JobSet does not opt out
// (wantsWrapper). Only with the agent: a template that has its agent
// already, injected by an earlier webhook or written by hand, is left as
// it is, so that injection stays idempotent and an update never changes
// a stored template.
func InjectAgent(js *jobset.JobSet, o sidecar.Options) {
	for i := range js.Spec.ReplicatedJobs {
		rj := &js.Spec.ReplicatedJobs[i]
		if !injectable(js, *rj) {
			continue
		}
		pod := &rj.Template.Spec.Template.Spec
		hadAgent := sidecar.Index(*pod) >= 0
		sidecar.Inject(&rj.Template.Spec, o)
		if !hadAgent && wantsWrapper(js, *rj) {
			sidecar.InjectWrapper(pod, o)
		}
	}
}

// wantsWrapper: neither the JobSet nor the replicatedJob's Pod template
// opts out of the worker wrapper.
func wantsWrapper(js *jobset.JobSet, rj jobset.ReplicatedJob) bool {
	return js.Annotations[jobset.WorkerWrapperKey] != "false" &&
		rj.Template.Spec.Template.Annotations[jobset.WorkerWrapperKey] != "false"
}

// wrapperWarnings: an injected agent whose worker injection could not
// wrap, although the JobSet did not opt out, so that the user learns why
// the Pods restart through the kubelet alone and how to change it.
func wrapperWarnings(js *jobset.JobSet) []string {
	if !wantsAgent(js) {
		return nil
	}
	var warnings []string
	for i, rj := range js.Spec.ReplicatedJobs {
		pod := rj.Template.Spec.Template.Spec
		if sidecar.Index(pod) < 0 || sidecar.Wrapped(pod) || !wantsWrapper(js, rj) {
			continue
		}
		if _, why := sidecar.WorkerToWrap(pod); why != "" {
			path := field.NewPath("spec", "replicatedJobs").Index(i).Child("template", "spec", "template", "spec", "containers")
			warnings = append(warnings, fmt.Sprintf("%s: no worker wrapper: %s; without it, only the kubelet stops the worker when the group restarts. To keep the Pod tier on purpose, annotate the JobSet %s: \"false\" (%s)",
				path, why, jobset.WorkerWrapperKey, inPlaceDoc))
		}
	}
	return warnings
}
