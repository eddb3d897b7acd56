package jobsetcontroller

import (
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// suspendPlan lists the active Jobs whose spec.suspend differs from the
// JobSet's.
func suspendPlan(js *jobset.JobSet, active []*batchv1.Job) (suspend, resume []*batchv1.Job) {
	want := ptr.Deref(js.Spec.Suspend, false)
	for _, job := range active {
		switch suspended := ptr.Deref(job.Spec.Suspend, false); {
		case want && !suspended:
			suspend = append(suspend, job)
		case !want && suspended:
			resume = append(resume, job)
		}
	}
	return suspend, resume
}

// resumedJob returns the Job to write when resuming it. While the JobSet was
// suspended, a queueing system such as Kueue may have written scheduling
// directives into its Pod templates; they are merged into the Job's own Pod
// template (allowed only while the Job is suspended, hence in the same
// write that resumes it). So is the execution attempt the resume starts,
// unless it is nil: no Pod of the resumed Job is made without it.
func resumedJob(js *jobset.JobSet, job *batchv1.Job, executionAttempt *int32) *batchv1.Job {
	out := job.DeepCopy()
	out.Spec.Suspend = ptr.To(false)
	for _, rj := range js.Spec.ReplicatedJobs {
		if rj.Name != job.Labels[jobset.ReplicatedJobNameKey] {
			continue
		}
		from := rj.Template.Spec.Template
		to := &out.Spec.Template
		to.Labels = withAll(to.Labels, from.Labels)
		to.Annotations = withAll(to.Annotations, from.Annotations)
		delete(to.Annotations, jobset.EpochKey) // as constructJob: only an agent writes it
		if len(from.Spec.NodeSelector) > 0 {
			to.Spec.NodeSelector = withAll(to.Spec.NodeSelector, from.Spec.NodeSelector)
		}
		for _, t := range from.Spec.Tolerations {
			if !slices.ContainsFunc(to.Spec.Tolerations, func(have corev1.Toleration) bool { return have.MatchToleration(&t) }) {
				to.Spec.Tolerations = append(to.Spec.Tolerations, t)
			}
		}
		if from.Spec.SchedulingGates != nil {
			to.Spec.SchedulingGates = from.Spec.SchedulingGates
		}
		break
	}
	stampExecutionAttempt(out, executionAttempt)
	return out
}
