package jobsetcontroller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

func TestRescaled(t *testing.T) {
	// job is an active Indexed Job of replicatedJob rj, of size pods.
	job := func(name, rj string, pods int32) *batchv1.Job {
		j := wrappers.MakeJob(name, "ns", rj).Obj()
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Parallelism, j.Spec.Completions = ptr.To(pods), ptr.To(pods)
		return j
	}
	for name, tc := range map[string]struct {
		js     *jobset.JobSet
		active []*batchv1.Job
		want   map[string]int32
	}{
		"the Jobs of a resized replicatedJob follow it; the others stay": {
			js: wrappers.MakeJobSet("js", "ns").
				ReplicatedJob(wrappers.MakeReplicatedJob("driver").Obj()).
				ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(4).Obj()).Obj(),
			active: []*batchv1.Job{job("js-driver-0", "driver", 1), job("js-workers-0", "workers", 2), job("js-workers-1", "workers", 4)},
			want:   map[string]int32{"js-workers-0": 4},
		},
		"parallelism and completions that differ are left alone": {
			js: func() *jobset.JobSet {
				js := wrappers.MakeJobSet("js", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("workers").Pods(4).Obj()).Obj()
				js.Spec.ReplicatedJobs[0].Template.Spec.Completions = ptr.To[int32](3)
				return js
			}(),
			active: []*batchv1.Job{job("js-workers-0", "workers", 2)},
		},
		"the in-place group keeps its size": {
			js: wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).
				ReplicatedJob(wrappers.MakeReplicatedJob("workers").Pods(4).InPlaceReady().Obj()).Obj(),
			active: []*batchv1.Job{job("js-workers-0", "workers", 2)},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := map[string]int32{}
			for _, j := range rescaled(tc.js, tc.active) { // the scaled copies
				if *j.Spec.Parallelism != *j.Spec.Completions {
					t.Errorf("Job %s scaled to parallelism %d, completions %d", j.Name, *j.Spec.Parallelism, *j.Spec.Completions)
				}
				got[j.Name] = *j.Spec.Parallelism
			}
			if tc.want == nil {
				tc.want = map[string]int32{}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rescaled (-want +got):\n%s", diff)
			}
		})
	}
}
