package jobsetcontroller

import (
	"slices"

	batchv1 "k8s.io/api/batch/v1"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// successPolicyMet reports whether the JobSet has succeeded: with operator
// All, every Job of the targeted replicatedJobs completed; with Any, one of
// them did. No policy means All over every replicatedJob.
func successPolicyMet(js *jobset.JobSet, successful []*batchv1.Job) bool {
	policy := js.Spec.SuccessPolicy
	if policy == nil {
		policy = &jobset.SuccessPolicy{Operator: jobset.OperatorAll}
	}
	targeted := func(replicatedJob string) bool {
		return len(policy.TargetReplicatedJobs) == 0 || slices.Contains(policy.TargetReplicatedJobs, replicatedJob)
	}

	succeeded := 0
	for _, job := range successful {
		if targeted(job.Labels[jobset.ReplicatedJobNameKey]) {
			succeeded++
		}
	}
	if policy.Operator == jobset.OperatorAny {
		return succeeded > 0
	}
	expected := 0
	for _, rj := range js.Spec.ReplicatedJobs {
		if targeted(rj.Name) {
			expected += int(rj.Replicas)
		}
	}
	return succeeded >= expected
}
