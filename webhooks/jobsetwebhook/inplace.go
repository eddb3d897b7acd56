package jobsetwebhook

import (
	"fmt"
	"math"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

const inPlaceDoc = "see docs/user-guide.md"

// validateInPlaceRestart checks what restartStrategy InPlaceRestart relies
// on in every replicatedJob.
func validateInPlaceRestart(js *jobset.JobSet) field.ErrorList {
	var errs field.ErrorList
	if sp := js.Spec.StartupPolicy; sp != nil && sp.StartupPolicyOrder == jobset.InOrder {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "startupPolicy", "startupPolicyOrder"),
			"InOrder cannot be used with restartStrategy InPlaceRestart: the agents' barrier waits for every Pod of the JobSet, and InOrder creates later Jobs only once earlier ones are ready, so neither would ever start; use AnyOrder"))
	}
	for i, rj := range js.Spec.ReplicatedJobs {
		path := field.NewPath("spec", "replicatedJobs").Index(i)
		if len(rj.DependsOn) > 0 {
			errs = append(errs, field.Forbidden(path.Child("dependsOn"),
				"dependsOn cannot be used with restartStrategy InPlaceRestart: the agents' barrier waits for every Pod of the JobSet, including those of Jobs that dependsOn holds back, so neither would ever start; remove dependsOn"))
		}
		spec := rj.Template.Spec
		specPath := path.Child("template", "spec")
		if v := ptr.Deref(spec.BackoffLimit, 6); v != math.MaxInt32 {
			errs = append(errs, field.Invalid(specPath.Child("backoffLimit"), v,
				"must be 2147483647 with restartStrategy InPlaceRestart, so that a failed Pod is replaced alone instead of failing its Job; leave it unset and it is defaulted"))
		}
		if v := ptr.Deref(spec.PodReplacementPolicy, ""); v != batchv1.Failed {
			errs = append(errs, field.NotSupported(specPath.Child("podReplacementPolicy"), v, []batchv1.PodReplacementPolicy{batchv1.Failed}))
		}
		if c, p := ptr.Deref(spec.Completions, 1), ptr.Deref(spec.Parallelism, 1); c != p {
			errs = append(errs, field.Invalid(specPath.Child("completions"), c,
				fmt.Sprintf("must equal parallelism (%d) with restartStrategy InPlaceRestart: the group restarts together, so every Pod runs at once", p)))
		}
		errs = append(errs, validateAgent(spec.Template.Spec, specPath.Child("template", "spec"))...)
	}
	return errs
}

// validateAgent finds the agent sidecar: an init container with
// restartPolicy Always and a RestartAllContainers rule, with its required
// environment.
func validateAgent(pod corev1.PodSpec, path *field.Path) field.ErrorList {
	i := sidecar.Index(pod)
	if i < 0 {
		return field.ErrorList{field.Required(path.Child("initContainers"),
			"restartStrategy InPlaceRestart needs the agent sidecar in every Pod: an init container with restartPolicy Always and a restartPolicyRules entry {action: RestartAllContainers, exitCodes: {operator: NotIn, values: [0]}}; "+inPlaceDoc)}
	}
	var errs field.ErrorList
	c := pod.InitContainers[i]
	for _, name := range agentspec.RequiredEnv {
		if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name }) {
			errs = append(errs, field.Required(path.Child("initContainers").Index(i).Child("env"),
				fmt.Sprintf("the agent needs %s from the downward API; %s", name, inPlaceDoc)))
		}
	}
	return errs
}

// Warnings lists likely mistakes that admission lets through.
func Warnings(js *jobset.JobSet) []string {
	if jobset.RestartStrategyOf(js) != jobset.InPlaceRestart {
		return nil
	}
	var warnings []string
	for i, rj := range js.Spec.ReplicatedJobs {
		pod := rj.Template.Spec.Template.Spec
		path := field.NewPath("spec", "replicatedJobs").Index(i).Child("template", "spec", "template", "spec")
		if a := sidecar.Index(pod); a >= 0 && pod.InitContainers[a].StartupProbe == nil {
			warnings = append(warnings, fmt.Sprintf("%s: the agent has no startupProbe, so workers start before the group is in sync; probe %s on port %d",
				path.Child("initContainers").Index(a), agentspec.DefaultBarrierPath, agentspec.DefaultBarrierPort))
		}
		for j, c := range pod.Containers {
			if !sidecar.HasRestartAllRule(c) {
				warnings = append(warnings, fmt.Sprintf("%s: container %q has no RestartAllContainers rule, so its failure does not restart its Pod in place (add {action: RestartAllContainers, exitCodes: {operator: NotIn, values: [0]}})",
					path.Child("containers").Index(j), c.Name))
			}
		}
	}
	return warnings
}
