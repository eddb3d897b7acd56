package nodeloss

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// QuietGap: a quiet spell with no Lease renewed at all, longer than a
// renew interval, means the controller is the one cut off (see the
// package comment).
const QuietGap = DefaultRenewInterval * 3 / 2

// checkSlack is added to the time at which a node would turn suspect, so
// that the check made then finds it past the boundary, not on it.
const checkSlack = 100 * time.Millisecond

// Controller reconciles a node each time its Lease changes, and again when
// it would turn suspect if nothing more is heard from it: no event says
// that a node is lost, only the absence of one. It runs while its manager
// leads, with one reconcile at a time, so its maps need no lock.
type Controller struct {
	// Tracker is the nodes' silence, which the JobSet reconciler reads
	// too.
	Tracker *Tracker
	// term is this controller's term of Tracker, which its informer feeds.
	term   Term
	client client.Client
	// apiReader reads Nodes, which the cache does not hold.
	apiReader client.Reader
	suspects  chan event.GenericEvent

	// suspected: the nodes sent as suspects, until they renew again.
	suspected map[string]bool
	// tainted: the nodes that may carry Taint; nil until the nodes that
	// an earlier leader tainted are listed.
	tainted map[string]bool
}

// NewController returns a Controller for one leadership term, writing
// Nodes through c and reading them through apiReader, that feeds tracker
// (nil: a tracker of its own), starting a term of it (Tracker.NewTerm).
func NewController(c client.Client, apiReader client.Reader, tracker *Tracker) *Controller {
	if tracker == nil {
		tracker = NewTracker(clock.RealClock{}, QuietGap)
	}
	return &Controller{
		Tracker: tracker, term: tracker.NewTerm(),
		client: c, apiReader: apiReader,
		suspects:  make(chan event.GenericEvent, 64),
		suspected: map[string]bool{},
	}
}

// Suspects carries each node that turned suspect, once a spell of silence,
// as a Node with only its name, to h: the JobSet reconciler looks again at
// the JobSets with Pods there.
func (c *Controller) Suspects(h handler.EventHandler) source.Source {
	return source.Channel(c.suspects, h)
}

// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=kube-node-lease,resources=leases,verbs=get;list;watch
// +kubebuilder:rbac:groups=core,resources=nodes,verbs=get;list;patch

// SetupWithManager registers the controller with the manager, whose cache
// must hold the Leases of kube-node-lease. The Tracker follows the Leases
// from the moment the manager's cache starts, leading or not: a standby
// that takes over after a leader's term ended knows each node's silence
// already, where a tracker fed only once leading would count it afresh
// and hold a lost node's members a whole bound longer.
func (c *Controller) SetupWithManager(mgr ctrl.Manager) error {
	// The cache has not started: this returns at once, and the informer
	// starts with the cache.
	leases, err := mgr.GetCache().GetInformer(context.Background(), &coordinationv1.Lease{})
	if err != nil {
		return fmt.Errorf("the Leases' informer: %w", err)
	}
	if _, err := leases.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.observe(obj) },
		UpdateFunc: func(_, obj any) { c.observe(obj) },
		DeleteFunc: func(obj any) {
			if final, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = final.Obj
			}
			if l, ok := obj.(*coordinationv1.Lease); ok {
				c.term.Forget(l.Name)
			}
		},
	}); err != nil {
		return fmt.Errorf("following the Leases: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("nodeloss").
		WatchesRawSource(source.Kind(mgr.GetCache(), &coordinationv1.Lease{}, c.leaseHandler())).
		Complete(c)
}

// observe feeds the Tracker a Lease the informer delivered.
func (c *Controller) observe(obj any) {
	if l, ok := obj.(*coordinationv1.Lease); ok {
		c.term.Observe(l)
	}
}

// leaseHandler feeds the Tracker as each change arrives (again, once
// leading: the reconcile it enqueues then reads the change), so that a
// renewal is timed when it is seen, and reconciles the Lease's node.
func (c *Controller) leaseHandler() handler.TypedEventHandler[*coordinationv1.Lease, reconcile.Request] {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	enqueue := func(l *coordinationv1.Lease, q queue) {
		q.Add(reconcile.Request{NamespacedName: client.ObjectKey{Name: l.Name}})
	}
	return handler.TypedFuncs[*coordinationv1.Lease, reconcile.Request]{
		CreateFunc: func(_ context.Context, e event.TypedCreateEvent[*coordinationv1.Lease], q queue) {
			c.term.Observe(e.Object)
			enqueue(e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[*coordinationv1.Lease], q queue) {
			c.term.Observe(e.ObjectNew)
			enqueue(e.ObjectNew, q)
		},
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[*coordinationv1.Lease], q queue) {
			c.term.Forget(e.Object.Name)
			enqueue(e.Object, q)
		},
	}
}

// Reconcile looks at one node's silence: a node that turned suspect is
// sent to the JobSet reconciler; a node that renews again loses Taint; a
// node not yet suspect is looked at again when it would turn suspect.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := req.Name
	if c.tainted == nil {
		if err := c.findTainted(ctx); err != nil {
			return reconcile.Result{}, fmt.Errorf("listing the nodes tainted %s, which an earlier leader may have left: %w", Taint, err)
		}
	}
	silence, interval, known := c.Tracker.Silence(node)
	switch {
	case !known:
		delete(c.suspected, node)
		return reconcile.Result{}, nil
	case Suspect(silence, interval):
		if !c.suspected[node] {
			if err := c.send(ctx, node); err != nil {
				return reconcile.Result{}, err
			}
			c.suspected[node] = true
			// It may be tainted from now on, once a member on it is
			// declared lost.
			c.tainted[node] = true
		}
		return reconcile.Result{}, nil
	case silence <= interval:
		delete(c.suspected, node)
		if c.tainted[node] {
			if err := SetTaint(ctx, c.apiReader, c.client, node, false); err != nil {
				return reconcile.Result{}, fmt.Errorf("removing the node-lost taint of a node that renews again: %w", err)
			}
			delete(c.tainted, node)
			ctrl.LoggerFrom(ctx).Info("A node declared lost renews its Lease again: its taint is removed", "node", node, "taint", Taint)
		}
	}
	return reconcile.Result{RequeueAfter: SuspectAfter(interval) - silence + checkSlack}, nil
}

// send hands the node to the JobSet reconciler.
func (c *Controller) send(ctx context.Context, name string) error {
	node := &corev1.Node{}
	node.Name = name
	select {
	case c.suspects <- event.GenericEvent{Object: node}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// findTainted notes the nodes that carry Taint.
func (c *Controller) findTainted(ctx context.Context) error {
	var nodes corev1.NodeList
	if err := c.apiReader.List(ctx, &nodes); err != nil {
		return err
	}
	c.tainted = map[string]bool{}
	for i := range nodes.Items {
		if Tainted(&nodes.Items[i]) {
			c.tainted[nodes.Items[i].Name] = true
		}
	}
	return nil
}
