package integration

import (
	"context"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/jobsetcontroller"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// An API server under load can store a write and time out before it
// answers: the controller then holds an error for a status the cluster
// has. What the write recorded (a restart counted against maxRestarts)
// must still be announced once, or the status counts a restart no event
// or metric explains.
var _ = Describe("A status write whose answer is lost", func() {
	It("announces the full restart it stored once, when a later reconcile finds it stored", func() {
		// The controller reconciles the JobSets earlier specs left too.
		lost := &loseAnswer{when: func(js *jobset.JobSet) bool { return js.Namespace == ns && js.Status.Restarts == 1 }}
		stopController()
		stop, err := env.StartManager(jobsetcontroller.CacheOptions(), func(mgr ctrl.Manager) error {
			if err := jobsetcontroller.SetupIndexes(context.Background(), mgr.GetFieldIndexer()); err != nil {
				return err
			}
			return jobsetcontroller.NewReconciler(lost.wrap(mgr.GetClient()), mgr.GetEventRecorder("jobset-controller"),
				jobsetcontroller.WithFeatureGates(suiteGates)).SetupWithManager(mgr, 1)
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(stop)

		js := create(wrappers.MakeJobSet("trainer", ns).MaxRestarts(2).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Obj()).Obj())
		jobs := eventuallyJobs(ctx, js, "0", "trainer-workers-0", "trainer-workers-1")
		failJob(ctx, &jobs[1], "BackoffLimitExceeded", "backoff")

		Eventually(lost.lost.Load).Should(BeTrue(), "the write that counts the restart")
		Expect(fetch(ctx, js).Status.Restarts).To(BeEquivalentTo(1), "the API server stored the write whose answer was lost")
		eventuallyDeleting(ctx, jobs...)
		for i := range jobs {
			finishDeletion(ctx, &jobs[i])
		}
		eventuallyJobs(ctx, js, "1", "trainer-workers-0", "trainer-workers-1")
		Eventually(func() []eventsv1.Event { return restartEvents(ctx, js) }).Should(HaveLen(1),
			"one event for the full restart the status counts")
		Expect(restartEvents(ctx, js)[0].Series).To(BeNil(), "announced once")
		Expect(fetch(ctx, js).Status.Restarts).To(BeEquivalentTo(1))
	})
})

// restartEvents are the JobSet's events of a full restart.
func restartEvents(ctx context.Context, js *jobset.JobSet) []eventsv1.Event {
	var restarts []eventsv1.Event
	for _, e := range jobSetEvents(ctx, js) {
		if e.Action == "Restart" {
			restarts = append(restarts, e)
		}
	}
	return restarts
}

// loseAnswer passes the first status write of a JobSet that when accepts
// to the API server and then answers as a request that timed out would.
type loseAnswer struct {
	when func(*jobset.JobSet) bool
	lost atomic.Bool
}

func (l *loseAnswer) wrap(c client.Client) client.Client { return lossyStatus{c, l} }

type lossyStatus struct {
	client.Client
	l *loseAnswer
}

func (c lossyStatus) Status() client.SubResourceWriter {
	return lossyStatusWriter{c.Client.Status(), c.l}
}

type lossyStatusWriter struct {
	client.SubResourceWriter
	l *loseAnswer
}

func (w lossyStatusWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	js, ok := obj.(*jobset.JobSet)
	if !ok || !w.l.when(js) || w.l.lost.Load() {
		return w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
	}
	// The caller's copy stays as it was sent: no answer updated it.
	if err := w.SubResourceWriter.Patch(ctx, js.DeepCopy(), patch, opts...); err != nil {
		return err
	}
	w.l.lost.Store(true)
	return context.DeadlineExceeded
}
