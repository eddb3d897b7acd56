package jobsetwebhook

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/kubeapply"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// inPlace is a valid InPlaceRestart JobSet of two replicatedJobs.
func inPlace() *wrappers.JobSetWrapper {
	return wrappers.MakeJobSet("trainer", "ns").RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
		ReplicatedJob(wrappers.MakeReplicatedJob("driver").InPlaceReady().Obj()).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(4).InPlaceReady().Obj())
}

func mutate(js *jobset.JobSet, f func(*jobset.JobSet)) *jobset.JobSet {
	f(js)
	return js
}

// fieldsOf lists "type field" of each error, the part tests pin down.
func fieldsOf(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field)
	}
	return out
}

func TestValidate(t *testing.T) {
	workers := func(js *jobset.JobSet) *jobset.ReplicatedJob { return &js.Spec.ReplicatedJobs[1] }
	cases := map[string]struct {
		js   *jobset.JobSet
		want []string
	}{
		"a valid Recreate JobSet": {
			js: wrappers.MakeJobSet("trainer", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj(),
		},
		"a valid InPlaceRestart JobSet": {js: inPlace().Obj()},
		"a JobSet name that is no DNS label": {
			js:   mutate(inPlace().Obj(), func(js *jobset.JobSet) { js.Name = "Trainer" }),
			want: []string{"FieldValueInvalid metadata.name"},
		},
		"Pod hostnames longer than 63 characters": {
			js:   mutate(inPlace().Obj(), func(js *jobset.JobSet) { js.Name = strings.Repeat("t", 56) }),
			want: []string{"FieldValueInvalid spec.replicatedJobs[0].name", "FieldValueInvalid spec.replicatedJobs[1].name"},
		},
		"a success policy target that does not exist": {
			js:   wrappers.MakeJobSet("js", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("a").Obj()).SuccessPolicy(jobset.OperatorAll, "b").Obj(),
			want: []string{"FieldValueNotSupported spec.successPolicy.targetReplicatedJobs[0]"},
		},
		"failure policy rules: duplicate names, unknown targets, bad patterns": {
			js: wrappers.MakeJobSet("js", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("a").Obj()).
				FailurePolicyRule(jobset.FailurePolicyRule{Name: "r", Action: jobset.FailJobSet, TargetReplicatedJobs: []string{"nope"}}).
				FailurePolicyRule(jobset.FailurePolicyRule{Name: "r", Action: jobset.FailJobSet, OnJobFailureMessagePatterns: []string{"(unclosed"}}).Obj(),
			want: []string{
				"FieldValueNotSupported spec.failurePolicy.rules[0].targetReplicatedJobs[0]",
				"FieldValueDuplicate spec.failurePolicy.rules[1].name",
				"FieldValueInvalid spec.failurePolicy.rules[1].onJobFailureMessagePatterns[0]",
			},
		},
		"a coordinator outside the JobSet": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				js.Spec.Coordinator = &jobset.Coordinator{ReplicatedJob: "workers", JobIndex: 2, PodIndex: 4}
			}),
			want: []string{"FieldValueInvalid spec.coordinator.jobIndex", "FieldValueInvalid spec.coordinator.podIndex"},
		},
		"managedBy that is not a domain-prefixed path": {
			js:   mutate(inPlace().Obj(), func(js *jobset.JobSet) { js.Spec.ManagedBy = ptr.To("kueue") }),
			want: []string{"FieldValueInvalid spec.managedBy"},
		},
		"dependsOn a later replicatedJob": {
			js: wrappers.MakeJobSet("js", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("a").Obj()).
				ReplicatedJob(mutateRJ(wrappers.MakeReplicatedJob("b").Obj(), func(rj *jobset.ReplicatedJob) {
					rj.DependsOn = []jobset.DependsOn{{Name: "c", Status: jobset.DependencyReady}}
				})).Obj(),
			want: []string{"FieldValueInvalid spec.replicatedJobs[1].dependsOn[0].name"},
		},
		"volumeClaimPolicies: a valid shared claim": {
			js: wrappers.MakeJobSet("trainer", "ns").VolumeClaimPolicy("", "checkpoints").
				ReplicatedJob(wrappers.MakeReplicatedJob("workers").MountVolumes("checkpoints").Obj()).Obj(),
		},
		"volumeClaimPolicies: unnamed, duplicate, unmounted and too long templates, and a volume of the same name": {
			js: mutate(wrappers.MakeJobSet("trainer", "ns").
				VolumeClaimPolicy("", "", "checkpoints", "unmounted").
				VolumeClaimPolicy(jobset.RetentionPolicyRetain, "checkpoints", strings.Repeat("d", 250)).
				ReplicatedJob(wrappers.MakeReplicatedJob("workers").MountVolumes("checkpoints", strings.Repeat("d", 250)).Obj()).Obj(),
				func(js *jobset.JobSet) {
					pod := &js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
					pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "checkpoints"})
				}),
			want: []string{
				"FieldValueRequired spec.volumeClaimPolicies[0].templates[0].metadata.name",
				"FieldValueInvalid spec.volumeClaimPolicies[0].templates[2].metadata.name",
				"FieldValueDuplicate spec.volumeClaimPolicies[1].templates[0].metadata.name",
				"FieldValueInvalid spec.volumeClaimPolicies[1].templates[1].metadata.name",
				"FieldValueInvalid spec.volumeClaimPolicies[1].templates[1].metadata.name",
				"FieldValueInvalid spec.replicatedJobs[0].template.spec.template.spec.volumes[0].name",
			},
		},

		// The rules of InPlaceRestart.
		"in place: backoffLimit below MaxInt32": {
			js:   mutate(inPlace().Obj(), func(js *jobset.JobSet) { workers(js).Template.Spec.BackoffLimit = ptr.To[int32](0) }),
			want: []string{"FieldValueInvalid spec.replicatedJobs[1].template.spec.backoffLimit"},
		},
		"in place: podReplacementPolicy TerminatingOrFailed": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				workers(js).Template.Spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
			}),
			want: []string{"FieldValueNotSupported spec.replicatedJobs[1].template.spec.podReplacementPolicy"},
		},
		"in place: completions != parallelism": {
			js:   mutate(inPlace().Obj(), func(js *jobset.JobSet) { workers(js).Template.Spec.Completions = ptr.To[int32](8) }),
			want: []string{"FieldValueInvalid spec.replicatedJobs[1].template.spec.completions"},
		},
		"in place: no agent sidecar": {
			js:   mutate(inPlace().Obj(), func(js *jobset.JobSet) { workers(js).Template.Spec.Template.Spec.InitContainers = nil }),
			want: []string{"FieldValueRequired spec.replicatedJobs[1].template.spec.template.spec.initContainers"},
		},
		"in place: an agent without its restart rule is no agent": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				workers(js).Template.Spec.Template.Spec.InitContainers[0].RestartPolicyRules = nil
			}),
			want: []string{"FieldValueRequired spec.replicatedJobs[1].template.spec.template.spec.initContainers"},
		},
		"in place: the agent without JOBSET_NAME": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				c := &workers(js).Template.Spec.Template.Spec.InitContainers[0]
				c.Env = c.Env[:2]
			}),
			want: []string{"FieldValueRequired spec.replicatedJobs[1].template.spec.template.spec.initContainers[0].env"},
		},
		"in place: startupPolicy InOrder": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				js.Spec.StartupPolicy = &jobset.StartupPolicy{StartupPolicyOrder: jobset.InOrder}
			}),
			want: []string{"FieldValueForbidden spec.startupPolicy.startupPolicyOrder"},
		},
		"in place: dependsOn": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				workers(js).DependsOn = []jobset.DependsOn{{Name: "driver", Status: jobset.DependencyReady}}
			}),
			want: []string{"FieldValueForbidden spec.replicatedJobs[1].dependsOn"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := Validate(tc.js)
			if diff := cmp.Diff(tc.want, fieldsOf(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, errs)
			}
			for _, e := range errs {
				if e.Detail == "" && e.Type != field.ErrorTypeNotSupported && e.Type != field.ErrorTypeDuplicate {
					t.Errorf("%s says nothing about how to fix it", e.Field)
				}
			}
		})
	}
}

func mutateRJ(rj jobset.ReplicatedJob, f func(*jobset.ReplicatedJob)) jobset.ReplicatedJob {
	f(&rj)
	return rj
}

func TestValidateUpdate(t *testing.T) {
	suspended := func() *jobset.JobSet { return inPlace().Suspend(true).Obj() }
	cases := map[string]struct {
		old, new *jobset.JobSet
		want     []string
	}{
		"suspended: scheduling directives may change (Kueue)": {
			old: suspended(),
			new: mutate(suspended(), func(js *jobset.JobSet) {
				pod := &js.Spec.ReplicatedJobs[1].Template.Spec.Template
				pod.Labels = map[string]string{"kueue.x-k8s.io/podset": "workers"}
				pod.Spec.NodeSelector = map[string]string{"pool": "a"}
				pod.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}
			}),
		},
		"suspended: the rest of the template may not": {
			old: suspended(),
			new: mutate(suspended(), func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec.Containers[0].Image = "other"
			}),
			want: []string{"FieldValueForbidden spec.replicatedJobs[1]"},
		},
		"running: nothing of replicatedJobs may change": {
			old: inPlace().Obj(),
			new: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec.NodeSelector = map[string]string{"pool": "a"}
			}),
			want: []string{"FieldValueForbidden spec.replicatedJobs[1]"},
		},
		"replicatedJobs may not be added": {
			old:  inPlace().Obj(),
			new:  inPlace().ReplicatedJob(wrappers.MakeReplicatedJob("more").InPlaceReady().Obj()).Obj(),
			want: []string{"FieldValueForbidden spec.replicatedJobs"},
		},
		"suspend itself may change": {
			old: inPlace().Obj(),
			new: inPlace().Suspend(true).Obj(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, fieldsOf(ValidateUpdate(tc.new, tc.old))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	js := wrappers.MakeJobSet("trainer", "ns").RestartStrategy(jobset.InPlaceRestart).
		FailurePolicyRule(jobset.FailurePolicyRule{Action: jobset.FailJobSet}).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
	spec := &js.Spec.ReplicatedJobs[0].Template.Spec
	spec.CompletionMode, spec.Template.Spec.RestartPolicy = nil, ""
	Default(js)

	if got := js.Spec.FailurePolicy.Rules[0].Name; got != "failurePolicyRule0" {
		t.Errorf("rule name = %q", got)
	}
	if *spec.BackoffLimit != math.MaxInt32 || *spec.PodReplacementPolicy != batchv1.Failed {
		t.Errorf("in-place defaults: backoffLimit %d, podReplacementPolicy %s", *spec.BackoffLimit, *spec.PodReplacementPolicy)
	}
	if *spec.CompletionMode != batchv1.IndexedCompletion || spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("completionMode %s, restartPolicy %s", *spec.CompletionMode, spec.Template.Spec.RestartPolicy)
	}
	if !*js.Spec.Network.EnableDNSHostnames || !*js.Spec.Network.PublishNotReadyAddresses ||
		js.Spec.SuccessPolicy.Operator != jobset.OperatorAll || js.Spec.StartupPolicy.StartupPolicyOrder != jobset.AnyOrder {
		t.Errorf("JobSet defaults: %+v", js.Spec)
	}

	const keptExplicit = "an explicit backoffLimit is kept, for validation to reject"
	js = inPlace().Obj()
	js.Spec.ReplicatedJobs[0].Template.Spec.BackoffLimit = ptr.To[int32](3)
	Default(js)
	if *js.Spec.ReplicatedJobs[0].Template.Spec.BackoffLimit != 3 {
		t.Error(keptExplicit)
	}
}

func TestWarnings(t *testing.T) {
	if w := Warnings(inPlace().Obj()); len(w) != 0 {
		t.Errorf("a complete JobSet gets warnings: %v", w)
	}
	js := inPlace().Obj()
	pod := &js.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec
	pod.InitContainers[0].StartupProbe = nil
	pod.Containers[0].RestartPolicyRules = nil
	w := Warnings(js)
	if len(w) != 2 || !strings.Contains(w[0], "no startupProbe") || !strings.Contains(w[1], "no RestartAllContainers rule") {
		t.Errorf("warnings = %q", w)
	}
}

// The user guide's manual setup (docs/examples/story1-inplace.yaml) is
// what injection makes of the same JobSet without the agent
// (docs/examples/story1-injected.yaml).
func TestInjectAgentMatchesTheDocumentedManifest(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) *jobset.JobSet {
		js := &jobset.JobSet{}
		if err := kubeapply.ReadObject(filepath.Join(root, "docs", "examples", name), js); err != nil {
			t.Fatal(err)
		}
		return js
	}
	documented := read("story1-inplace.yaml")
	Default(documented)
	injected := read("story1-injected.yaml")
	InjectAgent(injected, sidecar.Options{Image: "ghcr.io/fastjobset/jobset-agent:dev"})
	Default(injected)

	if diff := cmp.Diff(documented.Spec, injected.Spec); diff != "" {
		t.Errorf("injection differs from the documented manifest docs/examples/story1-inplace.yaml (-documented +injected):\n%s", diff)
	}
	again := injected.DeepCopy()
	InjectAgent(again, sidecar.Options{Image: "ghcr.io/fastjobset/jobset-agent:dev"})
	if diff := cmp.Diff(injected, again); diff != "" {
		t.Errorf("injection is not idempotent:\n%s", diff)
	}
	if errs := Validate(injected); len(errs) > 0 {
		t.Errorf("an injected JobSet is invalid: %v", errs)
	}

	custom := wrappers.MakeJobSet("t", "ns").RestartStrategy(jobset.InPlaceRestart).
		ReplicatedJob(wrappers.MakeReplicatedJob("w").Obj()).Obj()
	InjectAgent(custom, sidecar.Options{Image: "a", RestartExitCode: 42})
	agentC := custom.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.InitContainers[0]
	if agentC.Env[len(agentC.Env)-1].Value != "42" {
		t.Errorf("a custom exit code must reach the agent: %+v", agentC.Env)
	}
	if rule := agentC.RestartPolicyRules[0].ExitCodes; rule.Operator != corev1.ContainerRestartRuleOnExitCodesOpNotIn || !slices.Equal(rule.Values, []int32{0}) {
		t.Errorf("the agent's rule must cover every non-zero exit, the custom code included: %+v", rule)
	}
}
