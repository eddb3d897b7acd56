package agent_test

import (
	"context"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fastjobset/jobset/agent"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// The agent drives a real wrapper (the test binary, re-executed) whose
// worker reports progress only when the spec touches its progress file.
var _ = Describe("Agent with hang timeouts", func() {
	var (
		t *wrappedAgent
		w *realWrapper
		a *agent.Agent
	)
	start := func(ctx context.Context, annotations map[string]string) {
		t = startWrappedAgent(ctx, "agent-hang", annotations)
		w, a = t.w, t.a
	}
	setEpochs := func(ctx context.Context, synced, deprecated int32) { t.setEpochs(ctx, synced, deprecated) }
	annotations := func(ctx context.Context) func() map[string]string { return t.annotations(ctx) }
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

	It("in the Pod tier, restarts the Pod, and its next agent joins the next epoch with the record of the hang", func(ctx SpecContext) {
		start(ctx, map[string]string{jobset.RestartTierKey: jobset.RestartTierPod, agentspec.FirstProgressTimeoutAnnotation: "2s"})
		Eventually(annotations(ctx)).Should(HaveKeyWithValue(jobset.EpochKey, "1"))
		setEpochs(ctx, 1, 0)
		Eventually(w.worker).ShouldNot(BeZero())

		By("no progress within the first-progress timeout: the agent stops the worker and exits for the kubelet to restart the Pod")
		Eventually(t.exited, 20*time.Second).Should(Receive(Equal(agentspec.DefaultRestartExitCode)))
		Expect(w.worker()).To(BeZero())
		Expect(annotations(ctx)()).NotTo(HaveKey(agentspec.HungAnnotation), "the record comes only with the join of the next epoch")

		By("the controller deprecates epoch 1; the Pod's next agent joins epoch 2, naming the epoch its predecessor left on a hang")
		setEpochs(ctx, 1, 1)
		t.restart(ctx)
		Eventually(annotations(ctx), 20*time.Second).Should(And(HaveKeyWithValue(jobset.EpochKey, "2"), HaveKeyWithValue(agentspec.HungAnnotation, "1")))
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
