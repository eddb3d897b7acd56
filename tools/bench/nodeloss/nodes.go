package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/controllers/nodeloss"
)

// outOfService is the taint an administrator applies to a node that is
// shut down (Kubernetes' non-graceful node shutdown): the Pods that do not
// tolerate it are evicted, and the Pod garbage collector marks the
// terminating ones Failed and deletes them at once, for their controllers
// to replace. Community JobSet documents it for lost nodes, and it is all
// that lets a Recreate JobSet replace Pods its node's kubelet can no
// longer stop.
var outOfService = corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}

// faultTaints are the taints a lost node carries until it is whole again,
// and then loses: Kubernetes', ours and the administrator's.
var faultTaints = []string{corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady, nodeloss.Taint, corev1.TaintNodeOutOfService}

// setOutOfService puts the out-of-service taint on the node or takes it
// off.
func setOutOfService(ctx context.Context, c client.Client, node string, on bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var n corev1.Node
		if err := c.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil {
			return err
		}
		has := slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == outOfService.Key })
		switch {
		case on && !has:
			n.Spec.Taints = append(n.Spec.Taints, outOfService)
		case !on && has:
			n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == outOfService.Key })
		default:
			return nil
		}
		return c.Update(ctx, &n)
	})
}

// waitNodeReady waits until the node reports Ready again.
func waitNodeReady(ctx context.Context, c client.Client, node string) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var n corev1.Node
		if err := c.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil {
			return false, err
		}
		return nodeReady(&n), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for node %s to be Ready: %w", node, err)
	}
	return nil
}

// waitHealthy waits until every node is Ready and none carries a taint of
// a lost node: what the next fault must start from.
func waitHealthy(ctx context.Context, c client.Client) error {
	var why string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		var nodes corev1.NodeList
		if err := c.List(ctx, &nodes); err != nil {
			return false, err
		}
		var problems []string
		for i := range nodes.Items {
			n := &nodes.Items[i]
			if !nodeReady(n) {
				problems = append(problems, n.Name+" not Ready")
			}
			for _, t := range n.Spec.Taints {
				if slices.Contains(faultTaints, t.Key) {
					problems = append(problems, n.Name+" tainted "+t.Key)
				}
			}
		}
		why = strings.Join(problems, ", ")
		return len(nodes.Items) > 0 && len(problems) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the nodes to be healthy (%s): %w", why, err)
	}
	return nil
}
