package jobsetwebhook_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// The suite's webhook runs with the RestartJob feature gate on.
var _ = Describe("RestartJob failure policy actions", func() {
	ctx := context.Background()
	var ns string
	BeforeEach(func() {
		ns = framework.TestNamespace(ctx, k8sClient, "restart-job")
	})
	restartJobRule := func(action jobset.FailurePolicyAction, targets ...string) jobset.FailurePolicyRule {
		return jobset.FailurePolicyRule{Name: "one", Action: action, TargetReplicatedJobs: targets}
	}
	// node, the in-place group, waits for an initializer outside it.
	node := func() jobset.ReplicatedJob {
		rj := wrappers.MakeReplicatedJob("node").Replicas(2).InPlaceReady().Obj()
		rj.DependsOn = []jobset.DependsOn{{Name: "initializer", Status: jobset.DependencyComplete}}
		return rj
	}

	It("admits RestartJob and RestartJobAndIgnoreMaxRestarts rules", func() {
		js := wrappers.MakeJobSet("trainer", ns).MaxRestarts(2).
			FailurePolicyRule(restartJobRule(jobset.RestartJob, "workers")).
			FailurePolicyRule(jobset.FailurePolicyRule{Name: "preempted", Action: jobset.RestartJobAndIgnoreMaxRestarts}).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(4).Obj()).Obj()
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
	})

	It("rejects more than 1024 replicas with a RestartJob rule, naming the replicas and the rule", func() {
		js := wrappers.MakeJobSet("wide", ns).
			FailurePolicyRule(restartJobRule(jobset.RestartJob)).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(1025).Obj()).Obj()
		err := k8sClient.Create(ctx, js)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(And(
			ContainSubstring("spec.replicatedJobs[0].replicas"),
			ContainSubstring("at most 1024"),
			ContainSubstring(`rule "one"`)))
	})

	It("with InPlaceRestart, admits a RestartJob rule that targets only a replicatedJob outside the in-place group", func() {
		js := wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
			FailurePolicyRule(restartJobRule(jobset.RestartJob, "initializer")).
			ReplicatedJob(wrappers.MakeReplicatedJob("initializer").Obj()).
			ReplicatedJob(node()).Obj()
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
	})

	It("with InPlaceRestart, rejects a RestartJob rule that could recreate a Job of the in-place group alone", func() {
		By("a rule without targets")
		js := wrappers.MakeJobSet("untargeted", ns).RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
			FailurePolicyRule(restartJobRule(jobset.RestartJob)).
			ReplicatedJob(wrappers.MakeReplicatedJob("node").Replicas(2).InPlaceReady().Obj()).Obj()
		err := k8sClient.Create(ctx, js)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(And(
			ContainSubstring("spec.failurePolicy.rules[0].targetReplicatedJobs"),
			ContainSubstring("in-place group (node"),
			ContainSubstring("leave the group short"),
			ContainSubstring("RestartJobSet")))

		By("a rule that targets a group member")
		js = wrappers.MakeJobSet("targeted", ns).RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
			FailurePolicyRule(restartJobRule(jobset.RestartJobAndIgnoreMaxRestarts, "initializer", "node")).
			ReplicatedJob(wrappers.MakeReplicatedJob("initializer").Obj()).
			ReplicatedJob(node()).Obj()
		err = k8sClient.Create(ctx, js)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(And(
			ContainSubstring("spec.failurePolicy.rules[0].targetReplicatedJobs[1]"),
			ContainSubstring("replicatedJob node is in the in-place group"),
			ContainSubstring("RestartJobSetAndIgnoreMaxRestarts")))
	})
})

// The suite's webhook runs with the ElasticJobSet feature gate on.
var _ = Describe("ElasticJobSet", func() {
	ctx := context.Background()
	var ns string
	BeforeEach(func() {
		ns = framework.TestNamespace(ctx, k8sClient, "elastic")
	})
	resize := func(js *jobset.JobSet, pods int32) error {
		fresh := &jobset.JobSet{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), fresh)).To(Succeed())
		spec := &fresh.Spec.ReplicatedJobs[0].Template.Spec
		spec.Parallelism, spec.Completions = ptr.To(pods), ptr.To(pods)
		return k8sClient.Update(ctx, fresh)
	}

	It("admits a change of a running JobSet's parallelism and completions", func() {
		js := wrappers.MakeJobSet("elastic", ns).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(2).Obj()).Obj()
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		Expect(resize(js, 4)).To(Succeed())
	})

	It("refuses to resize the in-place group, naming the replicatedJob", func() {
		js := wrappers.MakeJobSet("group", ns).RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(2).InPlaceReady().Obj()).Obj()
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		err := resize(js, 4)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(And(
			ContainSubstring("spec.replicatedJobs[0].template.spec"),
			ContainSubstring("replicatedJob workers is in the in-place group, whose size is fixed")))
	})
})

// The suite's webhook runs with the JobSetActiveDeadlineSeconds feature
// gate on.
var _ = Describe("JobSetActiveDeadlineSeconds", func() {
	ctx := context.Background()
	var ns string
	BeforeEach(func() {
		ns = framework.TestNamespace(ctx, k8sClient, "deadline")
	})
	withDeadline := func(name string, seconds int64) *jobset.JobSet {
		js := wrappers.MakeJobSet(name, ns).ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		js.Spec.ActiveDeadlineSeconds = ptr.To(seconds)
		return js
	}

	It("admits an activeDeadlineSeconds, and a change of it", func() {
		js := withDeadline("bounded", 600)
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		js.Spec.ActiveDeadlineSeconds = ptr.To[int64](1200)
		Expect(k8sClient.Update(ctx, js)).To(Succeed())
	})

	It("rejects an activeDeadlineSeconds below 1, naming the field", func() {
		err := k8sClient.Create(ctx, withDeadline("zero", 0))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("spec.activeDeadlineSeconds"))
	})
})
