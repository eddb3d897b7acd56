// Package pod serves the Pod admission webhooks of exclusive placement
// (alpha.jobset.sigs.k8s.io/exclusive-topology; see api/jobset/placement):
// leaders get the affinities that give their Job a topology domain of its
// own, followers are admitted only once their leader is scheduled and are
// pinned to its domain.
//
// Both webhooks see only Pods labelled with a JobSet name (objectSelector),
// and only their creation: the agent's epoch patches never reach them.
package pod

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/fastjobset/jobset/api/jobset/placement"
)

// +kubebuilder:webhook:path=/mutate--v1-pod,mutating=true,failurePolicy=fail,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=mpod.jobset.x-k8s.io,admissionReviewVersions=v1,patch=`{"objectSelector":{"matchExpressions":[{"key":"jobset.sigs.k8s.io/jobset-name","operator":"Exists"}]}}`
// +kubebuilder:webhook:path=/validate--v1-pod,mutating=false,failurePolicy=fail,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=vpod.jobset.x-k8s.io,admissionReviewVersions=v1,patch=`{"objectSelector":{"matchExpressions":[{"key":"jobset.sigs.k8s.io/jobset-name","operator":"Exists"}]}}`

// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=core,resources=nodes,verbs=get;list;watch

// Webhook reads leaders and their nodes through Reader (the manager's cache,
// limited to JobSet Pods by CacheOptions), and a Pod the cache may show
// stale through APIReader (keep_off.go).
type Webhook struct {
	Reader    client.Reader
	APIReader client.Reader
}

// SetupWithManager serves the Pod webhooks on the manager's webhook server.
func SetupWithManager(mgr ctrl.Manager) error {
	w := Webhook{Reader: mgr.GetClient(), APIReader: mgr.GetAPIReader()}
	return ctrl.NewWebhookManagedBy(mgr, &corev1.Pod{}).
		WithDefaulter(w).
		WithValidator(w).
		Complete()
}

// Default labels the Pod with its priority, gives a leader its affinities
// and pins a follower to its leader's domain once the leader is scheduled. A follower whose leader is
// not scheduled yet is left alone here; validation refuses it.
func (w Webhook) Default(ctx context.Context, pod *corev1.Pod) error {
	if err := w.keepOff(ctx, pod); err != nil {
		return err
	}
	placement.LabelPriority(pod)
	topologyKey, exclusive := placement.TopologyKey(pod)
	if !exclusive {
		return nil
	}
	if placement.IsLeader(pod) {
		placement.SetLeaderAffinities(pod, topologyKey)
		return nil
	}
	leader, err := w.leader(ctx, pod)
	if err != nil || placement.LeaderNotReady(pod, leader) != nil {
		return err
	}
	domain, err := w.domain(ctx, leader, topologyKey)
	if err != nil {
		return err
	}
	placement.PinToDomain(pod, topologyKey, domain)
	return nil
}

// ValidateCreate admits a follower only when its leader is scheduled and it
// is pinned to the leader's domain.
func (w Webhook) ValidateCreate(ctx context.Context, pod *corev1.Pod) (admission.Warnings, error) {
	topologyKey, exclusive := placement.TopologyKey(pod)
	if !exclusive || placement.IsLeader(pod) {
		return nil, nil
	}
	leader, err := w.leader(ctx, pod)
	if err != nil {
		return nil, err
	}
	if err := placement.LeaderNotReady(pod, leader); err != nil {
		return nil, apierrors.NewForbidden(corev1.Resource("pods"), pod.Name, err)
	}
	domain, err := w.domain(ctx, leader, topologyKey)
	if err != nil {
		return nil, err
	}
	if !placement.FollowsLeader(pod, topologyKey, domain) {
		return nil, apierrors.NewForbidden(corev1.Resource("pods"), pod.Name, fmt.Errorf(
			"spec.nodeSelector[%s]: must be %q, the domain of the leader Pod %s, for exclusive placement (got %q); leave it unset and the webhook sets it",
			topologyKey, domain, leader.Name, pod.Spec.NodeSelector[topologyKey]))
	}
	return nil, nil
}

// ValidateUpdate implements admission.Validator; the webhook is registered
// for creation only.
func (Webhook) ValidateUpdate(context.Context, *corev1.Pod, *corev1.Pod) (admission.Warnings, error) {
	return nil, nil
}

// ValidateDelete implements admission.Validator; the webhook is registered
// for creation only.
func (Webhook) ValidateDelete(context.Context, *corev1.Pod) (admission.Warnings, error) {
	return nil, nil
}

// leader returns follower's leader Pod, or nil when there is none
// (placement.Leader chooses among a leader and its predecessors).
func (w Webhook) leader(ctx context.Context, follower *corev1.Pod) (*corev1.Pod, error) {
	var pods corev1.PodList
	if err := w.Reader.List(ctx, &pods, client.InNamespace(follower.Namespace),
		client.MatchingLabelsSelector{Selector: placement.LeaderSelector(follower)}); err != nil {
		return nil, fmt.Errorf("looking up the leader Pod for exclusive placement: %w", err)
	}
	return placement.Leader(pods.Items), nil
}

func (w Webhook) domain(ctx context.Context, leader *corev1.Pod, topologyKey string) (string, error) {
	var node corev1.Node
	if err := w.Reader.Get(ctx, types.NamespacedName{Name: leader.Spec.NodeName}, &node); err != nil {
		return "", fmt.Errorf("reading node %s of the leader Pod %s: %w", leader.Spec.NodeName, leader.Name, err)
	}
	return placement.Domain(&node, topologyKey)
}
