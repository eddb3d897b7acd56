package jobsetwebhook

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// validateElasticScaling judges a change of an Indexed replicatedJob's
// parallelism and completions under the ElasticJobSet feature gate: the
// controller scales the running Jobs to them (Kubernetes' elastic Indexed
// Jobs), so they must stay equal and at least 1, and the JobSet must not
// have finished. With InPlaceRestart the in-place group's replicatedJobs
// keep their size: a Pod added or taken away while the group runs is a
// member joining or lost, which the epoch protocol answers with a restart,
// not a resize.
func validateElasticScaling(js, old *jobset.JobSet, newRJ, oldRJ *jobset.ReplicatedJob, path *field.Path) field.ErrorList {
	newSpec, oldSpec := &newRJ.Template.Spec, &oldRJ.Template.Spec
	parallelismChanged := !ptr.Equal(newSpec.Parallelism, oldSpec.Parallelism)
	completionsChanged := !ptr.Equal(newSpec.Completions, oldSpec.Completions)
	if !parallelismChanged && !completionsChanged {
		return nil
	}
	specPath := path.Child("template", "spec")
	if ptr.Deref(newSpec.CompletionMode, batchv1.NonIndexedCompletion) != batchv1.IndexedCompletion {
		return field.ErrorList{field.Forbidden(specPath, "parallelism and completions may change only for Indexed Jobs (completionMode: Indexed): create a new JobSet")}
	}
	if finishedJobSet(old) {
		return field.ErrorList{field.Forbidden(specPath, "parallelism and completions cannot change once the JobSet is Completed or Failed: create a new JobSet")}
	}
	if jobset.RestartStrategyOf(js) == jobset.InPlaceRestart && groupMembers(js).Has(newRJ.Name) {
		return field.ErrorList{field.Forbidden(specPath, fmt.Sprintf(
			"replicatedJob %s is in the in-place group, whose size is fixed while it runs: a Pod added or removed would be a member joining or lost, answered with a restart; create a new JobSet to resize the group", newRJ.Name))}
	}
	var errs field.ErrorList
	if p := newSpec.Parallelism; p != nil && *p < 1 {
		errs = append(errs, field.Invalid(specPath.Child("parallelism"), *p, "must be at least 1 to scale the Jobs; suspend the JobSet to stop them"))
	}
	if c := newSpec.Completions; c != nil && *c < 1 {
		errs = append(errs, field.Invalid(specPath.Child("completions"), *c, "must be at least 1 to scale the Jobs"))
	}
	if p, c := newSpec.Parallelism, newSpec.Completions; p != nil && c != nil && *p != *c {
		errs = append(errs, field.Invalid(specPath.Child("completions"), *c,
			fmt.Sprintf("must equal parallelism (%d): an Indexed Job scales only with both changed together", *p)))
	}
	return errs
}

// finishedJobSet: the JobSet is Completed or Failed.
func finishedJobSet(js *jobset.JobSet) bool {
	return meta.IsStatusConditionTrue(js.Status.Conditions, string(jobset.JobSetCompleted)) ||
		meta.IsStatusConditionTrue(js.Status.Conditions, string(jobset.JobSetFailed))
}
