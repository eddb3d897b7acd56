package jobsetwebhook

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fastjobset/jobset/api/features"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

func TestValidateOneJobRestarts(t *testing.T) {
	gateOn := features.Gates{}.With(features.RestartJob, true)
	rule := func(action jobset.FailurePolicyAction, targets ...string) jobset.FailurePolicyRule {
		return jobset.FailurePolicyRule{Name: "one", Action: action, TargetReplicatedJobs: targets}
	}
	// The group (node) waits for an initializer outside it to Complete.
	withInitializer := func() *wrappers.JobSetWrapper {
		node := wrappers.MakeReplicatedJob("node").Replicas(2).InPlaceReady().Obj()
		node.DependsOn = []jobset.DependsOn{{Name: "initializer", Status: jobset.DependencyComplete}}
		return wrappers.MakeJobSet("trainer", "ns").RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
			ReplicatedJob(wrappers.MakeReplicatedJob("initializer").Obj()).
			ReplicatedJob(node)
	}
	for name, tc := range map[string]struct {
		js        *jobset.JobSet
		gates     features.Gates
		want      []string
		wantInMsg []string
	}{
		"RestartJob with the gate on": {
			js: wrappers.MakeJobSet("js", "ns").FailurePolicyRule(rule(jobset.RestartJob)).
				ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(1024).Obj()).Obj(),
			gates: gateOn,
		},
		"RestartJob with the gate off (the default) names the flag": {
			js: wrappers.MakeJobSet("js", "ns").FailurePolicyRule(rule(jobset.RestartJob)).
				ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj(),
			want:      []string{"FieldValueForbidden spec.failurePolicy.rules[0].action"},
			wantInMsg: []string{"--feature-gates=RestartJob=true", "or use RestartJobSet"},
		},
		"RestartJobAndIgnoreMaxRestarts with the gate off points to its whole-JobSet twin": {
			js: wrappers.MakeJobSet("js", "ns").FailurePolicyRule(rule(jobset.RestartJobAndIgnoreMaxRestarts)).
				ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj(),
			want:      []string{"FieldValueForbidden spec.failurePolicy.rules[0].action"},
			wantInMsg: []string{"or use RestartJobSetAndIgnoreMaxRestarts"},
		},
		"more than 1024 replicas": {
			js: wrappers.MakeJobSet("js", "ns").FailurePolicyRule(rule(jobset.RestartJob)).
				ReplicatedJob(wrappers.MakeReplicatedJob("driver").Obj()).
				ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(1025).Obj()).Obj(),
			gates:     gateOn,
			want:      []string{"FieldValueInvalid spec.replicatedJobs[1].replicas"},
			wantInMsg: []string{"at most 1024", `rule "one"`},
		},
		"more than 1024 replicas without a per-Job rule": {
			js: wrappers.MakeJobSet("js", "ns").
				ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(1025).Obj()).Obj(),
			gates: gateOn,
		},
		"InPlaceRestart: a rule that targets only replicatedJobs outside the group": {
			js:    withInitializer().FailurePolicyRule(rule(jobset.RestartJob, "initializer")).Obj(),
			gates: gateOn,
		},
		"InPlaceRestart: a rule without targets": {
			js:        withInitializer().FailurePolicyRule(rule(jobset.RestartJob)).Obj(),
			gates:     gateOn,
			want:      []string{"FieldValueRequired spec.failurePolicy.rules[0].targetReplicatedJobs"},
			wantInMsg: []string{"in-place group (node, whose Pods run the agent)", "leave the group short"},
		},
		"InPlaceRestart: a rule that targets a group member": {
			js:        withInitializer().FailurePolicyRule(rule(jobset.RestartJobAndIgnoreMaxRestarts, "initializer", "node")).Obj(),
			gates:     gateOn,
			want:      []string{"FieldValueInvalid spec.failurePolicy.rules[0].targetReplicatedJobs[1]"},
			wantInMsg: []string{"replicatedJob node is in the in-place group", "RestartJobSetAndIgnoreMaxRestarts"},
		},
		"InPlaceRestart: RestartJobSet rules are not restricted": {
			js:    withInitializer().FailurePolicyRule(rule(jobset.RestartJobSet)).Obj(),
			gates: gateOn,
		},
	} {
		t.Run(name, func(t *testing.T) {
			errs := Validate(tc.js, tc.gates)
			if diff := cmp.Diff(tc.want, fieldsOf(errs)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s\n%v", diff, errs)
			}
			for _, part := range tc.wantInMsg {
				if !strings.Contains(errs.ToAggregate().Error(), part) {
					t.Errorf("%v lacks %q", errs, part)
				}
			}
		})
	}
}
