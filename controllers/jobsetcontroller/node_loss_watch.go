package jobsetcontroller

import (
	"context"
	"slices"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/nodeloss"
)

// A node is lost when nothing happens: its Lease stops being renewed. So no
// event says when to look; the node-loss watch does, every second: it
// sends the reconciler the JobSets with Pods on a node that has been
// silent longer than a renew interval and a half (a suspect), whose
// reconcile then looks again when the member's bound is reached; and it
// takes NodeLostTaint off a node whose kubelet renews its Lease again.
type nodeLossWatch struct {
	tracker *nodeloss.Tracker
	client  client.Client
	// apiReader reads Nodes, which the cache does not hold.
	apiReader client.Reader
	// suspects carries the JobSets to reconcile.
	suspects chan ctrlevent.GenericEvent

	// suspected: the nodes sent as suspects, until they renew again;
	// tainted: the nodes that may carry NodeLostTaint.
	suspected, tainted map[string]bool
}

// quietGap: a quiet spell with no Lease renewed at all, longer than a
// renew interval, means the controller is the one cut off (nodeloss).
const quietGap = nodeloss.DefaultRenewInterval * 3 / 2

func newNodeLossWatch(c client.Client, apiReader client.Reader) *nodeLossWatch {
	return &nodeLossWatch{
		tracker: nodeloss.NewTracker(clock.RealClock{}, quietGap),
		client:  c, apiReader: apiReader,
		suspects:  make(chan ctrlevent.GenericEvent, 64),
		suspected: map[string]bool{},
	}
}

// leaseHandler feeds the tracker and asks for no reconcile.
func (w *nodeLossWatch) leaseHandler() handler.EventHandler {
	observe := func(o client.Object) {
		if l, ok := o.(*coordinationv1.Lease); ok {
			w.tracker.Observe(l)
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e ctrlevent.CreateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			observe(e.Object)
		},
		UpdateFunc: func(_ context.Context, e ctrlevent.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			observe(e.ObjectNew)
		},
		DeleteFunc: func(_ context.Context, e ctrlevent.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			w.tracker.Forget(e.Object.GetName())
		},
	}
}

// Start looks every second until ctx ends (a leader's runnable).
func (w *nodeLossWatch) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("node-loss")
	if err := w.findTainted(ctx); err != nil {
		logger.Error(err, "Listing the nodes tainted as lost; a node that renews again is untainted once it is seen lost anew")
	}
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		for _, node := range w.tracker.Nodes() {
			silence, interval, _ := w.tracker.Silence(node)
			switch {
			case nodeloss.Suspect(silence, interval) && !w.suspected[node]:
				if err := w.sendJobSetsOn(ctx, node); err != nil {
					logger.Error(err, "Finding the JobSets with Pods on a silent node", "node", node)
					continue
				}
				w.suspected[node] = true
			case silence <= interval:
				delete(w.suspected, node)
				if w.tainted[node] {
					if err := w.untaint(ctx, node); err != nil {
						logger.Error(err, "Removing the node-lost taint of a node that renews again", "node", node)
						continue
					}
					logger.Info("A node declared lost renews its Lease again: its taint is removed", "node", node, "taint", NodeLostTaint)
				}
			}
		}
	}
}

// sendJobSetsOn sends the JobSets with Pods on the node to the reconciler,
// each once; it also notes whether the node carries the taint.
func (w *nodeLossWatch) sendJobSetsOn(ctx context.Context, node string) error {
	var pods corev1.PodList
	if err := w.client.List(ctx, &pods, client.MatchingFields{PodNodeNameIndex: node}, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	sent := map[client.ObjectKey]bool{}
	for _, pod := range pods.Items {
		key := client.ObjectKey{Namespace: pod.Namespace, Name: pod.Labels[jobset.JobSetNameKey]}
		if key.Name == "" || sent[key] {
			continue
		}
		sent[key] = true
		js := &jobset.JobSet{}
		js.Namespace, js.Name = key.Namespace, key.Name
		select {
		case w.suspects <- ctrlevent.GenericEvent{Object: js}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if w.tainted == nil {
		w.tainted = map[string]bool{}
	}
	w.tainted[node] = true // it may be, once a member on it is declared lost
	return nil
}

// findTainted notes the nodes that carry the taint, which an earlier
// leader may have put.
func (w *nodeLossWatch) findTainted(ctx context.Context) error {
	w.tainted = map[string]bool{}
	var nodes corev1.NodeList
	if err := w.apiReader.List(ctx, &nodes); err != nil {
		return err
	}
	for _, n := range nodes.Items {
		if slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == NodeLostTaint }) {
			w.tainted[n.Name] = true
		}
	}
	return nil
}

// untaint takes NodeLostTaint off the node.
func (w *nodeLossWatch) untaint(ctx context.Context, name string) error {
	if err := setNodeLostTaint(ctx, w.apiReader, w.client, name, false); err != nil {
		return err
	}
	delete(w.tainted, name)
	return nil
}
