package pod

import (
	"context"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
// The Job controller creates the replacement once it saw the predecessor
// Failed; the webhook's cache may not have yet. A predecessor that still
// looks live in the cache is read from the API server: a Job replaces a
// Pod only once it ended. A predecessor marked lost is deleted, but the
// controller holds it (its group-member finalizer) until the replacement
// exists.

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
	var nodes []string
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Annotations[batchv1.JobCompletionIndexAnnotation] != index || p.Spec.NodeName == "" || p.Name == pod.Name {
			continue
		}
		if !ended(p) && w.APIReader != nil {
			fresh := &corev1.Pod{}
			if err := w.APIReader.Get(ctx, client.ObjectKeyFromObject(p), fresh); client.IgnoreNotFound(err) != nil {
				return nil, fmt.Errorf("reading Pod %s, an earlier Pod of the same index: %w", p.Name, err)
			} else if err == nil {
				p = fresh
			}
		}
		if jobset.ControllerMark(p) != nil && !slices.Contains(nodes, p.Spec.NodeName) {
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	slices.Sort(nodes)
	return nodes, nil
}

func ended(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// keepOff requires, in every node selector term of the Pod's required node
// affinity (one term when it has none), that the node not be one of nodes.
func keepOff(pod *corev1.Pod, nodes []string) {
	if len(nodes) == 0 {
		return
	}
	notOn := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: nodes}
	if pod.Spec.Affinity == nil {
		pod.Spec.Affinity = &corev1.Affinity{}
	}
	if pod.Spec.Affinity.NodeAffinity == nil {
		pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	required := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if required == nil || len(required.NodeSelectorTerms) == 0 {
		pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{notOn}}}}
		return
	}
	for i := range required.NodeSelectorTerms {
		required.NodeSelectorTerms[i].MatchFields = append(required.NodeSelectorTerms[i].MatchFields, notOn)
	}
}
