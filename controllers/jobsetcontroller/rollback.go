package jobsetcontroller

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// ReleaseGroupMembers removes the group-member finalizer from every Pod
// that carries it, in every namespace, and returns how many it released.
//
// A controller that does not know the finalizer (community JobSet, an
// older version of this one) never removes it, and every Pod it holds
// would stay Terminating once deleted: a Job's foreground deletion, a
// namespace's deletion would hang with it. So before such a rollback, this
// controller is stopped and this runs once (jobset-controller
// --release-group-members). It is run with the controller stopped: a
// running one holds the live members again. Pods listed from the API
// server, page by page, not from a cache.
func ReleaseGroupMembers(ctx context.Context, c client.Client) (int, error) {
	released := 0
	var errs []error
	opts := []client.ListOption{client.HasLabels{jobset.JobSetNameKey}, client.Limit(500)}
	for {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, opts...); err != nil {
			return released, fmt.Errorf("listing the Pods of JobSets: %w", err)
		}
		for i := range pods.Items {
			pod := &pods.Items[i]
			if !inplace.Held(pod) {
				continue
			}
			if err := c.Patch(ctx, pod, memberRelease); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("removing finalizer %s from Pod %s/%s: %w", jobset.GroupMemberFinalizer, pod.Namespace, pod.Name, err))
				continue
			}
			released++
		}
		if pods.Continue == "" {
			return released, errors.Join(errs...)
		}
		opts = append(opts[:2], client.Continue(pods.Continue))
	}
}
