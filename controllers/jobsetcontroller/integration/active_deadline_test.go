package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/features"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// recordStartTime writes status.startTime as a controller would have
// recorded it earlier: a start long past, to tell it from one the
// controller sets now.
func recordStartTime(js *jobset.JobSet, start metav1.Time) {
	GinkgoHelper()
	Eventually(func() error {
		fresh := fetch(ctx, js)
		fresh.Status.StartTime = &start
		return k8sClient.Status().Update(ctx, fresh)
	}).Should(Succeed())
}

// anHourAgo is a start long past, to the second as the status stores it.
func anHourAgo() metav1.Time {
	return metav1.NewTime(time.Now().Add(-time.Hour)).Rfc3339Copy()
}

// The suite's controller runs with the JobSetActiveDeadlineSeconds feature
// gate on; the last spec turns it off.
var _ = Describe("Active deadline", func() {
	trainer := func(deadlineSeconds *int64) *wrappers.JobSetWrapper {
		w := wrappers.MakeJobSet("trainer", ns).MaxRestarts(3).
			ReplicatedJob(wrappers.MakeReplicatedJob("driver").Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Obj())
		w.Spec.ActiveDeadlineSeconds = deadlineSeconds
		return w
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
	// startedAtOrAfter waits until status.startTime is recorded, at or
	// after t (to the second, as stored).
	startedAtOrAfter := func(js *jobset.JobSet, t time.Time) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			start := fetch(ctx, js).Status.StartTime
			g.Expect(start).NotTo(BeNil(), "status.startTime")
			g.Expect(start.Time).NotTo(BeTemporally("<", t.Truncate(time.Second)))
		}).Should(Succeed())
	}

	// Nothing but the deadline brings the reconcile back once the Jobs
	// exist: the controller must ask to be requeued at it.
	It("fails a JobSet active longer than its activeDeadlineSeconds with DeadlineExceeded, and deletes its active Jobs", func() {
		js := create(trainer(ptr.To[int64](2)).Obj())
		jobs := eventuallyJobs(ctx, js, "0", allJobs...)
		failed := eventuallyCondition(ctx, js, jobset.JobSetFailed, metav1.ConditionTrue)
		Expect(failed.Reason).To(Equal(jobset.ReasonDeadlineExceeded), failed.Message)
		got := fetch(ctx, js)
		Expect(got.Status.TerminalState).To(Equal(string(jobset.JobSetFailed)))
		Expect(got.Status.Restarts).To(BeZero())
		Expect(got.Status.StartTime).NotTo(BeNil())
		Expect(failed.LastTransitionTime.Sub(got.Status.StartTime.Time)).To(BeNumerically(">=", 2*time.Second),
			"failed before its deadline (startTime %s)", got.Status.StartTime)
		eventuallyDeleting(ctx, jobs...)
		Eventually(func() []string { return eventReasons(ctx, js) }).Should(ContainElement(jobset.ReasonDeadlineExceeded))
	})

	It("starts the time anew at a full restart, clears it while suspended and starts it anew at the resume", func() {
		js := create(trainer(ptr.To[int64](7200)).Obj())
		jobs := eventuallyJobs(ctx, js, "0", allJobs...)
		startedAtOrAfter(js, js.CreationTimestamp.Time)
		recordStartTime(js, anHourAgo())

		beforeRestart := time.Now()
		failJob(ctx, &jobs[1], "BackoffLimitExceeded", "backoff")
		eventuallyDeleting(ctx, jobs...)
		for i := range jobs {
			finishDeletion(ctx, &jobs[i])
		}
		eventuallyJobs(ctx, js, "1", allJobs...)
		Expect(fetch(ctx, js).Status.Restarts).To(BeEquivalentTo(1))
		startedAtOrAfter(js, beforeRestart)

		setSuspend(js, true)
		eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionTrue)
		Expect(fetch(ctx, js).Status.StartTime).To(BeNil(), "startTime while suspended")

		beforeResume := time.Now()
		setSuspend(js, false)
		eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionFalse)
		startedAtOrAfter(js, beforeResume)
		Expect(meta.IsStatusConditionTrue(fetch(ctx, js).Status.Conditions, string(jobset.JobSetFailed))).To(BeFalse())
	})

	It("with the gate off, neither records a start nor fails a JobSet past its deadline", func() {
		stopController()
		stop, err := startControllerWith(suiteGates.With(features.JobSetActiveDeadlineSeconds, false))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(stop) // before stopController's cleanup starts the suite's controller again

		js := create(trainer(ptr.To[int64](1)).Obj())
		history := statusHistory(ctx, js)
		jobs := eventuallyJobs(ctx, js, "0", allJobs...)
		Eventually(history).ShouldNot(BeEmpty())
		for i, st := range history() {
			Expect(st.StartTime).To(BeNil(), "status %d", i)
		}

		By("a start recorded while the gate was on, an hour before a deadline of 1s, and a reconcile after it")
		start := anHourAgo()
		recordStartTime(js, start)
		markJobReady(ctx, &jobs[0])
		Eventually(func(g Gomega) {
			var ready int32
			for _, rj := range fetch(ctx, js).Status.ReplicatedJobsStatus {
				ready += rj.Ready
			}
			g.Expect(ready).To(BeEquivalentTo(1))
		}).Should(Succeed())
		got := fetch(ctx, js)
		Expect(got.Status.TerminalState).To(BeEmpty())
		Expect(got.Status.StartTime).To(HaveValue(HaveField("Time", BeTemporally("==", start.Time))))
		Expect(childJobs(ctx, js)).To(HaveEach(HaveField("DeletionTimestamp", BeNil())))
	})
})
