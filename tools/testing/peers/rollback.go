package peers

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/controllers/jobsetcontroller"
)

// ourController is our controller's Deployment, and releaseJob the Job
// that lets go of the Pods it held.
const (
	ourController = "jobset-controller"
	releaseJob    = "release-group-members"
)

// releaseGroupMembers is the step before our controller leaves, as
// docs/operations.md gives it for a rollback: the controller scaled to
// zero (a running one holds the live members again), then its binary, run
// once as a Job under its ServiceAccount, removes the group-member
// finalizer from every Pod (jobset-controller --release-group-members). A
// controller that does not know the finalizer would never remove it, and
// every deleted Pod that carries it would stay Terminating.
func releaseGroupMembers(ctx context.Context, cl Cluster, namespace string) error {
	deploy := &appsv1.Deployment{}
	if err := cl.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ourController}, deploy); err != nil {
		return fmt.Errorf("reading Deployment %s: %w", ourController, err)
	}
	cl.logf("ours: stopping %s before releasing its Pods", ourController)
	scaled := deploy.DeepCopy()
	scaled.Spec.Replicas = ptr.To[int32](0)
	if err := cl.Client.Patch(ctx, scaled, client.MergeFrom(deploy)); err != nil {
		return fmt.Errorf("scaling Deployment %s to zero: %w", ourController, err)
	}
	selector, err := metav1.LabelSelectorAsSelector(deploy.Spec.Selector)
	if err != nil {
		return err
	}
	if err := waitNoPods(ctx, cl.Client, namespace, selector); err != nil {
		return fmt.Errorf("waiting for %s's Pods to stop: %w", ourController, err)
	}
	if cl.NoNodes {
		released, err := jobsetcontroller.ReleaseGroupMembers(ctx, cl.Client)
		cl.logf("ours: released %d Pods in this process (no node to run the Job %s)", released, releaseJob)
		return err
	}

	template := deploy.Spec.Template.DeepCopy()
	template.Labels = map[string]string{"app.kubernetes.io/name": releaseJob}
	template.Spec.RestartPolicy = corev1.RestartPolicyNever
	container := &template.Spec.Containers[0]
	container.Args = []string{"--release-group-members"}
	container.LivenessProbe, container.ReadinessProbe, container.StartupProbe, container.Ports = nil, nil, nil, nil
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: releaseJob},
		Spec:       batchv1.JobSpec{BackoffLimit: ptr.To[int32](0), Template: *template},
	}
	if err := cl.Client.Create(ctx, job); err != nil {
		return fmt.Errorf("creating Job %s: %w", releaseJob, err)
	}
	defer func() {
		_ = cl.Client.Delete(context.WithoutCancel(ctx), job, client.PropagationPolicy(metav1.DeletePropagationBackground))
	}()
	var outcome batchv1.JobConditionType
	err = wait.PollUntilContextTimeout(ctx, pollInterval, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := cl.Client.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return false, err
		}
		for _, c := range job.Status.Conditions {
			if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
				outcome = c.Type
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil || outcome != batchv1.JobComplete {
		return fmt.Errorf("the release Job %s did not complete (%s, %v)", releaseJob, outcome, err)
	}
	cl.logf("ours: Job %s released the Pods", releaseJob)
	return nil
}

// waitNoPods waits until no Pod of namespace matches selector.
func waitNoPods(ctx context.Context, c client.Client, namespace string, selector labels.Selector) error {
	return wait.PollUntilContextTimeout(ctx, pollInterval, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		err := c.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: selector})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && len(pods.Items) == 0, err
	})
}
