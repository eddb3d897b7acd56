package kubeapply

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Deploy applies install.yaml (at path) and waits until the controller and
// the webhook Deployments of jobset-system are available.
func Deploy(ctx context.Context, c client.Client, path string) error {
	if err := Apply(ctx, c, path, ""); err != nil {
		return err
	}
	for _, name := range []string{"jobset-controller", "jobset-webhook"} {
		for {
			var d appsv1.Deployment
			err := c.Get(ctx, client.ObjectKey{Namespace: "jobset-system", Name: name}, &d)
			if client.IgnoreNotFound(err) != nil {
				return err
			}
			if err == nil && d.Status.AvailableReplicas >= 1 {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("waiting for Deployment jobset-system/%s to be available: %w", name, ctx.Err())
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}
