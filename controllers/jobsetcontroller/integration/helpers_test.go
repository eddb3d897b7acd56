package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

func newNamespace(ctx context.Context) string {
	return framework.TestNamespace(ctx, k8sClient, "jobset")
}

// create creates the JobSet and returns it.
func create(js *jobset.JobSet) *jobset.JobSet {
	Expect(k8sClient.Create(ctx, js)).To(Succeed())
	return js
}

// childJobs lists the Jobs the JobSet owns, sorted by name.
func childJobs(ctx context.Context, js *jobset.JobSet) []batchv1.Job {
	var list batchv1.JobList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(js.Namespace),
		client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
	var owned []batchv1.Job
	for _, job := range list.Items {
		if owner := metav1.GetControllerOf(&job); owner != nil && owner.UID == js.UID {
			owned = append(owned, job)
		}
	}
	slices.SortFunc(owned, func(a, b batchv1.Job) int { return strings.Compare(a.Name, b.Name) })
	return owned
}

// eventuallyJobs waits until the JobSet owns exactly the named Jobs of the
// given restart attempt, none of them being deleted, and returns them.
func eventuallyJobs(ctx context.Context, js *jobset.JobSet, attempt string, names ...string) []batchv1.Job {
	var jobs []batchv1.Job
	Eventually(func(g Gomega) {
		jobs = childJobs(ctx, js)
		var got []string
		for _, job := range jobs {
			g.Expect(job.DeletionTimestamp).To(BeNil(), "Job %s is being deleted", job.Name)
			g.Expect(job.Labels).To(HaveKeyWithValue(jobset.RestartsKey, attempt), "Job %s", job.Name)
			got = append(got, job.Name)
		}
		g.Expect(got).To(Equal(names))
	}).Should(Succeed())
	return jobs
}

// fetch reads the JobSet.
func fetch(ctx context.Context, js *jobset.JobSet) *jobset.JobSet {
	got := &jobset.JobSet{}
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), got)).To(Succeed())
	return got
}

// eventuallyCondition waits for a JobSet condition and returns it.
func eventuallyCondition(ctx context.Context, js *jobset.JobSet, t jobset.JobSetConditionType, status metav1.ConditionStatus) *metav1.Condition {
	var c *metav1.Condition
	Eventually(func(g Gomega) {
		c = meta.FindStatusCondition(fetch(ctx, js).Status.Conditions, string(t))
		g.Expect(c).NotTo(BeNil(), "condition %s", t)
		g.Expect(c.Status).To(Equal(status), "condition %s: %s", t, c.Message)
	}).Should(Succeed())
	return c
}

// The tests play the Job controller: they write Job status as it would.

func setJobStatus(ctx context.Context, job *batchv1.Job, mutate func(*batchv1.JobStatus)) {
	Eventually(func(g Gomega) {
		fresh := &batchv1.Job{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(job), fresh)).To(Succeed())
		if fresh.Status.StartTime == nil {
			fresh.Status.StartTime = ptr.To(metav1.Now())
		}
		mutate(&fresh.Status)
		g.Expect(k8sClient.Status().Update(ctx, fresh)).To(Succeed())
	}).Should(Succeed())
}

func completeJob(ctx context.Context, job *batchv1.Job) {
	setJobStatus(ctx, job, func(s *batchv1.JobStatus) {
		n := ptr.Deref(job.Spec.Completions, 1)
		now := metav1.Now()
		s.Active, s.Ready, s.Succeeded = 0, ptr.To[int32](0), n
		s.CompletedIndexes = indexRange(n)
		s.CompletionTime = &now
		s.Conditions = append(s.Conditions,
			batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now},
			batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now})
	})
}

func failJob(ctx context.Context, job *batchv1.Job, reason, message string) {
	setJobStatus(ctx, job, func(s *batchv1.JobStatus) {
		now := metav1.Now()
		s.Active, s.Ready = 0, ptr.To[int32](0)
		s.Failed = 1
		s.Conditions = append(s.Conditions,
			batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: now},
			batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: now})
	})
}

func markJobReady(ctx context.Context, job *batchv1.Job) {
	setJobStatus(ctx, job, func(s *batchv1.JobStatus) {
		n := ptr.Deref(job.Spec.Parallelism, 1)
		s.Active, s.Ready = n, ptr.To(n)
	})
}

func indexRange(n int32) string {
	if n == 1 {
		return "0"
	}
	return fmt.Sprintf("0-%d", n-1)
}

// The tests also play the garbage collector, which envtest does not run.

// finishDeletion removes the foreground-deletion finalizer, as the garbage
// collector does once a Job's Pods are gone.
func finishDeletion(ctx context.Context, job *batchv1.Job) {
	Eventually(func(g Gomega) {
		fresh := &batchv1.Job{}
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(job), fresh)
		if apierrors.IsNotFound(err) {
			return
		}
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(fresh.DeletionTimestamp).NotTo(BeNil(), "Job %s is not being deleted", job.Name)
		fresh.Finalizers = nil
		g.Expect(k8sClient.Update(ctx, fresh)).To(Succeed())
	}).Should(Succeed())
}

// eventuallyDeleting waits until every given Job is being deleted.
func eventuallyDeleting(ctx context.Context, jobs ...batchv1.Job) {
	for _, job := range jobs {
		Eventually(func(g Gomega) {
			fresh := &batchv1.Job{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(&job), fresh)).To(Succeed())
			g.Expect(fresh.DeletionTimestamp).NotTo(BeNil(), "Job %s", job.Name)
		}).Should(Succeed())
	}
}

// jobSetEvents lists the events about the JobSet.
func jobSetEvents(ctx context.Context, js *jobset.JobSet) []eventsv1.Event {
	var list eventsv1.EventList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(js.Namespace))).To(Succeed())
	return slices.DeleteFunc(list.Items, func(e eventsv1.Event) bool { return e.Regarding.UID != js.UID })
}

// eventReasons lists the reasons of the events about the JobSet.
func eventReasons(ctx context.Context, js *jobset.JobSet) []string {
	var reasons []string
	for _, e := range jobSetEvents(ctx, js) {
		reasons = append(reasons, e.Reason)
	}
	return reasons
}

// eventNotes lists the notes of the events about the JobSet.
func eventNotes(ctx context.Context, js *jobset.JobSet) []string {
	var notes []string
	for _, e := range jobSetEvents(ctx, js) {
		notes = append(notes, e.Note)
	}
	return notes
}

// statusHistory records, in order, every version of the JobSet's status
// that the API server stores from now until the spec ends (a watch sees
// each write; polling could miss one between two reads), and returns what
// it has recorded so far.
func statusHistory(ctx context.Context, js *jobset.JobSet) func() []jobset.JobSetStatus {
	GinkgoHelper()
	watcher, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	Expect(err).NotTo(HaveOccurred())
	w, err := watcher.Watch(ctx, &jobset.JobSetList{}, client.InNamespace(js.Namespace),
		client.MatchingFields{"metadata.name": js.Name})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(w.Stop)
	var mu sync.Mutex
	var seen []jobset.JobSetStatus
	go func() {
		for e := range w.ResultChan() {
			if got, ok := e.Object.(*jobset.JobSet); ok {
				mu.Lock()
				seen = append(seen, got.Status)
				mu.Unlock()
			}
		}
	}()
	return func() []jobset.JobSetStatus {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}
