package jobsetwebhook_test

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/api/version"
	"github.com/fastjobset/jobset/images/manifest"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
	"github.com/fastjobset/jobset/webhooks/jobsetwebhook"
)

var _ = Describe("JobSet admission", func() {
	ctx := context.Background()
	var ns string
	BeforeEach(func() {
		ns = framework.TestNamespace(ctx, k8sClient, "admission")
		warnings.take()
	})

	It("defaults what InPlaceRestart needs, and admits a complete JobSet without warnings", func() {
		js := wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(2).InPlaceReady().Obj()).Obj()
		spec := &js.Spec.ReplicatedJobs[0].Template.Spec
		spec.BackoffLimit, spec.PodReplacementPolicy = nil, nil
		Expect(k8sClient.Create(ctx, js)).To(Succeed())

		got := &jobset.JobSet{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), got)).To(Succeed())
		gotSpec := got.Spec.ReplicatedJobs[0].Template.Spec
		Expect(*gotSpec.BackoffLimit).To(BeEquivalentTo(math.MaxInt32))
		Expect(*gotSpec.PodReplacementPolicy).To(Equal(batchv1.Failed))
		Expect(*got.Spec.Network.EnableDNSHostnames).To(BeTrue())
		Expect(warnings.take()).To(BeEmpty())
	})

	It("rejects an InPlaceRestart JobSet without the agent, naming the field and the fix", func() {
		js := wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		err := k8sClient.Create(ctx, js)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(And(
			ContainSubstring("spec.replicatedJobs[0].template.spec.template.spec.initContainers"),
			ContainSubstring("RestartAllContainers"),
			ContainSubstring(`annotate the JobSet jobset.sigs.k8s.io/inject-agent: "true"`),
			ContainSubstring(version.Docs("user-guide.md#setup")),
			ContainSubstring("https://"),
		))
	})

	It("rejects community JobSet's own agent, asked for injection or not, naming it and the fix", func() {
		for _, inject := range []bool{false, true} {
			js := wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).
				ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
			if inject {
				js.Annotations = map[string]string{jobset.InjectAgentKey: "true"}
			}
			js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.InitContainers = []corev1.Container{{
				Name:          "in-place-restart-agent",
				Image:         "registry.example.com/jobset/in-place-restart-agent:v0.12.0",
				RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
				Env:           []corev1.EnvVar{{Name: "JOBSET_NAME", Value: "trainer"}, {Name: "POD_NAME", Value: "p"}},
				RestartPolicyRules: []corev1.ContainerRestartRule{{
					Action:    corev1.ContainerRestartRuleActionRestartAllContainers,
					ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{1}},
				}},
			}}
			err := k8sClient.Create(ctx, js)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(And(
				ContainSubstring("spec.replicatedJobs[0].template.spec.template.spec.initContainers[0]"),
				ContainSubstring("community JobSet's in-place restart agent (its image is in-place-restart-agent)"),
				ContainSubstring(`remove this container and annotate the JobSet jobset.sigs.k8s.io/inject-agent: "true"`),
				ContainSubstring(version.Docs("user-guide.md#migrating-from-community-jobset")),
				Not(ContainSubstring("NAMESPACE"))), "inject-agent %t", inject)
		}
	})

	It("injects the agent into a JobSet that only asks for InPlaceRestart and the injection", func() {
		js := wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).
			Annotations(map[string]string{jobset.InjectAgentKey: "true"}).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(2).Obj()).Obj()
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		// The worker names no command, so it is not wrapped (wrapper_test.go).
		Expect(warnings.take()).To(ConsistOf(ContainSubstring("no worker wrapper")))
		pod := js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
		Expect(pod.InitContainers).To(ConsistOf(HaveField("Name", "jobset-agent")))
		Expect(pod.Containers[0].RestartPolicyRules).To(HaveLen(1))
	})

	// Each rule of restartStrategy InPlaceRestart, as users meet it: the
	// apiserver answers Invalid, naming the field.
	DescribeTable("rejects an InPlaceRestart JobSet that breaks a rule",
		func(field string, breakRule func(*jobset.JobSet)) {
			js := wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).
				ReplicatedJob(wrappers.MakeReplicatedJob("driver").InPlaceReady().Obj()).
				ReplicatedJob(wrappers.MakeReplicatedJob("workers").Pods(2).InPlaceReady().Obj()).Obj()
			breakRule(js)
			err := k8sClient.Create(ctx, js)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring(field))
		},
		Entry("backoffLimit must be MaxInt32", "spec.replicatedJobs[1].template.spec.backoffLimit",
			func(js *jobset.JobSet) { js.Spec.ReplicatedJobs[1].Template.Spec.BackoffLimit = ptr.To[int32](6) }),
		Entry("podReplacementPolicy must be Failed", "spec.replicatedJobs[1].template.spec.podReplacementPolicy",
			func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[1].Template.Spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
			}),
		Entry("completions must equal parallelism", "spec.replicatedJobs[1].template.spec.completions",
			func(js *jobset.JobSet) { js.Spec.ReplicatedJobs[1].Template.Spec.Completions = ptr.To[int32](3) }),
		Entry("the agent sidecar must be there", "spec.replicatedJobs[1].template.spec.template.spec.initContainers",
			func(js *jobset.JobSet) { js.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec.InitContainers = nil }),
		Entry("the agent needs its environment", "spec.replicatedJobs[1].template.spec.template.spec.initContainers[0].env",
			func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec.InitContainers[0].Env = nil
			}),
		Entry("startupPolicy InOrder would deadlock the barrier", "spec.startupPolicy.startupPolicyOrder",
			func(js *jobset.JobSet) {
				js.Spec.StartupPolicy = &jobset.StartupPolicy{StartupPolicyOrder: jobset.InOrder}
			}),
		Entry("dependsOn would deadlock the barrier", "spec.replicatedJobs[1].dependsOn",
			func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[1].DependsOn = []jobset.DependsOn{{Name: "driver", Status: jobset.DependencyReady}}
			}),
		Entry("the agent must take its worker with it on every exit (the KEP's In [88] does not)",
			"spec.replicatedJobs[1].template.spec.template.spec.initContainers[0].restartPolicyRules: Invalid value",
			func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec.InitContainers[0].RestartPolicyRules = []corev1.ContainerRestartRule{{
					Action: corev1.ContainerRestartRuleActionRestartAllContainers,
					ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{
						Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{88}},
				}}
			}),
		Entry("a Pod template must not carry the epoch annotation",
			"spec.replicatedJobs[1].template.spec.template.metadata.annotations[jobset.sigs.k8s.io/epoch]",
			func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[1].Template.Spec.Template.Annotations = map[string]string{jobset.EpochKey: "3"}
			}),
		Entry("backoffLimitPerIndex would leave a failed index unreplaced", "spec.replicatedJobs[1].template.spec.backoffLimitPerIndex",
			func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[1].Template.Spec.BackoffLimitPerIndex = ptr.To[int32](2)
			}),
		Entry("FailIndex would leave a failed index unreplaced", "spec.replicatedJobs[1].template.spec.podFailurePolicy.rules[0].action",
			func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[1].Template.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
					Action: batchv1.PodFailurePolicyActionFailIndex,
					OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
						Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
				}}}
			}),
	)

	// Kubeflow Trainer's torch runtime with initializers.
	It("admits an in-place group that waits for initializers outside it, and injects the agent only into the group", func() {
		js := wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).
			Annotations(map[string]string{jobset.InjectAgentKey: "true"}).
			ReplicatedJob(wrappers.MakeReplicatedJob("dataset-initializer").Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("model-initializer").Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("node").Replicas(1).Pods(2).Obj()).Obj()
		js.Spec.ReplicatedJobs[2].DependsOn = []jobset.DependsOn{
			{Name: "dataset-initializer", Status: jobset.DependencyComplete},
			{Name: "model-initializer", Status: jobset.DependencyComplete},
		}
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		Expect(warnings.take()).To(ConsistOf(ContainSubstring("spec.replicatedJobs[2].template.spec.template.spec.containers: no worker wrapper")))
		got := &jobset.JobSet{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), got)).To(Succeed())
		for _, rj := range got.Spec.ReplicatedJobs[:2] {
			Expect(rj.Template.Spec.Template.Spec.InitContainers).To(BeEmpty(), rj.Name)
			Expect(rj.Template.Spec.BackoffLimit).To(BeNil(), "%s is left to the Job API's default", rj.Name)
		}
		Expect(got.Spec.ReplicatedJobs[2].Template.Spec.Template.Spec.InitContainers).To(ConsistOf(HaveField("Name", "jobset-agent")))
	})

	It("rejects a group member waiting for a member through a replicatedJob outside the group, naming the deadlock", func() {
		js := wrappers.MakeJobSet("mpi", ns).RestartStrategy(jobset.InPlaceRestart).
			ReplicatedJob(wrappers.MakeReplicatedJob("node").InPlaceReady().Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("launcher").Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("evaluator").InPlaceReady().Obj()).Obj()
		js.Spec.ReplicatedJobs[1].DependsOn = []jobset.DependsOn{{Name: "node", Status: jobset.DependencyReady}}
		js.Spec.ReplicatedJobs[2].DependsOn = []jobset.DependsOn{{Name: "launcher", Status: jobset.DependencyComplete}}
		err := k8sClient.Create(ctx, js)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(And(
			ContainSubstring("spec.replicatedJobs[2].dependsOn[0]"),
			ContainSubstring(jobsetwebhook.ErrDependsOnDeadlock),
			ContainSubstring("evaluator -> launcher -> node")))
	})

	It("injects a worker rule that leaves out the exit codes podFailurePolicy maps to FailJob, and an agent that restarts all on every exit", func() {
		rj := wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(2).Obj()
		rj.Template.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action: batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				ContainerName: ptr.To("worker"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
		}}}
		js := wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).
			Annotations(map[string]string{jobset.InjectAgentKey: "true"}).ReplicatedJob(rj).Obj()
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		Expect(warnings.take()).To(ConsistOf(ContainSubstring("no worker wrapper")))

		got := &jobset.JobSet{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), got)).To(Succeed())
		pod := got.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
		Expect(pod.Containers[0].RestartPolicyRules).To(ConsistOf(HaveField("ExitCodes.Values", ConsistOf(int32(0), int32(42)))))
		Expect(pod.InitContainers[0].RestartPolicyRules).To(ConsistOf(And(
			HaveField("Action", corev1.ContainerRestartRuleActionRestartAllContainers),
			HaveField("ExitCodes.Operator", corev1.ContainerRestartRuleOnExitCodesOpNotIn),
			HaveField("ExitCodes.Values", BeEmpty()))))
		Expect(pod.InitContainers[0].StartupProbe.FailureThreshold).To(BeEquivalentTo(math.MaxInt32))
	})

	// Shapes that are risky rather than wrong: admitted, with a warning
	// that says what goes wrong and the fix.
	DescribeTable("warns about an InPlaceRestart JobSet that may restart more than it must",
		func(warning string, risk func(*jobset.JobSet)) {
			js := wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).
				ReplicatedJob(wrappers.MakeReplicatedJob("workers").Pods(2).InPlaceReady().Obj()).Obj()
			risk(js)
			Expect(k8sClient.Create(ctx, js)).To(Succeed())
			Expect(warnings.take()).To(ContainElement(ContainSubstring(warning)))
		},
		Entry("the agent's rule leaves out exit 0", "the agent restarts alone when it exits 0",
			func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.InitContainers[0].RestartPolicyRules[0].ExitCodes.Values = []int32{0}
			}),
		Entry("the agent's startup probe gives up during a long gather", "startupProbe: gives up after 10m0s",
			func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.InitContainers[0].StartupProbe.FailureThreshold = 600
			}),
		Entry("a worker rule restarts in place on a FailJob code", "which podFailurePolicy.rules[0] maps to FailJob",
			func(js *jobset.JobSet) {
				spec := &js.Spec.ReplicatedJobs[0].Template.Spec
				spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
					Action: batchv1.PodFailurePolicyActionFailJob,
					OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
						Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
				}}}
				spec.Template.Spec.Containers[0].RestartPolicyRules[0].ExitCodes.Values = []int32{0}
			}),
	)

	// Community JobSet's rules, as users meet them: Invalid, naming the
	// field.
	DescribeTable("rejects a JobSet that breaks a community JobSet rule",
		func(field string, breakRule func(*jobset.JobSet)) {
			js := wrappers.MakeJobSet("trainer", ns).
				ReplicatedJob(wrappers.MakeReplicatedJob("driver").Obj()).
				ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(2).Obj()).Obj()
			breakRule(js)
			err := k8sClient.Create(ctx, js)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring(field))
		},
		Entry("the name must be a DNS label (it prefixes Pod hostnames)", "metadata.name",
			func(js *jobset.JobSet) { js.Name = "trainer.v1" }),
		Entry("Pod hostnames must fit in 63 characters", "spec.replicatedJobs[1].name",
			func(js *jobset.JobSet) { js.Name = strings.Repeat("t", 56) }),
		Entry("success policy targets must exist", "spec.successPolicy.targetReplicatedJobs[0]",
			func(js *jobset.JobSet) {
				js.Spec.SuccessPolicy = &jobset.SuccessPolicy{Operator: jobset.OperatorAll, TargetReplicatedJobs: []string{"evaluator"}}
			}),
		Entry("failure policy rule targets must exist", "spec.failurePolicy.rules[0].targetReplicatedJobs[0]",
			func(js *jobset.JobSet) {
				js.Spec.FailurePolicy = &jobset.FailurePolicy{Rules: []jobset.FailurePolicyRule{
					{Name: "failFast", Action: jobset.FailJobSet, TargetReplicatedJobs: []string{"evaluator"}},
				}}
			}),
		Entry("failure message patterns must be regular expressions", "spec.failurePolicy.rules[0].onJobFailureMessagePatterns[0]",
			func(js *jobset.JobSet) {
				js.Spec.FailurePolicy = &jobset.FailurePolicy{Rules: []jobset.FailurePolicyRule{
					{Name: "oom", Action: jobset.FailJobSet, OnJobFailureMessagePatterns: []string{"(unclosed"}},
				}}
			}),
		Entry("the coordinator must be a Pod of the JobSet", "spec.coordinator.jobIndex",
			func(js *jobset.JobSet) {
				js.Spec.Coordinator = &jobset.Coordinator{ReplicatedJob: "workers", JobIndex: 2}
			}),
		Entry("dependsOn must name an earlier replicatedJob", "spec.replicatedJobs[0].dependsOn[0].name",
			func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[0].DependsOn = []jobset.DependsOn{{Name: "workers", Status: jobset.DependencyReady}}
			}),
		Entry("a volumeClaimPolicies template must be mounted by some container", "spec.volumeClaimPolicies[0].templates[0].metadata.name",
			func(js *jobset.JobSet) {
				js.Spec.VolumeClaimPolicies = wrappers.MakeJobSet("", "").VolumeClaimPolicy("", "checkpoints").Spec.VolumeClaimPolicies
			}),
		Entry("a volumeClaimPolicies template's claims live in the JobSet's namespace", "volumeClaimPolicies[].templates[].metadata.namespace",
			func(js *jobset.JobSet) {
				js.Spec.VolumeClaimPolicies = wrappers.MakeJobSet("", "").VolumeClaimPolicy("", "checkpoints").Spec.VolumeClaimPolicies
				js.Spec.VolumeClaimPolicies[0].Templates[0].Namespace = "other"
				js.Spec.ReplicatedJobs[0] = wrappers.MakeReplicatedJob("driver").MountVolumes("checkpoints").Obj()
			}),
	)

	It("rejects adding a replicatedJob to a created JobSet", func() {
		js := wrappers.MakeJobSet("trainer", ns).ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		patch := client.MergeFrom(js.DeepCopy())
		js.Spec.ReplicatedJobs = append(js.Spec.ReplicatedJobs, wrappers.MakeReplicatedJob("evaluator").Obj())
		err := k8sClient.Patch(ctx, js, patch)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("spec.replicatedJobs"))
	})

	It("admits every documented example, the community JobSet ones among them", func() {
		root, err := framework.RepoRoot()
		Expect(err).NotTo(HaveOccurred())
		files, err := filepath.Glob(filepath.Join(root, "docs", "examples", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(files).NotTo(BeEmpty())
		for _, f := range files {
			objs, err := manifest.Read(f)
			Expect(err).NotTo(HaveOccurred())
			for _, u := range objs {
				u.SetNamespace(ns)
				Expect(k8sClient.Create(ctx, u)).To(Succeed(), "%s", filepath.Base(f))
			}
		}
		Expect(warnings.take()).To(BeEmpty())
	})

	It("relays warnings for likely mistakes", func() {
		js := wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").InPlaceReady().Obj()).Obj()
		js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.InitContainers[0].StartupProbe = nil
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		Expect(warnings.take()).To(ContainElement(ContainSubstring("no startupProbe")))
	})

	It("lets a suspended JobSet's Pod template take scheduling directives, and nothing else", func() {
		js := wrappers.MakeJobSet("trainer", ns).Suspend(true).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		Expect(k8sClient.Create(ctx, js)).To(Succeed())

		patch := client.MergeFrom(js.DeepCopy())
		js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.NodeSelector = map[string]string{"pool": "a"}
		Expect(k8sClient.Patch(ctx, js, patch)).To(Succeed())

		patch = client.MergeFrom(js.DeepCopy())
		js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Image = "other"
		err := k8sClient.Patch(ctx, js, patch)
		Expect(err).To(MatchError(ContainSubstring("spec.replicatedJobs[0]")))
		Expect(err).To(MatchError(ContainSubstring("only the labels, annotations, nodeSelector")))

		By("and nothing at all once resumed")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), js)).To(Succeed())
		patch = client.MergeFrom(js.DeepCopy())
		js.Spec.Suspend = ptr.To(false)
		Expect(k8sClient.Patch(ctx, js, patch)).To(Succeed())
		patch = client.MergeFrom(js.DeepCopy())
		js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.NodeSelector = map[string]string{"pool": "b"}
		Expect(k8sClient.Patch(ctx, js, patch)).To(MatchError(ContainSubstring("replicatedJobs are immutable")))
	})

	// Kueue evicts or preempts a running JobSet with one update that sets
	// suspend and restores the Pod templates' scheduling directives it
	// injected on admission (community JobSet admits template changes when
	// either the old or the new object is suspended: pkg/webhooks/jobset_webhook.go
	// of v0.12.0, ValidateUpdate).
	It("admits Kueue's single suspend-and-restore update of a running JobSet", func() {
		js := wrappers.MakeJobSet("trainer", ns).Suspend(true).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		Expect(k8sClient.Create(ctx, js)).To(Succeed())

		By("Kueue admits it: resumes it and injects the flavor's directives in one update")
		js.Spec.Suspend = ptr.To(false)
		pod := &js.Spec.ReplicatedJobs[0].Template.Spec.Template
		pod.Labels = map[string]string{"kueue.x-k8s.io/podset": "workers"}
		pod.Spec.NodeSelector = map[string]string{"pool": "a"}
		pod.Spec.Tolerations = []corev1.Toleration{{Key: "pool", Operator: corev1.TolerationOpExists}}
		Expect(k8sClient.Update(ctx, js)).To(Succeed())

		By("Kueue evicts it: suspends it and restores the original template in one update")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), js)).To(Succeed())
		js.Spec.Suspend = ptr.To(true)
		pod = &js.Spec.ReplicatedJobs[0].Template.Spec.Template
		pod.Labels, pod.Spec.NodeSelector, pod.Spec.Tolerations = nil, nil, nil
		Expect(k8sClient.Update(ctx, js)).To(Succeed())

		got := &jobset.JobSet{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), got)).To(Succeed())
		Expect(got.Spec.Suspend).To(HaveValue(BeTrue()))
		Expect(got.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.NodeSelector).To(BeEmpty())

		By("suspending does not open the rest of the template")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), js)).To(Succeed())
		js.Spec.Suspend = ptr.To(false)
		Expect(k8sClient.Update(ctx, js)).To(Succeed())
		js.Spec.Suspend = ptr.To(true)
		js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Image = "other"
		Expect(k8sClient.Update(ctx, js)).To(MatchError(ContainSubstring("only the labels, annotations, nodeSelector")))
	})

	It("takes updates after the webhook added a default that a stored JobSet lacks", func() {
		js := wrappers.MakeJobSet("trainer", ns).ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		js.Spec.ReplicatedJobs[0].Template.Spec.CompletionMode = nil
		storeUnvalidated(ctx, js)
		Expect(js.Spec.ReplicatedJobs[0].Template.Spec.CompletionMode).To(BeNil(), "stored without today's defaults")

		patch := client.MergeFrom(js.DeepCopy())
		js.Annotations = map[string]string{"team": "a"}
		Expect(k8sClient.Patch(ctx, js, patch)).To(Succeed())
		Expect(js.Spec.ReplicatedJobs[0].Template.Spec.CompletionMode).To(HaveValue(Equal(batchv1.IndexedCompletion)),
			"the update took today's defaults")
	})

	// A JobSet stored under an older webhook's looser rules must stay
	// updatable once a newer webhook tightens them: Kueue suspends and
	// resumes it, and the garbage collector removes finalizers from it while
	// it is deleted. Updates are judged on what they change.
	Describe("a JobSet stored before a rule it breaks", func() {
		var js *jobset.JobSet
		BeforeEach(func() {
			js = wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).
				ReplicatedJob(wrappers.MakeReplicatedJob("workers").Pods(2).InPlaceReady().Obj()).Obj()
			js.Spec.ReplicatedJobs[0].Template.Spec.BackoffLimit = ptr.To[int32](6)
			js.Finalizers = []string{"example.com/hold"}
			storeUnvalidated(ctx, js)
			DeferCleanup(func() {
				got := &jobset.JobSet{}
				Expect(client.IgnoreNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), got))).To(Succeed())
				if len(got.Finalizers) > 0 {
					patch := client.MergeFrom(got.DeepCopy())
					got.Finalizers = nil
					Expect(client.IgnoreNotFound(k8sClient.Patch(ctx, got, patch))).To(Succeed())
				}
			})
		})

		It("takes metadata changes and Kueue's suspend, and rejects a change to an invalid value", func() {
			patch := client.MergeFrom(js.DeepCopy())
			js.Labels = map[string]string{"team": "a"}
			Expect(k8sClient.Patch(ctx, js, patch)).To(Succeed())

			patch = client.MergeFrom(js.DeepCopy())
			js.Spec.Suspend = ptr.To(true)
			Expect(k8sClient.Patch(ctx, js, patch)).To(Succeed())

			By("a suspended JobSet's Pod template may change, but not to something invalid")
			patch = client.MergeFrom(js.DeepCopy())
			js.Spec.ReplicatedJobs[0].Template.Spec.Template.Annotations = map[string]string{jobset.EpochKey: "3"}
			err := k8sClient.Patch(ctx, js, patch)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring("spec.replicatedJobs[0].template.spec.template.metadata.annotations[jobset.sigs.k8s.io/epoch]"))
			Expect(err.Error()).NotTo(ContainSubstring("backoffLimit"))
		})

		It("loses its finalizers while it is deleted", func() {
			Expect(k8sClient.Delete(ctx, js)).To(Succeed())
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), js)).To(Succeed())
			Expect(js.DeletionTimestamp).NotTo(BeNil())

			patch := client.MergeFrom(js.DeepCopy())
			js.Finalizers = nil
			Expect(k8sClient.Patch(ctx, js, patch)).To(Succeed())
			Eventually(func(g Gomega) {
				err := k8sClient.Get(ctx, client.ObjectKeyFromObject(js), &jobset.JobSet{})
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
			}).Should(Succeed())
		})
	})
})

// storeUnvalidated creates js as an older webhook would have admitted
// it: today's JobSet webhooks, mutating and validating, are told to skip
// it (an objectSelector on a label js carries), and restored before this
// returns.
func storeUnvalidated(ctx context.Context, js *jobset.JobSet) {
	GinkgoHelper()
	const skip = "test.jobset.x-k8s.io/stored-before-upgrade"
	selectJobSets := func(selector *metav1.LabelSelector) {
		validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "validating-webhook-configuration"}, validating)).To(Succeed())
		i := slices.IndexFunc(validating.Webhooks, func(w admissionregistrationv1.ValidatingWebhook) bool {
			return w.Name == "vjobset.jobset.x-k8s.io"
		})
		Expect(i).NotTo(BeNumerically("<", 0), "the JobSet validating webhook is installed")
		validating.Webhooks[i].ObjectSelector = selector
		Expect(k8sClient.Update(ctx, validating)).To(Succeed())

		mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "mutating-webhook-configuration"}, mutating)).To(Succeed())
		i = slices.IndexFunc(mutating.Webhooks, func(w admissionregistrationv1.MutatingWebhook) bool {
			return w.Name == "mjobset.jobset.x-k8s.io"
		})
		Expect(i).NotTo(BeNumerically("<", 0), "the JobSet mutating webhook is installed")
		mutating.Webhooks[i].ObjectSelector = selector
		Expect(k8sClient.Update(ctx, mutating)).To(Succeed())
	}
	restore := func() { selectJobSets(&metav1.LabelSelector{}) }
	selectJobSets(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: skip, Operator: metav1.LabelSelectorOpDoesNotExist,
	}}})
	DeferCleanup(restore)

	if js.Labels == nil {
		js.Labels = map[string]string{}
	}
	js.Labels[skip] = "true"
	// The apiserver picks up webhook configurations asynchronously: a
	// dry run of a labelled JobSet that today's validation refuses and
	// today's defaulting would change shows when both leave it alone.
	probe := wrappers.MakeJobSet("stored-before-upgrade-probe", js.Namespace).RestartStrategy(jobset.InPlaceRestart).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").InPlaceReady().Obj()).Obj()
	probe.Labels = map[string]string{skip: "true"}
	probe.Spec.ReplicatedJobs[0].Template.Spec.BackoffLimit = ptr.To[int32](6)
	probe.Spec.ReplicatedJobs[0].Template.Spec.CompletionMode = nil
	Eventually(func(g Gomega) {
		stored := probe.DeepCopy()
		g.Expect(k8sClient.Create(ctx, stored, client.DryRunAll)).To(Succeed(), "the validating webhook ignores the label")
		g.Expect(stored.Spec.ReplicatedJobs[0].Template.Spec.CompletionMode).To(BeNil(), "the mutating webhook ignores the label")
	}).Should(Succeed())
	Expect(k8sClient.Create(ctx, js.DeepCopy())).To(Succeed())
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), js)).To(Succeed())

	// Probes that carry the label: admitted and defaulted, or rejected,
	// only once the webhooks see JobSets like js again.
	restore()
	meta := metav1.ObjectMeta{Name: js.Name + "-probe", Namespace: js.Namespace, Labels: js.Labels}
	Eventually(func(g Gomega) {
		invalid := &jobset.JobSet{ObjectMeta: meta, Spec: *js.Spec.DeepCopy()}
		invalid.Spec.ReplicatedJobs[0].Name = "Not_A_DNS_Label"
		err := k8sClient.Create(ctx, invalid, client.DryRunAll)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "the validating webhook judges JobSets again: %v", err)

		valid := wrappers.MakeJobSet(meta.Name, meta.Namespace).ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		valid.Labels = meta.Labels
		g.Expect(k8sClient.Create(ctx, valid, client.DryRunAll)).To(Succeed())
		g.Expect(valid.Spec.Network).NotTo(BeNil(), "the mutating webhook defaults JobSets again")
	}).Should(Succeed())
}
