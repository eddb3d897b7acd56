package integration

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// Community writes the whole status object (an update, not a patch), so its
// stored JobSets always carry the fields whose JSON tags lack omitempty,
// zero or not: status.restarts, and the five counts of every
// replicatedJobsStatus entry. Clients wait on them (`kubectl wait
// --for=jsonpath='{.status.restarts}'=0`), so they are read here as stored,
// not through our types, which would fill a missing field with its zero.
var _ = Describe("Status fields community JobSet v0.12.0 always writes", func() {
	// storedStatus reads the JobSet's status as the apiserver stores it.
	storedStatus := func(g Gomega, js *jobset.JobSet) map[string]any {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(jobset.GroupVersion.WithKind("JobSet"))
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), u)).To(Succeed())
		status, _, err := unstructured.NestedMap(u.Object, "status")
		g.Expect(err).NotTo(HaveOccurred())
		return status
	}
	// expectCommunityFields checks the always-written fields of a status.
	expectCommunityFields := func(g Gomega, status map[string]any, restarts int64, replicatedJobs ...string) {
		g.Expect(status).To(HaveKeyWithValue("restarts", restarts), "status.restarts")
		g.Expect(status).To(HaveKey("replicatedJobsStatus"))
		entries, ok := status["replicatedJobsStatus"].([]any)
		g.Expect(ok).To(BeTrue(), "status.replicatedJobsStatus is a list")
		var names []string
		for _, e := range entries {
			entry, ok := e.(map[string]any)
			g.Expect(ok).To(BeTrue(), "status.replicatedJobsStatus[] is an object")
			g.Expect(entry).To(And(HaveKey("ready"), HaveKey("succeeded"), HaveKey("failed"), HaveKey("active"), HaveKey("suspended")),
				"status.replicatedJobsStatus[name=%v]", entry["name"])
			names = append(names, fmt.Sprint(entry["name"]))
		}
		g.Expect(names).To(ConsistOf(replicatedJobs))
	}

	It("a running JobSet's first status carries restarts: 0 and every count of every replicatedJob", func() {
		js := create(wrappers.MakeJobSet("fresh", ns).
			ReplicatedJob(wrappers.MakeReplicatedJob("driver").Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Obj()).Obj())
		eventuallyJobs(ctx, js, "0", "fresh-driver-0", "fresh-workers-0", "fresh-workers-1")
		Eventually(func(g Gomega) {
			expectCommunityFields(g, storedStatus(g, js), 0, "driver", "workers")
		}).Should(Succeed())
	})

	It("a JobSet created suspended carries restarts: 0", func() {
		js := create(wrappers.MakeJobSet("parked", ns).Suspend(true).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj())
		eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionTrue)
		Eventually(func(g Gomega) {
			expectCommunityFields(g, storedStatus(g, js), 0, "workers")
		}).Should(Succeed())
	})

	It("an InPlaceRestart JobSet carries restarts: 0", func() {
		js := create(wrappers.MakeJobSet("inplace", ns).RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).InPlaceReady().Obj()).Obj())
		eventuallyJobs(ctx, js, "0", "inplace-workers-0", "inplace-workers-1")
		Eventually(func(g Gomega) {
			expectCommunityFields(g, storedStatus(g, js), 0, "workers")
		}).Should(Succeed())
	})
})
