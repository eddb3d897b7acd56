package jobsetwebhook

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/features"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/api/version"
	"github.com/fastjobset/jobset/images/manifest"
	"github.com/fastjobset/jobset/tools/testing/framework"
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

// trainerInitializers is Kubeflow Trainer's torch runtime with
// initializers: the trainer nodes (the in-place group) wait for the dataset
// and model initializers, which run without the agent, to Complete.
func trainerInitializers() *jobset.JobSet {
	js := wrappers.MakeJobSet("trainer", "ns").RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
		ReplicatedJob(wrappers.MakeReplicatedJob("dataset-initializer").Obj()).
		ReplicatedJob(wrappers.MakeReplicatedJob("model-initializer").Obj()).
		ReplicatedJob(wrappers.MakeReplicatedJob("node").Replicas(1).Pods(2).InPlaceReady().Obj()).Obj()
	js.Spec.ReplicatedJobs[2].DependsOn = []jobset.DependsOn{
		{Name: "dataset-initializer", Status: jobset.DependencyComplete},
		{Name: "model-initializer", Status: jobset.DependencyComplete},
	}
	return js
}

// mpiLauncher is Trainer's MPI shape: a launcher, without the agent, waits
// for the nodes (the in-place group) to be Ready.
func mpiLauncher() *jobset.JobSet {
	js := wrappers.MakeJobSet("mpi", "ns").RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
		ReplicatedJob(wrappers.MakeReplicatedJob("node").Replicas(1).Pods(2).InPlaceReady().Obj()).
		ReplicatedJob(wrappers.MakeReplicatedJob("launcher").Obj()).Obj()
	js.Spec.ReplicatedJobs[1].DependsOn = []jobset.DependsOn{{Name: "node", Status: jobset.DependencyReady}}
	return js
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
		"two named in-place groups": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[0].Template.Annotations = map[string]string{jobset.InPlaceGroupKey: "driver"}
				js.Spec.ReplicatedJobs[1].Template.Annotations = map[string]string{jobset.InPlaceGroupKey: "workers"}
			}),
		},
		"in-place groups named by no label, or on Pods without the agent": {
			js: mutate(inPlace().ReplicatedJob(wrappers.MakeReplicatedJob("evaluator").Obj()).Obj(), func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[1].Template.Annotations = map[string]string{jobset.InPlaceGroupKey: "Workers_A"}
				// A launcher, outside the group.
				js.Spec.ReplicatedJobs[2].DependsOn = []jobset.DependsOn{{Name: "workers", Status: jobset.DependencyReady}}
				js.Spec.ReplicatedJobs[2].Template.Annotations = map[string]string{jobset.InPlaceGroupKey: "evaluator"}
			}),
			want: []string{
				"FieldValueInvalid spec.replicatedJobs[1].template.metadata.annotations[alpha.jobset.sigs.k8s.io/in-place-group]",
				"FieldValueInvalid spec.replicatedJobs[2].template.metadata.annotations[alpha.jobset.sigs.k8s.io/in-place-group]",
			},
		},
		"an in-place group of a Recreate JobSet": {
			js: mutate(wrappers.MakeJobSet("trainer", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("workers").InPlaceReady().Obj()).Obj(), func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[0].Template.Annotations = map[string]string{jobset.InPlaceGroupKey: "workers"}
			}),
			want: []string{"FieldValueInvalid spec.replicatedJobs[0].template.metadata.annotations[alpha.jobset.sigs.k8s.io/in-place-group]"},
		},
		"hang timeouts": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				js.Annotations = map[string]string{agentspec.FirstProgressTimeoutAnnotation: "20m", agentspec.ProgressTimeoutAnnotation: "2m"}
			}),
		},
		"hang timeouts that are no durations the agent can keep": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				js.Annotations = map[string]string{agentspec.FirstProgressTimeoutAnnotation: "600", agentspec.ProgressTimeoutAnnotation: "100ms"}
			}),
			want: []string{
				"FieldValueInvalid metadata.annotations[jobset.sigs.k8s.io/first-progress-timeout]",
				"FieldValueInvalid metadata.annotations[jobset.sigs.k8s.io/progress-timeout]",
			},
		},
		"a hang timeout without an in-place restart": {
			js: mutate(wrappers.MakeJobSet("trainer", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj(), func(js *jobset.JobSet) {
				js.Annotations = map[string]string{agentspec.ProgressTimeoutAnnotation: "2m"}
			}),
			want: []string{"FieldValueInvalid metadata.annotations[jobset.sigs.k8s.io/progress-timeout]"},
		},
		"a hang timeout without the worker wrapper": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				js.Annotations = map[string]string{agentspec.ProgressTimeoutAnnotation: "2m", jobset.WorkerWrapperKey: "false"}
			}),
			want: []string{"FieldValueInvalid metadata.annotations[jobset.sigs.k8s.io/progress-timeout]"},
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
			want: []string{"FieldValueForbidden spec.replicatedJobs[1].dependsOn[0]"},
		},

		// dependsOn where it cannot deadlock the group.
		"in place: the group waits for initializers outside it to Complete (Kubeflow Trainer's torch shape)": {
			js: trainerInitializers(),
		},
		"in place: a launcher outside the group waits for it to be Ready (Trainer's MPI shape)": {
			js: mpiLauncher(),
		},
		"in place: InOrder with one member and a launcher": {
			js: mutate(mpiLauncher(), func(js *jobset.JobSet) {
				js.Spec.StartupPolicy = &jobset.StartupPolicy{StartupPolicyOrder: jobset.InOrder}
			}),
		},
		"in place: a member waits for a member through a replicatedJob outside the group": {
			js: mutate(mpiLauncher(), func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs = append(js.Spec.ReplicatedJobs, wrappers.MakeReplicatedJob("evaluator").InPlaceReady().Obj())
				js.Spec.ReplicatedJobs[2].DependsOn = []jobset.DependsOn{{Name: "launcher", Status: jobset.DependencyComplete}}
			}),
			want: []string{"FieldValueForbidden spec.replicatedJobs[2].dependsOn[0]"},
		},
		"in place: a replicatedJob without the agent and in no dependsOn": {
			js: mutate(mpiLauncher(), func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs = append(js.Spec.ReplicatedJobs, wrappers.MakeReplicatedJob("evaluator").Obj())
			}),
			want: []string{
				"FieldValueInvalid spec.replicatedJobs[2].template.spec.backoffLimit",
				"FieldValueNotSupported spec.replicatedJobs[2].template.spec.podReplacementPolicy",
				"FieldValueRequired spec.replicatedJobs[2].template.spec.template.spec.initContainers",
			},
		},
		"in place: initializers without any member": {
			js: mutate(trainerInitializers(), func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[2] = wrappers.MakeReplicatedJob("node").Obj()
				js.Spec.ReplicatedJobs[2].DependsOn = trainerInitializers().Spec.ReplicatedJobs[2].DependsOn
			}),
			want: func() []string {
				var want []string
				for i := range 3 {
					p := fmt.Sprintf("spec.replicatedJobs[%d].template.spec.", i)
					want = append(want, "FieldValueInvalid "+p+"backoffLimit", "FieldValueNotSupported "+p+"podReplacementPolicy",
						"FieldValueRequired "+p+"template.spec.initContainers")
				}
				return want
			}(),
		},

		// An agent that stops alone must take its worker with it.
		"in place: the KEP's agent rule In [88] lets a crashed agent restart alone": {
			js:   mutate(inPlace().Obj(), func(js *jobset.JobSet) { setAgentRule(js, corev1.ContainerRestartRuleOnExitCodesOpIn, 88) }),
			want: []string{"FieldValueInvalid " + agentRules},
		},
		"in place: an agent rule that leaves out a crash code (NotIn [0, 2])": {
			js:   mutate(inPlace().Obj(), func(js *jobset.JobSet) { setAgentRule(js, corev1.ContainerRestartRuleOnExitCodesOpNotIn, 0, 2) }),
			want: []string{"FieldValueInvalid " + agentRules},
		},
		"in place: an agent whose Restart rule comes first restarts alone": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				c := &workers(js).Template.Spec.Template.Spec.InitContainers[0]
				c.RestartPolicyRules = append([]corev1.ContainerRestartRule{{
					Action:    corev1.ContainerRestartRuleActionRestart,
					ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{1}},
				}}, c.RestartPolicyRules...)
			}),
			want: []string{"FieldValueInvalid " + agentRules},
		},
		"in place: the agent's NotIn [0] with a livenessProbe: the kubelet stops it alone by design": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				setAgentRule(js, corev1.ContainerRestartRuleOnExitCodesOpNotIn, 0)
				workers(js).Template.Spec.Template.Spec.InitContainers[0].LivenessProbe = &corev1.Probe{
					ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}}
			}),
			want: []string{"FieldValueInvalid " + agentRules},
		},
		"in place: the agent's NotIn [0] with a resize policy that restarts it alone": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				setAgentRule(js, corev1.ContainerRestartRuleOnExitCodesOpNotIn, 0)
				workers(js).Template.Spec.Template.Spec.InitContainers[0].ResizePolicy = []corev1.ContainerResizePolicy{
					{ResourceName: corev1.ResourceMemory, RestartPolicy: corev1.RestartContainer}}
			}),
			want: []string{"FieldValueInvalid " + agentRules},
		},
		"in place: the agent's NotIn [0] alone is only risky (a warning)": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) { setAgentRule(js, corev1.ContainerRestartRuleOnExitCodesOpNotIn, 0) }),
		},

		// A template's epoch makes every Pod born "at 1".
		"in place: the epoch annotation on a Pod template": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				workers(js).Template.Spec.Template.Annotations = map[string]string{jobset.EpochKey: "1"}
			}),
			want: []string{"FieldValueForbidden spec.replicatedJobs[1].template.spec.template.metadata.annotations[jobset.sigs.k8s.io/epoch]"},
		},

		// A failed index is never replaced.
		"in place: backoffLimitPerIndex and maxFailedIndexes": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				workers(js).Template.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
				workers(js).Template.Spec.MaxFailedIndexes = ptr.To[int32](0)
			}),
			want: []string{
				"FieldValueForbidden spec.replicatedJobs[1].template.spec.backoffLimitPerIndex",
				"FieldValueForbidden spec.replicatedJobs[1].template.spec.maxFailedIndexes",
			},
		},
		"in place: a podFailurePolicy rule FailIndex": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				workers(js).Template.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
					{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
						Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}}},
					{Action: batchv1.PodFailurePolicyActionFailIndex, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
						Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{43}}},
				}}
			}),
			want: []string{"FieldValueForbidden spec.replicatedJobs[1].template.spec.podFailurePolicy.rules[1].action"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := Validate(tc.js, features.Gates{})
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

// agentRules is the field path of the workers' agent's restart rules in
// inPlace().
const agentRules = "spec.replicatedJobs[1].template.spec.template.spec.initContainers[0].restartPolicyRules"

// setAgentRule gives the workers' agent one RestartAllContainers rule.
func setAgentRule(js *jobset.JobSet, op corev1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) {
	js.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec.InitContainers[0].RestartPolicyRules = []corev1.ContainerRestartRule{{
		Action:    corev1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes},
	}}
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
		"being suspended: scheduling directives may be restored in the same update (Kueue's eviction)": {
			old: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				pod := &js.Spec.ReplicatedJobs[1].Template.Spec.Template
				pod.Labels = map[string]string{"kueue.x-k8s.io/podset": "workers"}
				pod.Spec.NodeSelector = map[string]string{"pool": "a"}
				pod.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}
			}),
			new: suspended(),
		},
		"being suspended: the rest of the template may not": {
			old: inPlace().Obj(),
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
			if diff := cmp.Diff(tc.want, fieldsOf(ValidateUpdate(tc.new, tc.old, features.Gates{}))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidateUpdateRatchets: an update is judged on what it changes, as
// the apiserver ratchets CRD validation. A JobSet stored before a rule
// was tightened (built here as one that today's rules reject) must stay
// updatable: Kueue suspends and resumes it, the garbage collector removes
// its finalizers.
func TestValidateUpdateRatchets(t *testing.T) {
	const backoffLimit = "spec.replicatedJobs[1].template.spec.backoffLimit"
	// storedBefore breaks a rule on a field that no update below changes.
	storedBefore := func(w *wrappers.JobSetWrapper) *jobset.JobSet {
		return mutate(w.Obj(), func(js *jobset.JobSet) {
			js.Spec.ReplicatedJobs[1].Template.Spec.BackoffLimit = ptr.To[int32](6)
		})
	}
	if got := fieldsOf(Validate(storedBefore(inPlace()), features.Gates{})); !slices.Contains(got, "FieldValueInvalid "+backoffLimit) {
		t.Fatalf("the old object must break a rule of today's Validate, got %v", got)
	}
	deleting := func(js *jobset.JobSet) *jobset.JobSet {
		js.DeletionTimestamp = ptr.To(metav1.Now())
		return js
	}
	const epochAnnotation = "spec.replicatedJobs[1].template.spec.template.metadata.annotations[jobset.sigs.k8s.io/epoch]"
	withEpoch := func(epoch string) func(*jobset.JobSet) {
		return func(js *jobset.JobSet) {
			js.Spec.ReplicatedJobs[1].Template.Spec.Template.Annotations = map[string]string{jobset.EpochKey: epoch}
		}
	}
	withFinalizer := func(js *jobset.JobSet) *jobset.JobSet {
		js.Finalizers = []string{"foregroundDeletion"}
		return js
	}
	cases := map[string]struct {
		old, new *jobset.JobSet
		want     []string
	}{
		"an unchanged invalid field does not block a metadata change": {
			old: storedBefore(inPlace()),
			new: storedBefore(inPlace().Annotations(map[string]string{"team": "a"})),
		},
		"an unchanged invalid field does not block a suspend (Kueue's preemption)": {
			old: storedBefore(inPlace()),
			new: storedBefore(inPlace().Suspend(true)),
		},
		"an unchanged invalid field does not block a resume with scheduling directives (Kueue's admission)": {
			old: storedBefore(inPlace().Suspend(true)),
			new: mutate(storedBefore(inPlace()), func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec.NodeSelector = map[string]string{"pool": "a"}
			}),
		},
		"a JobSet being deleted loses its finalizer": {
			old: deleting(withFinalizer(storedBefore(inPlace()))),
			new: deleting(storedBefore(inPlace())),
		},
		"a JobSet being deleted is not judged on its spec at all": {
			old: deleting(storedBefore(inPlace().Suspend(true))),
			new: deleting(mutate(storedBefore(inPlace().Suspend(true)), withEpoch("3"))),
		},
		// Most of the spec is immutable (the CRD's rules and the ones
		// below); Pod template annotations may change while suspended.
		"a changed field must be valid": {
			old:  storedBefore(inPlace().Suspend(true)),
			new:  mutate(storedBefore(inPlace().Suspend(true)), withEpoch("3")),
			want: []string{"FieldValueForbidden " + epochAnnotation},
		},
		"an invalid field changed to another invalid value is judged anew": {
			old:  mutate(inPlace().Suspend(true).Obj(), withEpoch("3")),
			new:  mutate(inPlace().Suspend(true).Obj(), withEpoch("4")),
			want: []string{"FieldValueForbidden " + epochAnnotation},
		},
		"an invalid field left as it was does not block other changes": {
			old: mutate(inPlace().Suspend(true).Obj(), withEpoch("3")),
			new: mutate(inPlace().Obj(), withEpoch("3")),
		},
		// The rules for InPlaceRestart read restartStrategy and report on
		// the replicatedJobs: switching an existing JobSet to it makes
		// unchanged replicatedJobs invalid, and that is a change to judge.
		"a change that makes unchanged fields invalid is rejected": {
			old: wrappers.MakeJobSet("trainer", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj(),
			new: wrappers.MakeJobSet("trainer", "ns").RestartStrategy(jobset.InPlaceRestart).
				ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj(),
			want: []string{
				"FieldValueInvalid spec.replicatedJobs[0].template.spec.backoffLimit",
				"FieldValueNotSupported spec.replicatedJobs[0].template.spec.podReplacementPolicy",
				"FieldValueRequired spec.replicatedJobs[0].template.spec.template.spec.initContainers",
				// InPlaceRestart's defaults change the Job template.
				"FieldValueForbidden spec.replicatedJobs[0]",
			},
		},
		// The mutating webhook fills today's defaults into every update; a
		// JobSet stored before one of them existed lacks it.
		"a default added since the JobSet was stored is not a change": {
			old: inPlace().Obj(),
			new: mutate(inPlace().Annotations(map[string]string{"team": "a"}).Obj(), Default),
		},
		"the immutability of replicatedJobs is not ratcheted": {
			old: storedBefore(inPlace()),
			new: mutate(storedBefore(inPlace()), func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec.Containers[0].Image = "other"
			}),
			want: []string{"FieldValueForbidden spec.replicatedJobs[1]"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, fieldsOf(ValidateUpdate(tc.new, tc.old, features.Gates{}))); diff != "" {
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

// TestDefaultLeavesAJobSetBeingDeletedAlone: the updates a JobSet being
// deleted still gets remove finalizers; defaulting must neither change its
// spec nor fail them (here, a webhook without an agent image asked to
// inject one).
func TestDefaultLeavesAJobSetBeingDeletedAlone(t *testing.T) {
	js := wrappers.MakeJobSet("trainer", "ns").RestartStrategy(jobset.InPlaceRestart).
		Annotations(map[string]string{jobset.InjectAgentKey: "true"}).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
	js.DeletionTimestamp = ptr.To(metav1.Now())
	want := js.DeepCopy()
	if err := (Webhook{}).Default(t.Context(), js); err != nil {
		t.Fatalf("Default: %v", err)
	}
	if diff := cmp.Diff(want, js); diff != "" {
		t.Errorf("Default changed a JobSet being deleted (-want +got):\n%s", diff)
	}
}

func TestWarnings(t *testing.T) {
	workersPod := func(js *jobset.JobSet) *corev1.PodSpec { return &js.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec }
	failJob42 := &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
		Action: batchv1.PodFailurePolicyActionFailJob,
		OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			ContainerName: ptr.To("worker"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
	}}}
	cases := map[string]struct {
		js   *jobset.JobSet
		want []string // a substring of each warning, in order
	}{
		"a complete JobSet": {js: inPlace().Obj()},
		"no startup probe on the agent, no restart rule on a worker": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				workersPod(js).InitContainers[0].StartupProbe = nil
				workersPod(js).Containers[0].RestartPolicyRules = nil
			}),
			want: []string{"no startupProbe", "no RestartAllContainers rule"},
		},
		// Exit 0 comes only from a SIGTERM, which the
		// kubelet sends the agent alone only when asked to (liveness,
		// resize): risky, not wrong.
		"the agent's rule leaves out exit 0 (NotIn [0])": {
			js:   mutate(inPlace().Obj(), func(js *jobset.JobSet) { setAgentRule(js, corev1.ContainerRestartRuleOnExitCodesOpNotIn, 0) }),
			want: []string{agentRules + ": the agent restarts alone when it exits 0"},
		},
		// Waiting is not failing.
		"the agent's startup probe gives up after ten minutes": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				workersPod(js).InitContainers[0].StartupProbe.FailureThreshold = 600
			}),
			want: []string{"spec.replicatedJobs[1].template.spec.template.spec.initContainers[0].startupProbe: gives up after 10m0s"},
		},
		// A hand-written rule that restarts in place on a FailJob code keeps
		// FailJobSet from ever firing.
		"a worker rule that restarts in place on a FailJob code": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[1].Template.Spec.PodFailurePolicy = failJob42
				workersPod(js).Containers[0].RestartPolicyRules = restartAllUnless(0)
			}),
			want: []string{"spec.replicatedJobs[1].template.spec.template.spec.containers[0].restartPolicyRules: restarts the Pod in place on exit code 42, which podFailurePolicy.rules[0] maps to FailJob"},
		},
		"a worker rule that leaves the FailJob code out": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[1].Template.Spec.PodFailurePolicy = failJob42
				workersPod(js).Containers[0].RestartPolicyRules = []corev1.ContainerRestartRule{{
					Action: corev1.ContainerRestartRuleActionRestartAllContainers,
					ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{
						Operator: corev1.ContainerRestartRuleOnExitCodesOpNotIn, Values: []int32{0, 42, 43}},
				}}
			}),
		},
		"a FailJob code of another container": {
			js: mutate(inPlace().Obj(), func(js *jobset.JobSet) {
				p := failJob42.DeepCopy()
				p.Rules[0].OnExitCodes.ContainerName = ptr.To("sidekick")
				js.Spec.ReplicatedJobs[1].Template.Spec.PodFailurePolicy = p
				workersPod(js).Containers[0].RestartPolicyRules = restartAllUnless(0)
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Warnings(tc.js)
			if len(got) != len(tc.want) {
				t.Fatalf("warnings = %q, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
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
		if err := manifest.ReadObject(filepath.Join(root, "docs", "examples", name), js); err != nil {
			t.Fatal(err)
		}
		return js
	}
	documented := read("story1-inplace.yaml")
	Default(documented)
	podTier := read("story1-injected.yaml")
	podTier.Annotations[jobset.WorkerWrapperKey] = "false"
	InjectAgent(podTier, sidecar.Options{Image: "ghcr.io/fastjobset/jobset-agent:" + version.Tag})
	Default(podTier)
	if diff := cmp.Diff(documented.Spec, podTier.Spec); diff != "" {
		t.Errorf("injection without the wrapper differs from the documented manifest docs/examples/story1-inplace.yaml (-documented +injected):\n%s", diff)
	}

	// By default, the same with the wrapper in place: nothing else differs.
	injected := read("story1-injected.yaml")
	InjectAgent(injected, sidecar.Options{Image: "ghcr.io/fastjobset/jobset-agent:" + version.Tag})
	Default(injected)
	wrapped := documented.DeepCopy()
	for i := range wrapped.Spec.ReplicatedJobs {
		if !sidecar.InjectWrapper(&wrapped.Spec.ReplicatedJobs[i].Template.Spec.Template.Spec, sidecar.Options{Image: "ghcr.io/fastjobset/jobset-agent:" + version.Tag}) {
			t.Fatalf("replicatedJob %s of story1-inplace.yaml cannot be wrapped", wrapped.Spec.ReplicatedJobs[i].Name)
		}
	}
	if diff := cmp.Diff(wrapped.Spec, injected.Spec); diff != "" {
		t.Errorf("injection differs from the documented manifest docs/examples/story1-inplace.yaml with the wrapper (-documented +injected):\n%s", diff)
	}
	if w := Warnings(injected); len(w) > 0 {
		t.Errorf("warnings for the injected example: %q", w)
	}
	again := injected.DeepCopy()
	InjectAgent(again, sidecar.Options{Image: "ghcr.io/fastjobset/jobset-agent:" + version.Tag})
	if diff := cmp.Diff(injected, again); diff != "" {
		t.Errorf("injection is not idempotent:\n%s", diff)
	}
	if errs := Validate(injected, features.Gates{}); len(errs) > 0 {
		t.Errorf("an injected JobSet is invalid: %v", errs)
	}

	custom := wrappers.MakeJobSet("t", "ns").RestartStrategy(jobset.InPlaceRestart).
		ReplicatedJob(wrappers.MakeReplicatedJob("w").Obj()).Obj()
	InjectAgent(custom, sidecar.Options{Image: "a", RestartExitCode: 42})
	agentC := custom.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.InitContainers[0]
	if agentC.Env[len(agentC.Env)-1].Value != "42" {
		t.Errorf("a custom exit code must reach the agent: %+v", agentC.Env)
	}
	// Every exit, 0 (SIGTERM from the kubelet, to the agent alone) and
	// the custom code included.
	if rules := agentC.RestartPolicyRules; len(rules) != 1 || rules[0].Action != corev1.ContainerRestartRuleActionRestartAllContainers ||
		rules[0].ExitCodes.Operator != corev1.ContainerRestartRuleOnExitCodesOpNotIn || len(rules[0].ExitCodes.Values) != 0 {
		t.Errorf("the agent's rule must restart all containers on every exit (NotIn []), 0 and the custom code included: %+v", rules)
	}
	// Waiting is not failing.
	if got := agentC.StartupProbe.FailureThreshold; got != math.MaxInt32 {
		t.Errorf("the injected startup probe gives up after %d probes: a long gather kills every waiting agent", got)
	}
}

// restartAllUnless is a RestartAllContainers rule for every exit code but
// the given ones.
func restartAllUnless(codes ...int32) []corev1.ContainerRestartRule {
	return []corev1.ContainerRestartRule{{
		Action:    corev1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpNotIn, Values: codes},
	}}
}

// The injected worker rule leaves out the exit codes
// that the Job's podFailurePolicy maps to FailJob, so that the Pod fails,
// the Job fails and the JobSet's failure policy decides; matched as the
// Job controller matches them (first rule wins, containerName scopes).
func TestInjectedWorkerRuleLeavesOutFailJobCodes(t *testing.T) {
	onExit := func(action batchv1.PodFailurePolicyAction, container string, op batchv1.PodFailurePolicyOnExitCodesOperator, codes ...int32) batchv1.PodFailurePolicyRule {
		r := batchv1.PodFailurePolicyRule{Action: action, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: op, Values: codes}}
		if container != "" {
			r.OnExitCodes.ContainerName = ptr.To(container)
		}
		return r
	}
	const (
		in    = batchv1.PodFailurePolicyOnExitCodesOpIn
		notIn = batchv1.PodFailurePolicyOnExitCodesOpNotIn
	)
	restartAllOn := func(codes ...int32) []corev1.ContainerRestartRule {
		return []corev1.ContainerRestartRule{{
			Action:    corev1.ContainerRestartRuleActionRestartAllContainers,
			ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: codes},
		}}
	}
	var allButSeven []int32
	for c := int32(1); c <= 255; c++ {
		if c != 7 {
			allButSeven = append(allButSeven, c)
		}
	}
	cases := map[string]struct {
		rules []batchv1.PodFailurePolicyRule
		want  []corev1.ContainerRestartRule
	}{
		"no podFailurePolicy": {want: restartAllUnless(0)},
		"story 2: FailJob In [42] for the worker": {
			rules: []batchv1.PodFailurePolicyRule{onExit(batchv1.PodFailurePolicyActionFailJob, "worker", in, 42)},
			want:  restartAllUnless(0, 42),
		},
		"FailJob In [42] for every container": {
			rules: []batchv1.PodFailurePolicyRule{onExit(batchv1.PodFailurePolicyActionFailJob, "", in, 42, 3)},
			want:  restartAllUnless(0, 3, 42),
		},
		"FailJob for another container": {
			rules: []batchv1.PodFailurePolicyRule{onExit(batchv1.PodFailurePolicyActionFailJob, "sidekick", in, 42)},
			want:  restartAllUnless(0),
		},
		"an earlier Ignore rule wins, as in the Job controller": {
			rules: []batchv1.PodFailurePolicyRule{
				onExit(batchv1.PodFailurePolicyActionIgnore, "", in, 42),
				onExit(batchv1.PodFailurePolicyActionFailJob, "worker", in, 42, 43),
			},
			want: restartAllUnless(0, 43),
		},
		"Count codes still restart in place": {
			rules: []batchv1.PodFailurePolicyRule{onExit(batchv1.PodFailurePolicyActionCount, "worker", in, 43)},
			want:  restartAllUnless(0),
		},
		"FailJob NotIn [0, 1, 2]: only 1 and 2 restart in place": {
			rules: []batchv1.PodFailurePolicyRule{onExit(batchv1.PodFailurePolicyActionFailJob, "worker", notIn, 0, 1, 2)},
			want:  restartAllOn(1, 2),
		},
		"FailJob on 254 codes: the rule stays within Pod validation's 255 values": {
			rules: []batchv1.PodFailurePolicyRule{onExit(batchv1.PodFailurePolicyActionFailJob, "worker", in, allButSeven...)},
			want:  restartAllOn(7),
		},
		"FailJob on every code: no rule, the Pod fails": {
			rules: []batchv1.PodFailurePolicyRule{onExit(batchv1.PodFailurePolicyActionFailJob, "", notIn, 0)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			js := wrappers.MakeJobSet("t", "ns").RestartStrategy(jobset.InPlaceRestart).
				ReplicatedJob(wrappers.MakeReplicatedJob("w").Obj()).Obj()
			if tc.rules != nil {
				js.Spec.ReplicatedJobs[0].Template.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: tc.rules}
			}
			InjectAgent(js, sidecar.Options{Image: "a", RestartExitCode: 42})
			pod := js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
			if diff := cmp.Diff(tc.want, pod.Containers[0].RestartPolicyRules); diff != "" {
				t.Errorf("worker rules (-want +got):\n%s", diff)
			}
			if rules := pod.InitContainers[0].RestartPolicyRules; len(rules) != 1 || len(rules[0].ExitCodes.Values) != 0 {
				t.Errorf("the agent's rule must restart all on every exit, its restart code 42 included, whatever podFailurePolicy says: %+v", rules)
			}
			if len(Warnings(js)) > 0 {
				t.Errorf("an injected JobSet gets warnings: %q", Warnings(js))
			}
		})
	}
}

// TestInjectionLeavesInitializersAndLaunchersOutsideTheGroup: with agent
// injection, Trainer's initializers (waited for to Complete) and an MPI
// launcher (waiting for Ready) get no agent and keep the Job API's
// defaults, and the JobSet is admitted.
func TestInjectionLeavesInitializersAndLaunchersOutsideTheGroup(t *testing.T) {
	strip := func(js *jobset.JobSet) *jobset.JobSet {
		js.Annotations = map[string]string{jobset.InjectAgentKey: "true"}
		for i := range js.Spec.ReplicatedJobs {
			spec := &js.Spec.ReplicatedJobs[i].Template.Spec
			spec.Template.Spec.InitContainers = nil
			for j := range spec.Template.Spec.Containers {
				spec.Template.Spec.Containers[j].RestartPolicyRules = nil
			}
			spec.BackoffLimit, spec.PodReplacementPolicy = nil, nil
		}
		return js
	}
	cases := map[string]struct {
		js          *jobset.JobSet
		wantMembers []string
	}{
		"torch with initializers": {js: strip(trainerInitializers()), wantMembers: []string{"node"}},
		"MPI launcher":            {js: strip(mpiLauncher()), wantMembers: []string{"node"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			InjectAgent(tc.js, sidecar.Options{Image: "agent:test", RestartExitCode: 88})
			Default(tc.js)
			if diff := cmp.Diff(tc.wantMembers, sets.List(groupMembers(tc.js))); diff != "" {
				t.Errorf("members (-want +got):\n%s", diff)
			}
			for _, rj := range tc.js.Spec.ReplicatedJobs {
				if !groupMembers(tc.js).Has(rj.Name) && rj.Template.Spec.BackoffLimit != nil {
					t.Errorf("%s, outside the group, got backoffLimit %d", rj.Name, *rj.Template.Spec.BackoffLimit)
				}
			}
			if errs := Validate(tc.js, features.Gates{}); len(errs) > 0 {
				t.Errorf("rejected: %v", errs)
			}
		})
	}
}

// The framework examples say what injection makes of them
// (docs/training-script.md): the worker runs under the wrapper, its command
// and arguments kept, and its restart rule leaves out 0 and the fatal code
// the Job's podFailurePolicy fails the Job on (JAX's 42; torchrun reports
// every failure as 1), so that the fatal code fails the JobSet and every
// other code restarts the group in place.
func TestFrameworkExamplesAfterInjection(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		command  []string
		restarts []int32 // the codes the worker's rule leaves out
	}{
		"pytorch-ddp.yaml": {command: []string{"torchrun"}, restarts: []int32{0}},
		"jax.yaml":         {command: []string{"python", "train.py"}, restarts: []int32{0, 42}},
	}
	for file, want := range cases {
		t.Run(file, func(t *testing.T) {
			js := &jobset.JobSet{}
			if err := manifest.ReadObject(filepath.Join(root, "docs", "examples", file), js); err != nil {
				t.Fatal(err)
			}
			InjectAgent(js, sidecar.Options{Image: "ghcr.io/fastjobset/jobset-agent:" + version.Tag})
			Default(js)
			if errs := Validate(js, features.Gates{}); len(errs) > 0 {
				t.Fatalf("invalid after injection: %v", errs)
			}
			if w := Warnings(js); len(w) > 0 {
				t.Errorf("warnings after injection: %q", w)
			}
			pod := js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
			worker := pod.Containers[0]
			if !slices.Contains(worker.Command, "--") || !slices.Equal(worker.Command[slices.Index(worker.Command, "--")+1:], want.command) {
				t.Errorf("worker command %q, want %q run under the wrapper", worker.Command, want.command)
			}
			rules := worker.RestartPolicyRules
			if len(rules) != 1 || rules[0].Action != corev1.ContainerRestartRuleActionRestartAllContainers ||
				rules[0].ExitCodes.Operator != corev1.ContainerRestartRuleOnExitCodesOpNotIn ||
				!slices.Equal(rules[0].ExitCodes.Values, want.restarts) {
				t.Errorf("worker restart rules %+v, want RestartAllContainers on NotIn %v", rules, want.restarts)
			}
			if pod.ServiceAccountName != "jobset-agent" {
				t.Errorf("serviceAccountName %q, want jobset-agent (set by injection)", pod.ServiceAccountName)
			}
		})
	}
}
