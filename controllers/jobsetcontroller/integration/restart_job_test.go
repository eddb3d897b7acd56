package integration

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// The suite's controller runs with the RestartJob feature gate on.
var _ = Describe("RestartJob failure policy actions", func() {
	rule := func(action jobset.FailurePolicyAction) jobset.FailurePolicyRule {
		return jobset.FailurePolicyRule{Name: "one", Action: action}
	}
	workers := func(maxRestarts int32, action jobset.FailurePolicyAction) *jobset.JobSet {
		return wrappers.MakeJobSet("trainer", ns).MaxRestarts(maxRestarts).FailurePolicyRule(rule(action)).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(3).Obj()).Obj()
	}
	allWorkers := []string{"trainer-workers-0", "trainer-workers-1", "trainer-workers-2"}
	uids := func(jobs []batchv1.Job) map[string]types.UID {
		out := map[string]types.UID{}
		for _, j := range jobs {
			out[j.Name] = j.UID
		}
		return out
	}
	// workersStatus waits for the workers' per-Job counters.
	workersStatus := func(js *jobset.JobSet, jobRestarts, countTowardsMax []int32) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			status := fetch(ctx, js).Status
			g.Expect(status.ReplicatedJobsStatus).To(ContainElement(And(
				HaveField("Name", "workers"),
				HaveField("JobRestarts", Equal(jobRestarts)),
				HaveField("JobRestartsCountTowardsMax", Equal(countTowardsMax)))))
			g.Expect(status.Restarts).To(BeZero(), "a restart of one Job is not a full restart")
		}).Should(Succeed())
	}
	// recreated waits for the index's Job to be deleted, plays the garbage
	// collector, and returns the new Job once it exists.
	recreated := func(js *jobset.JobSet, old batchv1.Job, generation string) batchv1.Job {
		GinkgoHelper()
		eventuallyDeleting(ctx, old)
		finishDeletion(ctx, &old)
		var job batchv1.Job
		Eventually(func(g Gomega) {
			for _, j := range childJobs(ctx, js) {
				if j.Name == old.Name {
					job = j
				}
			}
			g.Expect(job.UID).NotTo(BeEmpty())
			g.Expect(job.UID).NotTo(Equal(old.UID))
		}).Should(Succeed())
		Expect(job.Labels).To(And(
			HaveKeyWithValue(jobset.JobRestartAttemptKey, generation),
			HaveKeyWithValue(jobset.RestartsKey, "0")))
		Expect(job.Spec.Template.Labels).To(HaveKeyWithValue(jobset.JobRestartAttemptKey, generation))
		return job
	}

	It("RestartJob recreates only the failed Job, counts it at its index, and fails the JobSet once maxRestarts is spent", func() {
		js := create(workers(1, jobset.RestartJob))
		jobs := eventuallyJobs(ctx, js, "0", allWorkers...)
		for _, j := range jobs {
			Expect(j.Labels).To(HaveKeyWithValue(jobset.JobRestartAttemptKey, "0"), j.Name)
		}
		before := uids(jobs)

		By("a failed Job: only it is recreated, at generation 1")
		failJob(ctx, &jobs[1], "BackoffLimitExceeded", "backoff")
		workersStatus(js, []int32{0, 1, 0}, []int32{0, 1, 0})
		newJob := recreated(js, jobs[1], "1")
		now := uids(childJobs(ctx, js))
		Expect(now).To(HaveKeyWithValue("trainer-workers-0", before["trainer-workers-0"]))
		Expect(now).To(HaveKeyWithValue("trainer-workers-2", before["trainer-workers-2"]))
		Expect(eventReasons(ctx, js)).To(ContainElement(jobset.ReasonRestartJobAction))

		By("a second failure with the budget spent: Failed, ReachedMaxRestarts")
		failJob(ctx, &newJob, "BackoffLimitExceeded", "backoff")
		c := eventuallyCondition(ctx, js, jobset.JobSetFailed, metav1.ConditionTrue)
		Expect(c.Reason).To(Equal(jobset.ReasonReachedMaxRestarts))
		Expect(c.Message).To(Equal("jobset failed due to reaching max number of restarts (first failed job: trainer-workers-1)"))
	})

	It("RestartJobAndIgnoreMaxRestarts recreates the failed Job without a budget, counting only jobRestarts", func() {
		js := create(workers(0, jobset.RestartJobAndIgnoreMaxRestarts))
		jobs := eventuallyJobs(ctx, js, "0", allWorkers...)
		failJob(ctx, &jobs[2], "PodFailurePolicy", "preempted")
		workersStatus(js, []int32{0, 0, 1}, nil)
		newJob := recreated(js, jobs[2], "1")
		failJob(ctx, &newJob, "PodFailurePolicy", "preempted")
		workersStatus(js, []int32{0, 0, 2}, nil)
		recreated(js, newJob, "2")
		Expect(eventReasons(ctx, js)).To(ContainElement(jobset.ReasonRestartJobAndIgnoreMaxRestartsAction))
	})

	It("with InPlaceRestart, a rule that matches a Job of the in-place group restarts the JobSet fully instead", func() {
		// The webhook refuses this rule; a JobSet admitted before it was
		// (no webhook runs here) must not lose a group member alone.
		js := create(wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
			FailurePolicyRule(rule(jobset.RestartJob)).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).InPlaceReady().Obj()).Obj())
		jobs := eventuallyJobs(ctx, js, "0", "trainer-workers-0", "trainer-workers-1")
		failJob(ctx, &jobs[0], "BackoffLimitExceeded", "backoff")
		Eventually(func(g Gomega) {
			status := fetch(ctx, js).Status
			g.Expect(status.Restarts).To(BeEquivalentTo(1))
			g.Expect(status.RestartsCountTowardsMax).To(BeEquivalentTo(1))
			for _, s := range status.ReplicatedJobsStatus {
				g.Expect(s.JobRestarts).To(BeEmpty())
			}
		}).Should(Succeed())
		eventuallyDeleting(ctx, jobs...)
	})
})
