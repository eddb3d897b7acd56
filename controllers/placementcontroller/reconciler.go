// Package placementcontroller runs exclusive placement's reconciler: it
// deletes followers whose node selector no longer matches their leader's
// topology domain, for the Job controller to recreate them and the Pod
// webhooks to pin them anew. The rules it shares with the webhooks are in
// api/jobset/placement.
package placementcontroller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/fastjobset/jobset/api/jobset/placement"
)

// ReasonFollowerMisplaced is the reason of the event recorded on a follower
// Pod deleted because it is pinned to a domain its leader left.
const ReasonFollowerMisplaced = "ExclusivePlacementViolation"

// Reconciler keeps the followers of exclusively placed Jobs in their
// leader's domain: when a leader runs in a domain other than the one its
// followers were pinned to (it was recreated and scheduled elsewhere), it
// deletes those followers, and the Job controller recreates them, to be
// pinned anew at admission.
type Reconciler struct {
	client   client.Client
	recorder events.EventRecorder
}

// NewReconciler returns a Reconciler that reads Pods and Nodes through c
// (the manager's cache) and records events with recorder.
func NewReconciler(c client.Client, recorder events.EventRecorder) *Reconciler {
	return &Reconciler{client: c, recorder: recorder}
}

// SetupWithManager reconciles scheduled leader Pods, and the leader of any
// exclusively placed Pod that changes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("exclusive-placement").
		For(&corev1.Pod{}, builder.WithPredicates(predicate.NewPredicateFuncs(scheduledLeader))).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.leaderOf)).
		Complete(r)
}

func scheduledLeader(o client.Object) bool {
	pod, ok := o.(*corev1.Pod)
	if !ok {
		return false
	}
	_, exclusive := placement.TopologyKey(pod)
	return exclusive && placement.IsLeader(pod) && placement.Leads(pod)
}

// leaderOf maps a follower to its leader, so that a follower admitted on a
// stale view of its leader is checked too.
func (r *Reconciler) leaderOf(ctx context.Context, o client.Object) []reconcile.Request {
	pod, ok := o.(*corev1.Pod)
	if !ok {
		return nil
	}
	if _, exclusive := placement.TopologyKey(pod); !exclusive || placement.IsLeader(pod) {
		return nil
	}
	var leaders corev1.PodList
	if err := r.client.List(ctx, &leaders, client.InNamespace(pod.Namespace),
		client.MatchingLabelsSelector{Selector: placement.LeaderSelector(pod)}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the leader of a follower Pod", "pod", client.ObjectKeyFromObject(pod))
		return nil
	}
	requests := make([]reconcile.Request, 0, len(leaders.Items))
	for i := range leaders.Items {
		requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&leaders.Items[i])})
	}
	return requests
}

// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=core,resources=nodes,verbs=get;list;watch

// Reconcile deletes the followers of the leader Pod req that are pinned to
// another domain than the leader's.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var leader corev1.Pod
	if err := r.client.Get(ctx, req.NamespacedName, &leader); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !leads(&leader) {
		return reconcile.Result{}, nil
	}
	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, client.InNamespace(leader.Namespace),
		client.MatchingLabelsSelector{Selector: placement.JobSelector(&leader)}); err != nil {
		return reconcile.Result{}, err
	}
	// The leader and its followers are read from one List, one point of
	// the cache. Read apart, the cache may move between the two: a leader
	// seen before it failed, and a follower admitted after the leader's
	// replacement was scheduled elsewhere, would have that follower
	// deleted from the very domain it belongs in.
	current := podWithUID(pods.Items, leader.UID)
	if current == nil || !leads(current) {
		return reconcile.Result{}, nil
	}
	topologyKey, _ := placement.TopologyKey(current)
	var node corev1.Node
	if err := r.client.Get(ctx, types.NamespacedName{Name: current.Spec.NodeName}, &node); err != nil {
		return reconcile.Result{}, fmt.Errorf("reading the node of leader Pod %s: %w", req, err)
	}
	domain, err := placement.Domain(&node, topologyKey)
	if err != nil {
		// The scheduler only places a leader where the label exists; a
		// node relabelled since is the administrator's to fix.
		ctrl.LoggerFrom(ctx).Error(err, "leader Pod runs outside every topology domain", "pod", req)
		return reconcile.Result{}, nil
	}
	for _, follower := range placement.MisplacedFollowers(pods.Items, topologyKey, domain) {
		err := r.client.Delete(ctx, follower, client.Preconditions{UID: &follower.UID})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return reconcile.Result{}, fmt.Errorf("deleting misplaced follower Pod %s: %w", client.ObjectKeyFromObject(follower), err)
		}
		r.recorder.Eventf(follower, current, corev1.EventTypeNormal, ReasonFollowerMisplaced, "Delete",
			"deleted: pinned to %s=%s, but its leader %s runs in %s=%s", topologyKey, follower.Spec.NodeSelector[topologyKey], current.Name, topologyKey, domain)
	}
	return reconcile.Result{}, nil
}

// leads reports whether leader places its followers now: a scheduled,
// exclusively placed leader that neither failed nor is being deleted.
func leads(leader *corev1.Pod) bool {
	return scheduledLeader(leader) && leader.DeletionTimestamp == nil
}

func podWithUID(pods []corev1.Pod, uid types.UID) *corev1.Pod {
	for i := range pods {
		if pods[i].UID == uid {
			return &pods[i]
		}
	}
	return nil
}
