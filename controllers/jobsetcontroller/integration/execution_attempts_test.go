package integration

import (
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/features"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// The suite's controller runs with the ExecutionAttemptsTracking feature
// gate on; the last spec turns it off.
var _ = Describe("Execution attempts", func() {
	trainer := func() *wrappers.JobSetWrapper {
		return wrappers.MakeJobSet("trainer", ns).MaxRestarts(3).
			ReplicatedJob(wrappers.MakeReplicatedJob("driver").Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(2).Obj())
	}
	allJobs := []string{"trainer-driver-0", "trainer-workers-0", "trainer-workers-1"}

	setSuspend := func(js *jobset.JobSet, suspend bool) {
		GinkgoHelper()
		Eventually(func() error {
			fresh := fetch(ctx, js)
			fresh.Spec.Suspend = ptr.To(suspend)
			return k8sClient.Update(ctx, fresh)
		}).Should(Succeed())
	}
	// eventuallyExecution waits until status.executionAttempts is n and
	// every Job of the restart attempt, and its Pod template, carries n in
	// the execution-attempt annotation; it returns the Jobs.
	eventuallyExecution := func(js *jobset.JobSet, attempt string, n int32) []batchv1.Job {
		GinkgoHelper()
		jobs := eventuallyJobs(ctx, js, attempt, allJobs...)
		want := strconv.Itoa(int(n))
		Eventually(func(g Gomega) {
			g.Expect(fetch(ctx, js).Status.ExecutionAttempts).To(HaveValue(BeEquivalentTo(n)), "status.executionAttempts")
			jobs = childJobs(ctx, js)
			for _, job := range jobs {
				g.Expect(job.Annotations).To(HaveKeyWithValue(jobset.ExecutionAttemptsKey, want), "Job %s", job.Name)
				g.Expect(job.Spec.Template.Annotations).To(HaveKeyWithValue(jobset.ExecutionAttemptsKey, want), "Pod template of Job %s", job.Name)
			}
		}).Should(Succeed())
		return jobs
	}
	// resumesSeen counts, in each recorded status, the resumes recorded
	// up to it (the Suspended condition turning False from True), and
	// returns it beside the count stored there.
	type counted struct {
		Resumes, Restarts int32
		Stored            *int32
	}
	countedIn := func(history []jobset.JobSetStatus) []counted {
		var out []counted
		var resumes int32
		wasSuspended := false
		for _, st := range history {
			suspended := meta.IsStatusConditionTrue(st.Conditions, string(jobset.JobSetSuspended))
			if wasSuspended && !suspended {
				resumes++
			}
			wasSuspended = suspended
			out = append(out, counted{Resumes: resumes, Restarts: st.Restarts, Stored: st.ExecutionAttempts})
		}
		return out
	}

	It("counts the first execution 0, on the status, every Job and its Pod template", func() {
		js := create(trainer().Obj())
		eventuallyExecution(js, "0", 0)
	})

	It("counts a full restart one more, in the status write that counts the restart; the new Jobs carry it", func() {
		js := create(trainer().Obj())
		history := statusHistory(ctx, js)
		jobs := eventuallyExecution(js, "0", 0)

		failJob(ctx, &jobs[1], "BackoffLimitExceeded", "backoff")
		eventuallyDeleting(ctx, jobs...)
		for i := range jobs {
			finishDeletion(ctx, &jobs[i])
		}
		eventuallyExecution(js, "1", 1)

		By("every stored status counts the full restarts it counts, from the first one on")
		Eventually(func(g Gomega) {
			g.Expect(history()).To(ContainElement(HaveField("Restarts", BeEquivalentTo(1))))
		}).Should(Succeed())
		for i, c := range countedIn(history()) {
			if c.Stored == nil {
				Expect(c.Restarts).To(BeZero(), "status %d: a full restart written without executionAttempts", i)
				continue // before the first status write
			}
			Expect(*c.Stored).To(Equal(c.Restarts), "status %d: executionAttempts and restarts written apart", i)
		}
	})

	It("counts a resume one more, once, in the status write that records it; the resumed Jobs and their Pod templates carry it", func() {
		js := create(trainer().Obj())
		history := statusHistory(ctx, js)
		eventuallyExecution(js, "0", 0)

		setSuspend(js, true)
		eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionTrue)
		Expect(fetch(ctx, js).Status.ExecutionAttempts).To(HaveValue(BeEquivalentTo(0)), "a suspension starts no execution")
		setSuspend(js, false)
		eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionFalse)
		jobs := eventuallyExecution(js, "0", 1)
		for _, job := range jobs {
			Expect(ptr.Deref(job.Spec.Suspend, true)).To(BeFalse(), "Job %s resumed", job.Name)
		}

		By("later status writes do not count it again")
		for i := range jobs {
			markJobReady(ctx, &jobs[i])
		}
		Eventually(func(g Gomega) {
			var ready int32
			for _, rj := range fetch(ctx, js).Status.ReplicatedJobsStatus {
				ready += rj.Ready
			}
			g.Expect(ready).To(BeEquivalentTo(len(allJobs)))
		}).Should(Succeed())
		Expect(fetch(ctx, js).Status.ExecutionAttempts).To(HaveValue(BeEquivalentTo(1)))

		By("every stored status counts the resumes it records")
		Eventually(func() []counted { return countedIn(history()) }).Should(ContainElement(HaveField("Resumes", BeEquivalentTo(1))))
		for i, c := range countedIn(history()) {
			if c.Stored == nil {
				continue // before the first status write
			}
			Expect(*c.Stored).To(Equal(c.Resumes), "status %d", i)
		}
	})

	It("counts nothing while a JobSet created suspended waits, then its first execution 0 at its first resume, and 1 at the next", func() {
		js := create(trainer().Suspend(true).Obj())
		history := statusHistory(ctx, js)
		jobs := eventuallyJobs(ctx, js, "0", allJobs...)
		for _, job := range jobs {
			Expect(job.Spec.Template.Annotations).To(HaveKeyWithValue(jobset.ExecutionAttemptsKey, "0"), "Job %s", job.Name)
		}
		eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionTrue)
		Expect(fetch(ctx, js).Status.ExecutionAttempts).To(BeNil(), "a JobSet that never ran")

		setSuspend(js, false)
		eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionFalse)
		eventuallyExecution(js, "0", 0)

		setSuspend(js, true)
		eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionTrue)
		setSuspend(js, false)
		eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionFalse)
		eventuallyExecution(js, "0", 1)

		Eventually(func() []counted { return countedIn(history()) }).Should(ContainElement(HaveField("Resumes", BeEquivalentTo(2))))
		for i, c := range countedIn(history()) {
			if c.Resumes == 0 {
				Expect(c.Stored).To(BeNil(), "status %d: counted before the first resume", i)
				continue
			}
			Expect(c.Stored).To(HaveValue(Equal(c.Resumes-1)), "status %d", i)
		}
	})

	It("with the gate off, writes no count and stamps no Job, through a full restart and a resume", func() {
		stopController()
		stop, err := startControllerWith(suiteGates.With(features.ExecutionAttemptsTracking, false))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(stop) // before stopController's cleanup starts the suite's controller again

		js := create(trainer().Obj())
		history := statusHistory(ctx, js)
		unstamped := func(jobs []batchv1.Job) {
			GinkgoHelper()
			for _, job := range jobs {
				Expect(job.Annotations).NotTo(HaveKey(jobset.ExecutionAttemptsKey), "Job %s", job.Name)
				Expect(job.Spec.Template.Annotations).NotTo(HaveKey(jobset.ExecutionAttemptsKey), "Pod template of Job %s", job.Name)
			}
		}
		jobs := eventuallyJobs(ctx, js, "0", allJobs...)
		unstamped(jobs)

		failJob(ctx, &jobs[1], "BackoffLimitExceeded", "backoff")
		eventuallyDeleting(ctx, jobs...)
		for i := range jobs {
			finishDeletion(ctx, &jobs[i])
		}
		unstamped(eventuallyJobs(ctx, js, "1", allJobs...))

		setSuspend(js, true)
		eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionTrue)
		setSuspend(js, false)
		eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionFalse)
		Eventually(func(g Gomega) {
			for _, job := range childJobs(ctx, js) {
				g.Expect(ptr.Deref(job.Spec.Suspend, true)).To(BeFalse(), "Job %s resumed", job.Name)
			}
		}).Should(Succeed())
		unstamped(childJobs(ctx, js))

		Eventually(func() []counted { return countedIn(history()) }).Should(ContainElement(And(
			HaveField("Resumes", BeEquivalentTo(1)), HaveField("Restarts", BeEquivalentTo(1)))))
		for i, st := range history() {
			Expect(st.ExecutionAttempts).To(BeNil(), "status %d", i)
		}
	})
})
