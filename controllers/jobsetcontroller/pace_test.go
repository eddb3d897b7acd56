package jobsetcontroller

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

func TestPodEventPacerDelay(t *testing.T) {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	key := types.NamespacedName{Namespace: "ns", Name: "js"}
	cases := map[string]struct {
		pods    int // the last reconcile's; -1: never reconciled
		elapsed time.Duration
		forget  bool
		want    time.Duration
	}{
		"never reconciled: at once":                {pods: -1},
		"5000 Pods, just reconciled: a full pause": {pods: 5000, want: 250 * time.Millisecond},
		"5000 Pods, 100 ms later: the rest":        {pods: 5000, elapsed: 100 * time.Millisecond, want: 150 * time.Millisecond},
		"5000 Pods, pause over: at once":           {pods: 5000, elapsed: time.Second},
		"16 Pods, just reconciled: under 1 ms":     {pods: 16, want: 800 * time.Microsecond},
		"no Pods read (not in place): at once":     {pods: 0},
		"JobSet gone and forgotten: at once":       {pods: 5000, forget: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clock := testingclock.NewFakePassiveClock(start)
			p := newPodEventPacer(clock)
			if tc.pods >= 0 {
				p.reconciled(key, tc.pods, false, nil)
			}
			if tc.forget {
				p.forget(key)
			}
			clock.SetTime(start.Add(tc.elapsed))
			// A Pod event that may change the decision (a Pod gone).
			if got := p.observe(key, "a", nil); got != tc.want {
				t.Errorf("delay = %s, want %s", got, tc.want)
			}
		})
	}
}

// A storm of Pod events during one pause asks the queue for one JobSet at
// the pause's end, not for a reconcile per event.
func TestPodEventPacerHandler(t *testing.T) {
	clock := testingclock.NewFakePassiveClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	p := newPodEventPacer(clock)
	key := types.NamespacedName{Namespace: "ns", Name: "js"}
	pod := func(name string) client.Object {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{jobset.JobSetNameKey: "js"}}}
	}
	q := &recordingQueue{}
	h := p.handler()
	ctx := context.Background()

	h.Update(ctx, ctrlevent.TypedUpdateEvent[client.Object]{ObjectOld: pod("a"), ObjectNew: pod("a")}, q)
	p.reconciled(key, 2000, false, nil)
	h.Update(ctx, ctrlevent.TypedUpdateEvent[client.Object]{ObjectOld: pod("b"), ObjectNew: pod("b")}, q)
	h.Create(ctx, ctrlevent.TypedCreateEvent[client.Object]{Object: pod("c")}, q)
	h.Delete(ctx, ctrlevent.TypedDeleteEvent[client.Object]{Object: pod("d")}, q)
	h.Update(ctx, ctrlevent.TypedUpdateEvent[client.Object]{ObjectOld: &corev1.Pod{}, ObjectNew: &corev1.Pod{}}, q)
	h.Update(ctx, ctrlevent.TypedUpdateEvent[client.Object]{ObjectOld: pod("label removed"), ObjectNew: &corev1.Pod{}}, q)

	q.expect(t, key, 0, 100*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond)
}

// The Pods of a JobSet whose reconciles read none (one that recreates its
// Jobs, running) bring no reconcile; once its reconciles read them again
// (it finished, and lets go of its Pods), their events do.
func TestPodEventsOfAJobSetThatReadsNoPods(t *testing.T) {
	p := newPodEventPacer(testingclock.NewFakePassiveClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)))
	key := types.NamespacedName{Namespace: "ns", Name: "js"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", Labels: map[string]string{jobset.JobSetNameKey: "js"}}}
	q := &recordingQueue{}
	h := p.handler()
	ctx := context.Background()

	p.readsPods(key, false)
	h.Create(ctx, ctrlevent.TypedCreateEvent[client.Object]{Object: pod}, q)
	h.Update(ctx, ctrlevent.TypedUpdateEvent[client.Object]{ObjectOld: pod, ObjectNew: pod}, q)
	h.Delete(ctx, ctrlevent.TypedDeleteEvent[client.Object]{Object: pod}, q)
	p.readsPods(key, true)
	h.Delete(ctx, ctrlevent.TypedDeleteEvent[client.Object]{Object: pod}, q)

	q.expect(t, key, 0)
}

// While the group gathers, the events that cannot change the decision
// wait the quiet pause; the join that completes the gather, the short one.
func TestPodEventPacerHandlerDuringAGather(t *testing.T) {
	clock := testingclock.NewFakePassiveClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	p := newPodEventPacer(clock)
	key := types.NamespacedName{Namespace: "ns", Name: "js"}
	q := &recordingQueue{}
	h := p.handler()
	ctx := context.Background()
	update := func(before, now *corev1.Pod) {
		h.Update(ctx, ctrlevent.TypedUpdateEvent[client.Object]{ObjectOld: before, ObjectNew: now}, q)
	}

	for _, name := range []string{"a", "b", "c"} {
		h.Create(ctx, ctrlevent.TypedCreateEvent[client.Object]{Object: tallyPod(name, "1")}, q)
	}
	// The reconcile that deprecated epoch 1 (2000 Pods, for round pauses).
	if p.reconciled(key, 2000, true, gatheringAt(2).gather) {
		t.Fatal("reconciled: look again, with every Pod waiting")
	}
	restarting := func(p *corev1.Pod) {
		p.Status.Conditions = []corev1.PodCondition{{Type: "AllContainersRestarting", Status: corev1.ConditionTrue}}
	}
	update(tallyPod("a", "1"), tallyPod("a", "1", restarting))
	update(tallyPod("a", "1", restarting), tallyPod("a", "2"))
	update(tallyPod("b", "1"), tallyPod("b", "2"))
	update(tallyPod("c", "1"), tallyPod("c", "2"))

	quiet, short := 10*time.Second, 100*time.Millisecond
	q.expect(t, key, 0, 0, 0, quiet, quiet, quiet, short)
}

// The reconciler publishes the gather its Pods are labelled for: during
// a group restart of Pods built from the JobSet's own Jobs, every join
// but the last waits the quiet pause, and the last the short one.
func TestReconcilePublishesTheGather(t *testing.T) {
	r, req, pods := inPlaceJobSet(t, 10, 4, 3, 3) // group restart 3 -> 4 in progress
	clock := testingclock.NewFakePassiveClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	r.pacer = newPodEventPacer(clock)
	q := &recordingQueue{}
	h := r.pacer.handler()
	ctx := context.Background()
	for _, pod := range pods {
		h.Create(ctx, ctrlevent.TypedCreateEvent[client.Object]{Object: pod}, q)
	}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	q.added = nil
	for _, pod := range pods {
		joined := pod.DeepCopy()
		joined.Annotations[jobset.EpochKey] = "4"
		h.Update(ctx, ctrlevent.TypedUpdateEvent[client.Object]{ObjectOld: pod, ObjectNew: joined}, q)
	}

	want := make([]time.Duration, len(pods))
	for i := range want {
		want[i] = time.Duration(len(pods)) * DefaultQuietPausePerPod
	}
	want[len(pods)-1] = time.Duration(len(pods)) * DefaultPausePerPod
	q.expect(t, req.NamespacedName, want...)
}

// A change of a Job's count of ready Pods alone brings a reconcile only
// when the Job becomes ready or stops being ready, after the short pause;
// any other change of a Job is reconciled at once.
func TestJobEventsByReadiness(t *testing.T) {
	clock := testingclock.NewFakePassiveClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	p := newPodEventPacer(clock)
	key := types.NamespacedName{Namespace: "ns", Name: "js"}
	q := &recordingQueue{}
	h := p.jobHandler()
	ctx := context.Background()
	// job has 4 Pods, ready of them.
	job := func(ready int32, mutate ...func(*batchv1.Job)) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "js-workers-0", Generation: 1,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: jobset.GroupVersion.String(), Kind: "JobSet", Name: "js",
				Controller: ptr.To(true)}}},
			Spec:   batchv1.JobSpec{Parallelism: ptr.To[int32](4), Completions: ptr.To[int32](4)},
			Status: batchv1.JobStatus{Active: 4, Ready: ptr.To(ready)}}
		for _, m := range mutate {
			m(j)
		}
		return j
	}
	failed := func(j *batchv1.Job) {
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	}
	notOurs := func(j *batchv1.Job) { j.OwnerReferences = nil }
	update := func(before, now *batchv1.Job) {
		h.Update(ctx, ctrlevent.TypedUpdateEvent[client.Object]{ObjectOld: before, ObjectNew: now}, q)
	}

	p.reconciled(key, 2000, true, gatheringAt(2).gather)
	update(job(4), job(3)) // no longer ready
	update(job(3), job(2))
	update(job(1), job(0))
	update(job(3), job(4)) // ready again
	update(job(3), job(3, failed))
	h.Create(ctx, ctrlevent.TypedCreateEvent[client.Object]{Object: job(0)}, q)
	update(job(4, notOurs), job(3, notOurs))

	short := 100 * time.Millisecond
	q.expect(t, key, short, short, 0, 0)
}

// A Job's readiness is waited for at the short pause only when it changes
// whether all the Jobs of its replicatedJob are ready (what Kueue's
// PodsReady reads of the status); the other changes wait the quiet pause,
// the group in sync or gathering.
func TestJobReadinessPacedByTheReplicatedJob(t *testing.T) {
	clock := testingclock.NewFakePassiveClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	p := newPodEventPacer(clock)
	key := types.NamespacedName{Namespace: "ns", Name: "js"}
	h := p.jobHandler()
	ctx := context.Background()
	// job is Job i of replicatedJob workers, of 4 Pods, ready of them.
	job := func(i int, ready int32) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("js-workers-%d", i), Generation: 1,
			Labels: map[string]string{jobset.ReplicatedJobNameKey: "workers"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: jobset.GroupVersion.String(), Kind: "JobSet", Name: "js",
				Controller: ptr.To(true)}}},
			Spec:   batchv1.JobSpec{Parallelism: ptr.To[int32](4), Completions: ptr.To[int32](4)},
			Status: batchv1.JobStatus{Active: 4, Ready: ptr.To(ready)}}
	}
	update := func(q *recordingQueue, i int, before, now int32) {
		h.Update(ctx, ctrlevent.TypedUpdateEvent[client.Object]{ObjectOld: job(i, before), ObjectNew: job(i, now)}, q)
	}
	created := &recordingQueue{}
	for i := range 3 {
		h.Create(ctx, ctrlevent.TypedCreateEvent[client.Object]{Object: job(i, 4)}, created)
	}
	created.expect(t, key, 0, 0, 0)

	short, quiet := 100*time.Millisecond, 10*time.Second
	gathering := &recordingQueue{}
	p.reconciled(key, 2000, true, gatheringAt(2).gather)
	update(gathering, 0, 4, 3) // the first Job down: workers no longer all ready
	update(gathering, 1, 4, 0)
	update(gathering, 1, 0, 4)
	update(gathering, 0, 3, 4) // the last one up: all ready again
	gathering.expect(t, key, short, quiet, quiet, short)

	inSync := &recordingQueue{}
	p.reconciled(key, 2000, true, nil)
	update(inSync, 2, 4, 3)
	update(inSync, 1, 4, 3)
	update(inSync, 1, 3, 4)
	h.Delete(ctx, ctrlevent.TypedDeleteEvent[client.Object]{Object: job(2, 3)}, inSync) // at once, as any change but readiness
	inSync.expect(t, key, short, quiet, quiet, 0)
}

type added struct {
	req   reconcile.Request
	after time.Duration
}

// recordingQueue records what a handler asks of the work queue.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	added []added
}

func (q *recordingQueue) Add(req reconcile.Request) { q.AddAfter(req, 0) }

// expect checks that key was enqueued once per delay, after each.
func (q *recordingQueue) expect(t *testing.T, key types.NamespacedName, delays ...time.Duration) {
	t.Helper()
	if len(q.added) != len(delays) {
		t.Fatalf("enqueued %d times, want %d: %v", len(q.added), len(delays), q.added)
	}
	for i, a := range q.added {
		if a.req.NamespacedName != key || a.after != delays[i] {
			t.Errorf("enqueue %d = %s after %s, want %s after %s", i, a.req, a.after, key, delays[i])
		}
	}
}

func (q *recordingQueue) AddAfter(req reconcile.Request, after time.Duration) {
	q.added = append(q.added, added{req, after})
}

// The worker's exit code is in the Pod's status for one kubelet write: the
// next shows every container restarting, which is no sign. A reconcile that
// reads the Pod after it still starts the group restart, from the sign its
// event showed, instead of waiting for the Pod's rejoin.
func TestReconcileActsOnASignOnlyAnEventShowed(t *testing.T) {
	r, req, pods := inPlaceJobSet(t, 2, 1, 1, 0) // in sync at 1
	r.pacer = newPodEventPacer(testingclock.NewFakePassiveClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)))
	h, q, ctx := r.pacer.handler(), &recordingQueue{}, context.Background()
	for _, pod := range pods {
		h.Create(ctx, ctrlevent.TypedCreateEvent[client.Object]{Object: pod}, q)
	}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}

	agentUp := metav1.NewTime(time.Date(2026, 1, 1, 11, 0, 0, 0, time.UTC))
	failed := pods[1].DeepCopy()
	failed.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: agentspec.ContainerName,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: agentUp}}}}
	failed.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.NewTime(agentUp.Add(time.Minute))}}}}
	restarting := failed.DeepCopy()
	for _, statuses := range [][]corev1.ContainerStatus{restarting.Status.InitContainerStatuses, restarting.Status.ContainerStatuses} {
		statuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: jobset.ReasonRestartingAllContainers}}
	}
	h.Update(ctx, ctrlevent.TypedUpdateEvent[client.Object]{ObjectOld: pods[1], ObjectNew: failed}, q)
	h.Update(ctx, ctrlevent.TypedUpdateEvent[client.Object]{ObjectOld: failed, ObjectNew: restarting}, q)
	// The cache, and the API server, hold the restarting Pod.
	*pods[1] = *restarting
	r.client.(cachedLists).pods.Items[1] = *restarting
	stored := &corev1.Pod{}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(restarting), stored); err != nil {
		t.Fatal(err)
	}
	stored.Status = restarting.Status
	if err := r.client.Status().Update(ctx, stored); err != nil {
		t.Fatal(err)
	}

	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	js := &jobset.JobSet{}
	if err := r.client.Get(ctx, req.NamespacedName, js); err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(js.Status.DeprecatedEpoch, 0); got != 1 {
		t.Errorf("deprecatedEpoch = %d, want 1: the group restart starts from the sign the event showed", got)
	}
	if js.Status.InPlaceRestarts != 1 {
		t.Errorf("inPlaceRestarts = %d, want 1", js.Status.InPlaceRestarts)
	}
}
