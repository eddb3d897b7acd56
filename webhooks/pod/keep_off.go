package pod

import (
	"context"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/keepoff"
	"github.com/fastjobset/jobset/api/jobset/placement"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// The controller marks a Pod Failed (jobset.ControllerMark) when it failed
// in place again and again on its node (PodConditionReplacedOffNode) or
// when its node was lost (DisruptionTarget, reason PodReasonNodeLost), and
// its Job creates a replacement at the same completion index. The webhook
// keeps that replacement off the nodes of such predecessors: a required
// node affinity on the node's name. For a lost node the controller's taint
// does the same while the node is silent, where the platform lets it taint
// nodes; the affinity holds whatever the taint.
//
// Under exclusive placement the unit is the Job, not the Pod: a follower
// is pinned to its leader's domain, so it could never leave a node that is
// its domain (hostname topology), or a domain with no other free node. The
// controller replaces the whole Job then (each of its other Pods marked
// with the reason jobset.PodReasonReplacedWithItsJob), and the webhook
// keeps every Pod of that Job off every node a Pod of it was replaced off,
// and its leader out of those nodes' domains, so that the Job moves to
// another domain and its followers follow.
//
// The Job controller creates the replacement once it saw the predecessor
// Failed; the webhook's cache may not have yet. A predecessor that still
// looks live in the cache is read from the API server: a Job replaces a
// Pod only once it ended. A predecessor marked lost is deleted, but the
// controller holds it (its group-member finalizer) until the replacement
// exists. When a predecessor was replaced with its Job, the Pod that failed
// was marked before it, but may not be in the cache yet either: the Job's
// Pods are then listed from the API server.

// keepOff adds to the Pod the node affinity that keeps it off the nodes,
// and for an exclusively placed leader the domains, that its predecessors
// were replaced off.
func (w Webhook) keepOff(ctx context.Context, pod *corev1.Pod) error {
	nodes, err := w.nodesToKeepOff(ctx, pod)
	if err != nil || len(nodes) == 0 {
		return err
	}
	keepoff.Add(pod, nodes)
	topologyKey, exclusive := placement.TopologyKey(pod)
	if !exclusive || !placement.IsLeader(pod) {
		return nil
	}
	var domains []string
	for _, name := range nodes {
		var node corev1.Node
		if err := w.Reader.Get(ctx, types.NamespacedName{Name: name}, &node); apierrors.IsNotFound(err) {
			continue // gone: no Pod lands there
		} else if err != nil {
			return fmt.Errorf("reading node %s, which Pods of Job %s were replaced off: %w", name, pod.Labels[batchv1.JobNameLabel], err)
		}
		if domain, err := placement.Domain(&node, topologyKey); err == nil && !slices.Contains(domains, domain) {
			domains = append(domains, domain)
		}
	}
	slices.Sort(domains)
	keepoff.AddDomains(pod, topologyKey, domains)
	return nil
}

// nodesToKeepOff lists the nodes the Pod must not land on.
func (w Webhook) nodesToKeepOff(ctx context.Context, pod *corev1.Pod) ([]string, error) {
	job, index := pod.Labels[batchv1.JobNameLabel], pod.Annotations[batchv1.JobCompletionIndexAnnotation]
	if job == "" || index == "" {
		return nil, nil
	}
	var pods corev1.PodList
	if err := w.Reader.List(ctx, &pods, client.InNamespace(pod.Namespace), client.MatchingLabels{batchv1.JobNameLabel: job}); err != nil {
		return nil, fmt.Errorf("looking up the earlier Pods of Job %s: %w", job, err)
	}
	_, exclusive := placement.TopologyKey(pod)
	var nodes []string
	replacedWithItsJob := false
	for i := range pods.Items {
		p := &pods.Items[i]
		sameIndex := p.Annotations[batchv1.JobCompletionIndexAnnotation] == index
		if p.Spec.NodeName == "" || p.Name == pod.Name || !(sameIndex || exclusive) {
			continue
		}
		if sameIndex && !ended(p) && w.APIReader != nil {
			fresh := &corev1.Pod{}
			if err := w.APIReader.Get(ctx, client.ObjectKeyFromObject(p), fresh); client.IgnoreNotFound(err) != nil {
				return nil, fmt.Errorf("reading Pod %s, an earlier Pod of the same index: %w", p.Name, err)
			} else if err == nil {
				p = fresh
			}
		}
		if sameIndex && jobset.ControllerMark(p) != nil && jobset.NodeToKeepOff(p) == "" {
			replacedWithItsJob = true
		}
		if n := jobset.NodeToKeepOff(p); n != "" && !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
	}
	if replacedWithItsJob && w.APIReader != nil {
		var fresh corev1.PodList
		if err := w.APIReader.List(ctx, &fresh, client.InNamespace(pod.Namespace), client.MatchingLabels{batchv1.JobNameLabel: job}); err != nil {
			return nil, fmt.Errorf("reading the Pods of Job %s, replaced off a node with its Pod %s: %w", job, pod.Name, err)
		}
		for i := range fresh.Items {
			if n := jobset.NodeToKeepOff(&fresh.Items[i]); n != "" && !slices.Contains(nodes, n) {
				nodes = append(nodes, n)
			}
		}
	}
	slices.Sort(nodes)
	return nodes, nil
}

func ended(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}
