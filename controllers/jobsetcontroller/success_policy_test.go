package jobsetcontroller

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

func TestSuccessPolicyMet(t *testing.T) {
	twoReplicatedJobs := func() *wrappers.JobSetWrapper {
		return wrappers.MakeJobSet("js", "ns").
			ReplicatedJob(wrappers.MakeReplicatedJob("driver").Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Obj())
	}
	done := func(name, rj string) *batchv1.Job { return wrappers.MakeJob(name, "ns", rj).Complete().Obj() }
	driver, worker0, worker1 := done("js-driver-0", "driver"), done("js-workers-0", "workers"), done("js-workers-1", "workers")

	cases := map[string]struct {
		js         *jobset.JobSet
		successful []*batchv1.Job
		want       bool
	}{
		"no policy, nothing done":              {js: twoReplicatedJobs().Obj(), want: false},
		"no policy, some done":                 {js: twoReplicatedJobs().Obj(), successful: []*batchv1.Job{driver, worker0}, want: false},
		"no policy, all done":                  {js: twoReplicatedJobs().Obj(), successful: []*batchv1.Job{driver, worker0, worker1}, want: true},
		"All on workers, workers done":         {js: twoReplicatedJobs().SuccessPolicy(jobset.OperatorAll, "workers").Obj(), successful: []*batchv1.Job{worker0, worker1}, want: true},
		"All on workers, one worker done":      {js: twoReplicatedJobs().SuccessPolicy(jobset.OperatorAll, "workers").Obj(), successful: []*batchv1.Job{driver, worker0}, want: false},
		"Any on driver, driver done":           {js: twoReplicatedJobs().SuccessPolicy(jobset.OperatorAny, "driver").Obj(), successful: []*batchv1.Job{driver}, want: true},
		"Any on driver, only workers done":     {js: twoReplicatedJobs().SuccessPolicy(jobset.OperatorAny, "driver").Obj(), successful: []*batchv1.Job{worker0, worker1}, want: false},
		"Any without targets, one worker done": {js: twoReplicatedJobs().SuccessPolicy(jobset.OperatorAny).Obj(), successful: []*batchv1.Job{worker1}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := successPolicyMet(tc.js, tc.successful); got != tc.want {
				t.Errorf("successPolicyMet = %v, want %v", got, tc.want)
			}
		})
	}
}
