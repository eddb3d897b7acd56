package agent_test

import (
	"context"
	"net"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/agent"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// The agent drives a real wrapper (the test binary, re-executed) whose
// worker reports progress only when the spec touches its progress file.
var _ = Describe("Agent with hang timeouts", func() {
	var (
		c   client.Client
		js  *jobset.JobSet
		pod *corev1.Pod
		w   *realWrapper
		a   *agent.Agent
	)
	start := func(ctx context.Context, annotations map[string]string) {
		c = env.Client
		ns := framework.TestNamespace(ctx, c, "agent-hang")
		rj := wrappers.MakeReplicatedJob("workers").Obj()
		spec := &rj.Template.Spec.Template.Spec
		spec.InitContainers = []corev1.Container{{Name: agentspec.ContainerName, Image: "registry.k8s.io/pause:3.10",
			RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), RestartPolicyRules: sidecar.AgentRestartRules()}}
		spec.Containers[0].Command = []string{agentspec.WrapperBinary, "-control=" + agentspec.WrapperControl, "--", "train"}
		spec.Containers[0].RestartPolicyRules = []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestartAllContainers,
			ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpNotIn, Values: []int32{0}}}}
		js = wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).ReplicatedJob(rj).Obj()
		js.Annotations = annotations
		Expect(c.Create(ctx, js)).To(Succeed())
		pod = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "trainer-workers-0-0", Namespace: ns,
				Annotations: map[string]string{jobset.JobSetNameKey: "trainer"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "registry.k8s.io/pause:3.10"}}},
		}
		Expect(c.Create(ctx, pod)).To(Succeed())

		w = startRealWrapper()
		environment := map[string]string{agentspec.EnvNamespace: ns, agentspec.EnvPodName: pod.Name,
			agentspec.EnvJobSetName: "trainer", agentspec.EnvWrapperControl: w.control}
		cfg, err := agent.ConfigFromEnv(func(k string) string { return environment[k] })
		Expect(err).NotTo(HaveOccurred())
		listener, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		proxy := startProxy(env.Config)
		DeferCleanup(proxy.close)
		a = agent.New(cfg, proxy.client(), agent.WithListener(listener))
		runCtx, cancel := context.WithCancel(ctx)
		DeferCleanup(cancel)
		go a.Run(runCtx)
	}
	setEpochs := func(ctx context.Context, synced, deprecated int32) {
		Eventually(func() error {
			fresh := &jobset.JobSet{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(js), fresh); err != nil {
				return err
			}
			patch := client.MergeFrom(fresh.DeepCopy())
			fresh.Status.SyncedEpoch, fresh.Status.DeprecatedEpoch = ptr.To(synced), ptr.To(deprecated)
			return c.Status().Patch(ctx, fresh, patch)
		}).Should(Succeed())
	}
	annotations := func(ctx context.Context) func() map[string]string {
		return func() map[string]string {
			fresh := &corev1.Pod{}
			Expect(c.Get(ctx, client.ObjectKeyFromObject(pod), fresh)).To(Succeed())
			return fresh.Annotations
		}
	}
	report := func() {
		now := time.Now()
		Expect(os.WriteFile(w.file(agentspec.ProgressFileName), nil, 0o644)).To(Succeed())
		Expect(os.Chtimes(w.file(agentspec.ProgressFileName), now, now)).To(Succeed())
	}

	It("stops a worker that stops reporting progress, and joins the next epoch with the record of its hang", func(ctx SpecContext) {
		start(ctx, map[string]string{agentspec.FirstProgressTimeoutAnnotation: "1m", agentspec.ProgressTimeoutAnnotation: "2s"})
		Eventually(annotations(ctx)).Should(HaveKeyWithValue(jobset.EpochKey, "1"))
		setEpochs(ctx, 1, 0)
		Eventually(w.worker).ShouldNot(BeZero())
		first := w.worker()

		By("the worker reports progress once, then nothing: past the step timeout, the agent stops it and joins epoch 2, naming the epoch it left")
		report()
		Eventually(annotations(ctx), 20*time.Second).Should(And(HaveKeyWithValue(jobset.EpochKey, "2"), HaveKeyWithValue(agentspec.HungAnnotation, "1")))
		Expect(w.worker()).To(BeZero())
		Expect(a.WorkerRestarts()).To(Equal(int32(1)))

		By("epoch 2 synced: the next attempt starts, and its first report is timed by the first-progress timeout, not by the old report")
		setEpochs(ctx, 2, 1)
		Eventually(w.worker).ShouldNot(BeZero())
		Expect(w.worker()).NotTo(Equal(first))
		Consistently(annotations(ctx), 3*time.Second).Should(HaveKeyWithValue(jobset.EpochKey, "2"))
	})

	It("never declares hung a worker that never reported progress when the JobSet sets no first-progress timeout", func(ctx SpecContext) {
		start(ctx, map[string]string{agentspec.ProgressTimeoutAnnotation: "1s"})
		Eventually(annotations(ctx)).Should(HaveKeyWithValue(jobset.EpochKey, "1"))
		setEpochs(ctx, 1, 0)
		Eventually(w.worker).ShouldNot(BeZero())
		Consistently(annotations(ctx), 3*time.Second).Should(And(HaveKeyWithValue(jobset.EpochKey, "1"), Not(HaveKey(agentspec.HungAnnotation))))
		Expect(a.WorkerRestarts()).To(BeZero())
	})

	It("stops a worker that reports no progress within the first-progress timeout", func(ctx SpecContext) {
		start(ctx, map[string]string{agentspec.FirstProgressTimeoutAnnotation: "2s"})
		Eventually(annotations(ctx)).Should(HaveKeyWithValue(jobset.EpochKey, "1"))
		setEpochs(ctx, 1, 0)
		Eventually(w.worker).ShouldNot(BeZero())
		Eventually(annotations(ctx), 20*time.Second).Should(And(HaveKeyWithValue(jobset.EpochKey, "2"), HaveKeyWithValue(agentspec.HungAnnotation, "1")))
		Expect(w.worker()).To(BeZero())
	})
})
