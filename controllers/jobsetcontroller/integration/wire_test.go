package integration

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// The conditions clients read are a wire contract: Kueue copies the
// Completed and Failed messages into its Workloads, Kubeflow Trainer into
// its TrainJobs, and both were built against community JobSet v0.12.0. The
// strings below are community's, written out literally (its
// pkg/constants/constants.go, and how pkg/controllers/jobset_controller.go
// and pkg/controllers/failure_policy.go combine them: "<message> (first
// failed job: <name>)"); they must not be derived from our constants, or a
// change of ours would pass unnoticed.
var _ = Describe("Conditions as community JobSet v0.12.0 writes them", func() {
	trainer := func() *wrappers.JobSetWrapper {
		return wrappers.MakeJobSet("trainer", ns).
			ReplicatedJob(wrappers.MakeReplicatedJob("driver").Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(2).Obj())
	}
	allJobs := []string{"trainer-driver-0", "trainer-workers-0", "trainer-workers-1"}

	// expectCondition waits for the condition's status and checks its
	// reason and message.
	expectCondition := func(js *jobset.JobSet, t string, status metav1.ConditionStatus, reason, message string) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(fetch(ctx, js).Status.Conditions, t)
			g.Expect(c).NotTo(BeNil(), "condition %s", t)
			g.Expect(*c).To(And(
				HaveField("Status", status),
				HaveField("Reason", reason),
				HaveField("Message", message)), "condition %s", t)
		}).Should(Succeed())
	}

	It("Completed: AllJobsCompleted, \"jobset completed successfully\"", func() {
		js := create(trainer().Obj())
		jobs := eventuallyJobs(ctx, js, "0", allJobs...)
		for i := range jobs {
			completeJob(ctx, &jobs[i])
		}
		expectCondition(js, "Completed", metav1.ConditionTrue, "AllJobsCompleted", "jobset completed successfully")
	})

	It("Failed without a failure policy: FailedJobs, naming the first failed Job", func() {
		js := create(trainer().Obj())
		jobs := eventuallyJobs(ctx, js, "0", allJobs...)
		failJob(ctx, &jobs[1], "BackoffLimitExceeded", "Job has reached the specified backoff limit")
		expectCondition(js, "Failed", metav1.ConditionTrue, "FailedJobs",
			"jobset failed due to one or more job failures (first failed job: trainer-workers-0)")
	})

	It("Failed by a FailJobSet rule: FailJobSetFailurePolicyAction", func() {
		js := create(trainer().FailurePolicyRule(jobset.FailurePolicyRule{
			Name: "fatal", Action: jobset.FailJobSet, OnJobFailureReasons: []string{"PodFailurePolicy"},
		}).Obj())
		jobs := eventuallyJobs(ctx, js, "0", allJobs...)
		failJob(ctx, &jobs[2], "PodFailurePolicy", "exit code 42")
		expectCondition(js, "Failed", metav1.ConditionTrue, "FailJobSetFailurePolicyAction",
			"applying FailJobSet failure policy action (first failed job: trainer-workers-1)")
	})

	It("RestartingJobSet through a restart, then Failed with ReachedMaxRestarts", func() {
		js := create(trainer().MaxRestarts(1).Obj())
		jobs := eventuallyJobs(ctx, js, "0", allJobs...)

		By("a failure restarts it: RestartingJobSet True, the default failure policy")
		failJob(ctx, &jobs[1], "BackoffLimitExceeded", "backoff")
		expectCondition(js, "RestartingJobSet", metav1.ConditionTrue, "DefaultFailurePolicy",
			"applying RestartJobSet failure policy action (first failed job: trainer-workers-0)")
		eventuallyDeleting(ctx, jobs...)
		for i := range jobs {
			finishDeletion(ctx, &jobs[i])
		}

		By("every Job of the new attempt ready: RestartingJobSet False, JobsReady")
		jobs = eventuallyJobs(ctx, js, "1", allJobs...)
		for i := range jobs {
			markJobReady(ctx, &jobs[i])
		}
		expectCondition(js, "RestartingJobSet", metav1.ConditionFalse, "JobsReady", "all jobs are ready")

		By("a failure with the budget spent: Failed, ReachedMaxRestarts; RestartingJobSet False, JobSetFailed")
		failJob(ctx, &jobs[0], "BackoffLimitExceeded", "backoff")
		expectCondition(js, "Failed", metav1.ConditionTrue, "ReachedMaxRestarts",
			"jobset failed due to reaching max number of restarts (first failed job: trainer-driver-0)")
		expectCondition(js, "RestartingJobSet", metav1.ConditionFalse, "JobSetFailed", "jobset failed")
	})

	It("RestartingJobSet names the failure policy rule that restarted it", func() {
		js := create(trainer().MaxRestarts(0).FailurePolicyRule(jobset.FailurePolicyRule{
			Name: "preempted", Action: jobset.RestartJobSetAndIgnoreMaxRestarts,
			OnJobFailureMessagePatterns: []string{"preempted"},
		}).Obj())
		jobs := eventuallyJobs(ctx, js, "0", allJobs...)
		failJob(ctx, &jobs[2], "PodFailurePolicy", "node preempted")
		expectCondition(js, "RestartingJobSet", metav1.ConditionTrue, "FailurePolicy_preempted",
			"applying RestartJobSetAndIgnoreMaxRestarts failure policy action (first failed job: trainer-workers-1)")
	})

	It("Suspended: SuspendedJobs, then ResumeJobs", func() {
		js := create(trainer().Suspend(true).Obj())
		expectCondition(js, "Suspended", metav1.ConditionTrue, "SuspendedJobs", "jobset is suspended")
		Eventually(func() error {
			fresh := fetch(ctx, js)
			fresh.Spec.Suspend = ptr.To(false)
			return k8sClient.Update(ctx, fresh)
		}).Should(Succeed())
		expectCondition(js, "Suspended", metav1.ConditionFalse, "ResumeJobs", "jobset is resumed")
	})

	It("StartupPolicyInProgress and StartupPolicyCompleted of an InOrder startup", func() {
		js := trainer().Obj()
		js.Spec.StartupPolicy = &jobset.StartupPolicy{StartupPolicyOrder: jobset.InOrder}
		js = create(js)
		expectCondition(js, "StartupPolicyInProgress", metav1.ConditionTrue,
			"InOrderStartupPolicyInProgress", "in order startup policy is in progress")
		driver := eventuallyJobs(ctx, js, "0", "trainer-driver-0")
		markJobReady(ctx, &driver[0])
		jobs := eventuallyJobs(ctx, js, "0", allJobs...)
		for i := range jobs {
			markJobReady(ctx, &jobs[i])
		}
		expectCondition(js, "StartupPolicyCompleted", metav1.ConditionTrue,
			"InOrderStartupPolicyCompleted", "in order startup policy has completed")
		// Community sets the in-progress condition False and leaves its
		// reason and message as they were.
		expectCondition(js, "StartupPolicyInProgress", metav1.ConditionFalse,
			"InOrderStartupPolicyInProgress", "in order startup policy is in progress")
	})
})
