package jobsetwebhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/features"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// FuzzDefaultAndValidate builds JobSets from fuzzed fields and checks that
// admission never panics, that defaulting is idempotent, that an injected
// JobSet is valid, that an update changing nothing is admitted, and that
// ratcheting forgives only errors the old object already had. The corpus
// under testdata/fuzz is kept.
func FuzzDefaultAndValidate(f *testing.F) {
	f.Add("trainer", "workers", int32(2), int32(4), int32(4), int32(-1), uint8(2), true, "true", "")
	f.Add("Bad_Name", "", int32(-1), int32(0), int32(3), int32(0), uint8(0), false, "", "(")
	f.Fuzz(func(t *testing.T, name, rjName string, replicas, completions, parallelism, backoff int32, strategy uint8, suspend bool, inject, pattern string) {
		rj := wrappers.MakeReplicatedJob(rjName).Replicas(replicas).Obj()
		rj.Template.Spec.Completions, rj.Template.Spec.Parallelism = ptr.To(completions), ptr.To(parallelism)
		if backoff >= 0 {
			rj.Template.Spec.BackoffLimit = ptr.To(backoff)
		}
		strategies := []jobset.JobSetRestartStrategy{jobset.Recreate, jobset.BlockingRecreate, jobset.InPlaceRestart}
		js := wrappers.MakeJobSet(name, "ns").Suspend(suspend).ReplicatedJob(rj).
			RestartStrategy(strategies[int(strategy)%len(strategies)]).
			Annotations(map[string]string{jobset.InjectAgentKey: inject}).
			FailurePolicyRule(jobset.FailurePolicyRule{Action: jobset.FailJobSet, OnJobFailureMessagePatterns: []string{pattern}}).Obj()

		w := Webhook{Agent: sidecar.Options{Image: "jobset-agent:fuzz", RestartExitCode: 88}}
		if err := w.Default(t.Context(), js); err != nil {
			t.Fatalf("Default failed with an agent image configured: %v", err)
		}
		again := js.DeepCopy()
		if err := w.Default(t.Context(), again); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(js, again); diff != "" {
			t.Fatalf("defaulting is not idempotent:\n%s", diff)
		}
		if errs := ValidateUpdate(js, js.DeepCopy(), features.Gates{}); len(errs) > 0 {
			t.Fatalf("an update that changes nothing is rejected: %v", fieldsOf(errs))
		}
		valid := wrappers.MakeJobSet("valid", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		if errs := Validate(valid, features.Gates{}); len(errs) > 0 {
			t.Fatalf("the old object must be valid: %v", fieldsOf(errs))
		}
		got := sets.New(fieldsOf(ValidateUpdate(js, valid, features.Gates{}))...)
		if missing := sets.New(fieldsOf(Validate(js, features.Gates{}))...).Difference(got); missing.Len() > 0 {
			t.Fatalf("an update of a valid JobSet forgives errors it did not inherit: %v", sets.List(missing))
		}
		_ = Warnings(js)
	})
}
