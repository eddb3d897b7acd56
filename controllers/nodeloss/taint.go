package nodeloss

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Taint keeps replacements off a node the controller declared lost, from
// then until the node's kubelet renews its Lease again; Kubernetes' own
// taint for an unreachable node comes only later.
const Taint = "jobset.sigs.k8s.io/node-lost"

func isTaint(t corev1.Taint) bool { return t.Key == Taint }

// Tainted tells whether the node carries Taint.
func Tainted(node *corev1.Node) bool {
	return slices.ContainsFunc(node.Spec.Taints, isTaint)
}

// SetTaint puts Taint on the node (tainted) or takes it off, reading the
// node from the API server (the cache holds no Node) and writing only when
// that changes it; a node that is gone needs nothing. The patch carries
// the taint list under an optimistic lock, so that a taint another
// component wrote meanwhile is never lost.
func SetTaint(ctx context.Context, reader client.Reader, c client.Client, name string, tainted bool) error {
	node := &corev1.Node{}
	if err := reader.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("reading node %s: %w", name, err))
	}
	if Tainted(node) == tainted {
		return nil
	}
	changed := node.DeepCopy()
	if tainted {
		changed.Spec.Taints = append(changed.Spec.Taints, corev1.Taint{Key: Taint, Effect: corev1.TaintEffectNoSchedule, TimeAdded: ptr.To(metav1.Now())})
	} else {
		changed.Spec.Taints = slices.DeleteFunc(changed.Spec.Taints, isTaint)
	}
	if err := c.Patch(ctx, changed, client.MergeFromWithOptions(node, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("setting taint %s on node %s to %t: %w", Taint, name, tainted, err)
	}
	return nil
}
