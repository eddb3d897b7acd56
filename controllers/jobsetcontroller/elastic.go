package jobsetcontroller

import (
	"maps"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// Under the ElasticJobSet feature gate, the parallelism and completions of
// an Indexed replicatedJob may change while the JobSet runs (the webhook
// checks the change); the running Jobs follow, as Kubernetes scales an
// elastic Indexed Job: both changed together, kept equal. The in-place
// group's Jobs keep their size (the webhook refuses to resize them): its
// Pods are members that the epoch protocol counts.

// rescaled maps every active Job whose parallelism or completions differ
// from its replicatedJob's to a copy with its replicatedJob's. A
// replicatedJob whose two values differ is left as it is: no Indexed Job
// scales to that.
func rescaled(js *jobset.JobSet, active []*batchv1.Job) map[*batchv1.Job]*batchv1.Job {
	type size struct{ parallelism, completions *int32 }
	wanted := map[string]size{}
	var group sets.Set[string]
	if jobset.RestartStrategyOf(js) == jobset.InPlaceRestart {
		_, group = inplace.Group(js)
	}
	for _, rj := range js.Spec.ReplicatedJobs {
		spec := rj.Template.Spec
		if group.Has(rj.Name) || !ptr.Equal(spec.Parallelism, spec.Completions) {
			continue
		}
		wanted[rj.Name] = size{spec.Parallelism, spec.Completions}
	}
	out := map[*batchv1.Job]*batchv1.Job{}
	for _, job := range active {
		want, ok := wanted[job.Labels[jobset.ReplicatedJobNameKey]]
		if !ok || ptr.Deref(job.Spec.CompletionMode, batchv1.NonIndexedCompletion) != batchv1.IndexedCompletion ||
			(ptr.Equal(job.Spec.Parallelism, want.parallelism) && ptr.Equal(job.Spec.Completions, want.completions)) {
			continue
		}
		scaled := job.DeepCopy()
		scaled.Spec.Parallelism, scaled.Spec.Completions = want.parallelism, want.completions
		out[job] = scaled
	}
	return out
}

// jobsOf lists the keys of a map of Jobs, sorted by name.
func jobsOf(m map[*batchv1.Job]*batchv1.Job) []*batchv1.Job {
	jobs := slices.Collect(maps.Keys(m))
	slices.SortFunc(jobs, func(a, b *batchv1.Job) int { return strings.Compare(a.Name, b.Name) })
	return jobs
}
