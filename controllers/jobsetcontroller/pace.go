package jobsetcontroller

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// DefaultPausePerPod is how long, per Pod of an in-place JobSet, a Pod
// event waits after that JobSet's last reconcile before it causes the next
// one: 50 us, so 0.25 s at 5000 Pods and under 1 ms at 16.
//
// Every reconcile of an in-place JobSet reads all of its Pods, so it costs
// time in proportion to them, and during a group restart each Pod brings
// several events (the kubelet's status writes, its agent's join). Reconciled
// back to back, the controller's CPU per group restart grew with the Pods
// times the gather's length (both grow with N: 3.4 CPU-s at 1000 Pods, 71
// at 5000 in B2). Spacing the reconciles by a pause that grows with the Pods
// bounds the share of a core one JobSet can take, so the CPU grows with the
// gather's length only. The first event after a quiet spell is reconciled at
// once: the pause only ever delays the events of a storm, each by at most
// one pause, and a reconcile that writes reads the Pods afresh anyway.
const DefaultPausePerPod = 50 * time.Microsecond

// podEventPacer remembers, per JobSet, when its last reconcile ended and
// how many Pods it read.
type podEventPacer struct {
	perPod time.Duration
	clock  clock.PassiveClock

	mu   sync.Mutex
	last map[types.NamespacedName]reconciled
}

type reconciled struct {
	at   time.Time
	pods int
}

func newPodEventPacer(perPod time.Duration, c clock.PassiveClock) *podEventPacer {
	return &podEventPacer{perPod: perPod, clock: c, last: map[types.NamespacedName]reconciled{}}
}

// reconciled records the end of a reconcile of key that read pods Pods.
func (p *podEventPacer) reconciled(key types.NamespacedName, pods int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last[key] = reconciled{at: p.clock.Now(), pods: pods}
}

// forget drops a JobSet that is gone.
func (p *podEventPacer) forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.last, key)
}

// delay is how long a Pod event of key waits before its reconcile.
func (p *podEventPacer) delay(key types.NamespacedName) time.Duration {
	p.mu.Lock()
	last, ok := p.last[key]
	p.mu.Unlock()
	if !ok {
		return 0
	}
	return max(0, last.at.Add(time.Duration(last.pods)*p.perPod).Sub(p.clock.Now()))
}

// handler enqueues a Pod event's JobSet after its delay. The work queue
// keeps one entry per JobSet, at the earliest time asked for, so a storm
// of events in one pause becomes one reconcile.
func (p *podEventPacer) handler() handler.TypedEventHandler[client.Object, reconcile.Request] {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	// Like handler.EnqueueRequestsFromMapFunc, an update enqueues the JobSets
	// of the old and the new object (a Pod whose label was removed leaves
	// its JobSet), each once.
	enqueue := func(ctx context.Context, q queue, objects ...client.Object) {
		seen := map[reconcile.Request]bool{}
		for _, o := range objects {
			for _, req := range podToJobSet(ctx, o) {
				if !seen[req] {
					seen[req] = true
					q.AddAfter(req, p.delay(req.NamespacedName))
				}
			}
		}
	}
	return handler.TypedFuncs[client.Object, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e ctrlevent.TypedCreateEvent[client.Object], q queue) {
			enqueue(ctx, q, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e ctrlevent.TypedUpdateEvent[client.Object], q queue) {
			enqueue(ctx, q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e ctrlevent.TypedDeleteEvent[client.Object], q queue) {
			enqueue(ctx, q, e.Object)
		},
		GenericFunc: func(ctx context.Context, e ctrlevent.TypedGenericEvent[client.Object], q queue) {
			enqueue(ctx, q, e.Object)
		},
	}
}
