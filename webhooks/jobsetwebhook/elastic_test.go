package jobsetwebhook

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/features"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

func TestValidateUpdateElasticScaling(t *testing.T) {
	gateOn := features.Gates{}.With(features.ElasticJobSet, true)
	// workers runs 2 Jobs of size Pods each.
	workers := func(pods int32) *wrappers.JobSetWrapper {
		return wrappers.MakeJobSet("js", "ns").
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(pods).Obj())
	}
	scaled := func(js *jobset.JobSet, parallelism, completions int32) *jobset.JobSet {
		spec := &js.Spec.ReplicatedJobs[0].Template.Spec
		spec.Parallelism, spec.Completions = ptr.To(parallelism), ptr.To(completions)
		return js
	}
	finished := func(js *jobset.JobSet, t jobset.JobSetConditionType) *jobset.JobSet {
		js.Status.Conditions = []metav1.Condition{{Type: string(t), Status: metav1.ConditionTrue}}
		return js
	}
	inPlaceWorkers := func() *jobset.JobSet {
		return wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(2).InPlaceReady().Obj()).Obj()
	}
	for name, tc := range map[string]struct {
		old, new  *jobset.JobSet
		gates     features.Gates
		want      []string
		wantInMsg string
	}{
		"scaling up a running JobSet": {
			old: workers(2).Obj(), new: workers(4).Obj(), gates: gateOn,
		},
		"scaling down a running JobSet": {
			old: workers(4).Obj(), new: workers(1).Obj(), gates: gateOn,
		},
		"with the gate off (the default), replicatedJobs stay immutable": {
			old: workers(2).Obj(), new: workers(4).Obj(),
			want: []string{"FieldValueForbidden spec.replicatedJobs[0]"},
		},
		"parallelism and completions must stay equal": {
			old: workers(2).Obj(), new: scaled(workers(2).Obj(), 4, 3), gates: gateOn,
			want: []string{"FieldValueInvalid spec.replicatedJobs[0].template.spec.completions"}, wantInMsg: "must equal parallelism (4)",
		},
		"not below 1": {
			old: workers(2).Obj(), new: scaled(workers(2).Obj(), 0, 0), gates: gateOn,
			want: []string{
				"FieldValueInvalid spec.replicatedJobs[0].template.spec.parallelism",
				"FieldValueInvalid spec.replicatedJobs[0].template.spec.completions",
			},
		},
		"not once Completed": {
			old: finished(workers(2).Obj(), jobset.JobSetCompleted), new: workers(4).Obj(), gates: gateOn,
			want: []string{"FieldValueForbidden spec.replicatedJobs[0].template.spec"}, wantInMsg: "Completed or Failed",
		},
		"not once Failed": {
			old: finished(workers(2).Obj(), jobset.JobSetFailed), new: workers(4).Obj(), gates: gateOn,
			want: []string{"FieldValueForbidden spec.replicatedJobs[0].template.spec"},
		},
		"not for NonIndexed Jobs": {
			old: func() *jobset.JobSet {
				js := workers(2).Obj()
				js.Spec.ReplicatedJobs[0].Template.Spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
				return js
			}(),
			new: func() *jobset.JobSet {
				js := workers(4).Obj()
				js.Spec.ReplicatedJobs[0].Template.Spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
				return js
			}(),
			gates: gateOn,
			want:  []string{"FieldValueForbidden spec.replicatedJobs[0].template.spec"}, wantInMsg: "only for Indexed Jobs",
		},
		"not the in-place group's size": {
			old: inPlaceWorkers(), new: scaled(inPlaceWorkers(), 4, 4), gates: gateOn,
			want: []string{"FieldValueForbidden spec.replicatedJobs[0].template.spec"}, wantInMsg: "in-place group, whose size is fixed",
		},
		"anything else of the replicatedJob stays immutable": {
			old: workers(2).Obj(),
			new: func() *jobset.JobSet {
				js := workers(4).Obj()
				js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Image = "other"
				return js
			}(),
			gates: gateOn,
			want:  []string{"FieldValueForbidden spec.replicatedJobs[0]"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			errs := ValidateUpdate(tc.new, tc.old, tc.gates)
			if diff := cmp.Diff(tc.want, fieldsOf(errs)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s\n%v", diff, errs)
			}
			if tc.wantInMsg != "" && !strings.Contains(errs.ToAggregate().Error(), tc.wantInMsg) {
				t.Errorf("%v lacks %q", errs, tc.wantInMsg)
			}
		})
	}
}
