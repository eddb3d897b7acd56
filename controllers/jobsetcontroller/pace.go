package jobsetcontroller

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// DefaultPausePerPod is how long, per Pod of an in-place JobSet, a Pod
// event that may change its epoch decision waits after that JobSet's last
// reconcile before it causes the next one.
//
// Every reconcile of an in-place JobSet reads all of its Pods, so it costs
// time in proportion to them, and during a group restart each Pod brings
// several events (the kubelet's status writes, its agent's join).
// Reconciled back to back, the controller's CPU per group restart would grow
// with the Pods times the gather's length, and both grow with the group.
// A pause that grows with the Pods bounds the share of a core one JobSet
// can take. The first event after a quiet spell is reconciled at once: the
// pause only ever delays the events of a storm, each by at most one pause,
// and a reconcile that writes reads the Pods afresh anyway.
const DefaultPausePerPod = 50 * time.Microsecond

// DefaultQuietPausePerPod is the pause, per Pod, for a Pod event that
// cannot change the JobSet's epoch decision (inplace.Tally), a hundred
// times the other: such events need a reconcile only for what they show
// besides the decision (the GatherStalled report), so however long their
// storm lasts, their reconciles take a small, fixed share of a core. The
// events that may change the decision (a failure signal, the last join, a
// Pod that ends or goes) are the ones reconciled at the short pause.
const DefaultQuietPausePerPod = 5 * time.Millisecond

// podEventPacer remembers, per JobSet, when its last reconcile ended and
// how many Pods it read, tallies its Pods' events, and follows which of
// its Jobs are ready.
type podEventPacer struct {
	clock clock.PassiveClock

	mu      sync.Mutex
	last    map[types.NamespacedName]reconciled
	tallies map[types.NamespacedName]*inplace.Tally
	// podsUnread are the JobSets whose last reconcile read none of their
	// Pods (running, and restarting by recreating their Jobs): no event
	// of a Pod of theirs can change what the next one does.
	podsUnread map[types.NamespacedName]bool
	// unreadyJobs holds, per JobSet and replicatedJob, the Jobs whose last
	// event showed them not ready (jobHandler).
	unreadyJobs map[types.NamespacedName]map[string]sets.Set[string]
}

type reconciled struct {
	at   time.Time
	pods int
}

func newPodEventPacer(c clock.PassiveClock) *podEventPacer {
	return &podEventPacer{clock: c, last: map[types.NamespacedName]reconciled{}, tallies: map[types.NamespacedName]*inplace.Tally{},
		podsUnread: map[types.NamespacedName]bool{}, unreadyJobs: map[types.NamespacedName]map[string]sets.Set[string]{}}
}

// reconciled records the end of a reconcile of key that read pods Pods
// and, when known, left its in-place group gathering at g (nil: in sync).
// Not known: a reconcile that failed, a JobSet suspended or restarting
// fully. lookAgain: events weighed against what the last one left may be
// news now (inplace.Tally.Publish).
func (p *podEventPacer) reconciled(key types.NamespacedName, pods int, known bool, g *inplace.Gather) (lookAgain bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last[key] = reconciled{at: p.clock.Now(), pods: pods}
	t := p.tally(key)
	defer p.dropIfEmpty(key, t)
	if !known {
		return t.Forget()
	}
	return t.Publish(g)
}

// readsPods records whether key's reconciles read its Pods. Those of a
// JobSet that recreates its Jobs do not: its Pods' events, thousands in a
// restart, would only bring reconciles that change nothing.
func (p *podEventPacer) readsPods(key types.NamespacedName, reads bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if reads {
		delete(p.podsUnread, key)
	} else {
		p.podsUnread[key] = true
	}
}

// forget drops a JobSet that is gone. Its Pods' tally goes with their
// deletion events.
func (p *podEventPacer) forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.last, key)
	delete(p.podsUnread, key)
	delete(p.unreadyJobs, key)
	t := p.tally(key)
	defer p.dropIfEmpty(key, t)
	t.Forget()
}

// observe tallies a Pod event of key's (pod nil: the Pod left the JobSet)
// and returns how long it waits before its reconcile.
func (p *podEventPacer) observe(key types.NamespacedName, name string, pod *corev1.Pod) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.tally(key)
	defer p.dropIfEmpty(key, t)
	if t.Observe(name, markOf(pod, t.ReadsSignals())) {
		return p.delay(key, DefaultPausePerPod)
	}
	return p.delay(key, DefaultQuietPausePerPod)
}

func (p *podEventPacer) unread(key types.NamespacedName) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.podsUnread[key]
}

// signs are the failure signals key's tally keeps (inplace.Tally.Signs).
func (p *podEventPacer) signs(key types.NamespacedName) map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.tallies[key]; t != nil {
		return t.Signs()
	}
	return nil
}

// tally is key's Pod tally, new if it has none; p.mu is held.
func (p *podEventPacer) tally(key types.NamespacedName) *inplace.Tally {
	t := p.tallies[key]
	if t == nil {
		t = inplace.NewTally()
		p.tallies[key] = t
	}
	return t
}

// dropIfEmpty drops key's tally once it follows nothing; p.mu is held.
func (p *podEventPacer) dropIfEmpty(key types.NamespacedName, t *inplace.Tally) {
	if t.Empty() {
		delete(p.tallies, key)
	}
}

// delay is how long an event of key's waits at perPod; p.mu is held.
func (p *podEventPacer) delay(key types.NamespacedName, perPod time.Duration) time.Duration {
	last, ok := p.last[key]
	if !ok {
		return 0
	}
	return max(0, last.at.Add(time.Duration(last.pods)*perPod).Sub(p.clock.Now()))
}

// handler tallies each Pod event and enqueues its JobSet after its delay.
// The work queue keeps one entry per JobSet, at the earliest time asked
// for, so a storm of events in one pause becomes one reconcile, and an
// event that may change the decision brings forward the reconcile that
// quieter ones asked for.
func (p *podEventPacer) handler() handler.TypedEventHandler[client.Object, reconcile.Request] {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	// Like handler.EnqueueRequestsFromMapFunc, an update enqueues the JobSets
	// of the old and the new object (a Pod whose label was removed leaves
	// its JobSet), each once. now is nil when the Pod is gone.
	enqueue := func(ctx context.Context, q queue, before, now client.Object) {
		seen := map[reconcile.Request]bool{}
		for _, o := range []client.Object{now, before} {
			if o == nil {
				continue
			}
			for _, req := range podToJobSet(ctx, o) {
				if seen[req] {
					continue
				}
				seen[req] = true
				if p.unread(req.NamespacedName) {
					continue
				}
				var pod *corev1.Pod // as the JobSet has it now: nil if it left
				if o == now {
					pod, _ = now.(*corev1.Pod)
				}
				q.AddAfter(req, p.observe(req.NamespacedName, o.GetName(), pod))
			}
		}
	}
	return handler.TypedFuncs[client.Object, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e ctrlevent.TypedCreateEvent[client.Object], q queue) {
			enqueue(ctx, q, nil, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e ctrlevent.TypedUpdateEvent[client.Object], q queue) {
			enqueue(ctx, q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e ctrlevent.TypedDeleteEvent[client.Object], q queue) {
			enqueue(ctx, q, e.Object, nil)
		},
		GenericFunc: func(ctx context.Context, e ctrlevent.TypedGenericEvent[client.Object], q queue) {
			enqueue(ctx, q, nil, e.Object)
		},
	}
}

// jobHandler enqueues the JobSet that controls a Job at each of its
// events, at once; but for a change of the Job's count of ready Pods
// alone. A reconcile reads of it only whether the Job is ready (all its
// Pods), so a change that leaves that as it was brings no reconcile. One
// that changes it waits a pause of an in-place JobSet's Pod events, as a
// group restart makes every Job unready and ready again and a reconcile
// reads every Pod of the JobSet: the short pause when it changes whether
// all the Jobs of its replicatedJob are ready, which is what the readers
// of the status's ready counts act on (Kueue's PodsReady, the startup
// policy); otherwise the quiet pause. The epoch decision reads no Job's
// readiness, and every status write goes to the watch of every Pod's
// agent: the counts between follow, at most a quiet pause late, in a few
// writes instead of one a Job.
func (p *podEventPacer) jobHandler() handler.TypedEventHandler[client.Object, reconcile.Request] {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	// enqueue records whether the Job is ready (gone: deleted) and enqueues
	// its JobSet: at once unless paced.
	enqueue := func(q queue, job client.Object, gone, paced bool) {
		owner := metav1.GetControllerOf(job)
		if owner == nil || owner.Kind != "JobSet" || owner.APIVersion != jobset.GroupVersion.String() {
			return
		}
		req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: job.GetNamespace(), Name: owner.Name}}
		p.mu.Lock()
		allReadyChanged := p.observeJob(req.NamespacedName, job, gone)
		var delay time.Duration
		if paced {
			perPod := DefaultPausePerPod
			if !allReadyChanged {
				perPod = DefaultQuietPausePerPod
			}
			delay = p.delay(req.NamespacedName, perPod)
		}
		p.mu.Unlock()
		q.AddAfter(req, delay)
	}
	return handler.TypedFuncs[client.Object, reconcile.Request]{
		CreateFunc: func(_ context.Context, e ctrlevent.TypedCreateEvent[client.Object], q queue) {
			enqueue(q, e.Object, false, false)
		},
		UpdateFunc: func(_ context.Context, e ctrlevent.TypedUpdateEvent[client.Object], q queue) {
			before, bok := e.ObjectOld.(*batchv1.Job)
			now, nok := e.ObjectNew.(*batchv1.Job)
			switch {
			case !bok || !nok || !readinessOnly(before, now):
				enqueue(q, e.ObjectNew, false, false)
			case jobReady(before) != jobReady(now):
				enqueue(q, e.ObjectNew, false, true)
			}
		},
		DeleteFunc: func(_ context.Context, e ctrlevent.TypedDeleteEvent[client.Object], q queue) {
			enqueue(q, e.Object, true, false)
		},
		GenericFunc: func(_ context.Context, e ctrlevent.TypedGenericEvent[client.Object], q queue) {
			enqueue(q, e.Object, false, false)
		},
	}
}

// observeJob records whether key's Job is ready as its event showed it
// (gone: deleted), and reports whether that changed whether every Job of
// its replicatedJob is, as far as their events showed them; p.mu is held.
func (p *podEventPacer) observeJob(key types.NamespacedName, obj client.Object, gone bool) (allReadyChanged bool) {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return true
	}
	byReplicatedJob := p.unreadyJobs[key]
	if byReplicatedJob == nil {
		byReplicatedJob = map[string]sets.Set[string]{}
		p.unreadyJobs[key] = byReplicatedJob
	}
	name := job.Labels[jobset.ReplicatedJobNameKey]
	unready := byReplicatedJob[name]
	if unready == nil {
		unready = sets.New[string]()
		byReplicatedJob[name] = unready
	}
	allReadyBefore := unready.Len() == 0
	if gone || jobReady(job) {
		unready.Delete(job.Name)
	} else {
		unready.Insert(job.Name)
	}
	allReady := unready.Len() == 0
	if allReady {
		delete(byReplicatedJob, name)
		if len(byReplicatedJob) == 0 {
			delete(p.unreadyJobs, key)
		}
	}
	return allReady != allReadyBefore
}

// readinessOnly: between two versions of a Job, only its count of ready
// Pods changed.
func readinessOnly(before, now *batchv1.Job) bool {
	if before.Generation != now.Generation || !before.DeletionTimestamp.Equal(now.DeletionTimestamp) ||
		!maps.Equal(before.Labels, now.Labels) || !maps.Equal(before.Annotations, now.Annotations) ||
		!slices.Equal(before.Finalizers, now.Finalizers) {
		return false
	}
	b, n := before.Status, now.Status
	b.Ready, n.Ready = nil, nil
	return apiequality.Semantic.DeepEqual(b, n)
}

// markOf is what the tally keeps of a Pod (nil: gone), as epochSnapshot
// reads it (readPod); its failure signal only when withSignal.
func markOf(pod *corev1.Pod, withSignal bool) *inplace.Mark {
	if pod == nil {
		return nil
	}
	p := inplace.ReadPod(pod, withSignal)
	return &inplace.Mark{
		Attempt:       attemptOf(pod.Labels[jobset.JobSetUIDKey], pod.Labels[jobset.RestartsKey]),
		Member:        pod.Labels[jobset.ReplicatedJobNameKey],
		Epoch:         p.Epoch,
		Succeeded:     p.Succeeded,
		Failed:        p.Failed,
		Deleting:      p.Deleting,
		StillRunning:  p.StillRunning,
		Left:          p.Left,
		Unheld:        p.Unheld,
		FailureSignal: p.FailureSignal != "",
	}
}

// attemptOf names a JobSet's restart attempt as the tally compares them.
func attemptOf(jobSetUID, restarts string) string {
	return jobSetUID + "/" + restarts
}
