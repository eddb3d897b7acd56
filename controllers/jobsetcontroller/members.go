package jobsetcontroller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// A worker deleted while it runs (kubectl delete, a drain, an eviction, a
// preemption) gets SIGTERM, and many trainers exit 0 on it after a
// checkpoint. Its Pod then ends Succeeded, its Job counts the index
// complete and never replaces it, and a group that synced without it would
// train on a rank short. From the Pod's final state alone, that cannot be
// told from a Pod that finished its work and was deleted later (by the Pod
// garbage collector, say). So every Pod of an InPlaceRestart JobSet carries
// jobset.GroupMemberFinalizer from its Job's Pod template, and the
// controller releases it as soon as it has seen how the Pod ended: at once
// for one seen to finish before any deletion; only after the answer (a full
// restart) for one that finished Succeeded while being deleted.

// holdsMember reports whether the Pod still carries the group-member
// finalizer.
func holdsMember(pod *corev1.Pod) bool {
	return slices.Contains(pod.Finalizers, jobset.GroupMemberFinalizer)
}

// leftWhileRunning: the Pod finished Succeeded while being deleted, and the
// controller never saw it finish first (it would have released it): its
// worker was stopped, not done.
func leftWhileRunning(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded && pod.DeletionTimestamp != nil && holdsMember(pod)
}

// gathers reports whether the JobSet (nil when gone) still runs an
// in-place group whose Pods the finalizer must hold: not deleted, finished
// or suspended.
func gathers(js *jobset.JobSet) bool {
	return js != nil && js.DeletionTimestamp == nil && !finished(js) && inPlaceRestartEnabled(js)
}

// releasable reports whether the controller is done with a Pod that holds
// the group-member finalizer. js is nil when the JobSet is gone; jobs are
// the JobSet's current Jobs by name.
func releasable(js *jobset.JobSet, pod *corev1.Pod, jobs map[string]*batchv1.Job) bool {
	if !gathers(js) {
		return true
	}
	if !ofCurrentAttempt(js, pod) {
		return true // of an earlier attempt, which a full restart deletes, or of another JobSet of the name
	}
	job := jobs[pod.Labels[batchv1.JobNameLabel]]
	if job == nil || job.DeletionTimestamp != nil || ptr.Deref(job.Spec.Suspend, false) {
		return true
	}
	switch {
	case pod.Status.Phase == corev1.PodFailed:
		return true // its Job replaces it
	case pod.Status.Phase == corev1.PodSucceeded && pod.DeletionTimestamp == nil:
		return true // it finished its work before anyone deleted it
	case pod.DeletionTimestamp != nil && pod.Spec.NodeName == "":
		return true // never scheduled: no worker ran
	case leftWhileRunning(pod):
		// Once its Job accounted for it, the Job counted it failed and
		// replaces it, or counted the index complete: then LostIndex
		// answers with a full restart, after which it is a Pod of an
		// earlier attempt.
		return jobAccountedFor(job, pod) && !indexComplete(job, pod)
	}
	return false
}

// jobAccountedFor: the Job controller has counted the finished Pod in its
// Job's status. It records the Pod among the uncounted terminated Pods,
// then removes its tracking finalizer, and only then moves it to the
// counts and completedIndexes: until that last step, neither the Pod nor
// completedIndexes says whether the index completed.
func jobAccountedFor(job *batchv1.Job, pod *corev1.Pod) bool {
	if slices.Contains(pod.Finalizers, batchv1.JobTrackingFinalizer) {
		return false
	}
	if u := job.Status.UncountedTerminatedPods; u != nil {
		return !slices.Contains(u.Succeeded, pod.UID) && !slices.Contains(u.Failed, pod.UID)
	}
	return true
}

func indexComplete(job *batchv1.Job, pod *corev1.Pod) bool {
	index, err := strconv.Atoi(pod.Annotations[batchv1.JobCompletionIndexAnnotation])
	return err == nil && parseIndexes(job.Status.CompletedIndexes).Has(index)
}

// lostIndexDecision answers a lost index with a full restart, which
// recreates the Jobs and so the index. It counts toward maxRestarts when a
// synced group lost a member, once: when it escalates the group restart
// that the Pod's deletion started, that one already counted. A Pod lost
// while the group gathered (its first run, or after a full restart or a
// resume) is, as any failure then, not counted.
func lostIndexDecision(js *jobset.JobSet, lost string) decision {
	const action = "a full restart recreates all Jobs and so the index"
	if ptr.Deref(js.Status.SyncedEpoch, 0) == 0 || regathering(js) {
		return restartDecision(false, "%s; %s (not counted: the group had not synced)", lost, action)
	}
	return countedRestart(js, lost, action)
}

// lostIndex looks for a Pod whose index is lost (inplace.LostIndex), in the
// snapshot read from the cache first and, since its answer is a full
// restart, confirmed on a fresh read of the Pods and Jobs. It comes before
// the success policy: a Job may count complete only because the index's
// worker was stopped.
func (r *Reconciler) lostIndex(ctx context.Context, js *jobset.JobSet, cached inplace.Snapshot) (string, error) {
	if inplace.LostIndex(cached.Pods) == "" {
		return "", nil
	}
	fresh, freshJobs, err := r.readChildrenFresh(ctx, js)
	if err != nil {
		return "", err
	}
	return inplace.LostIndex(epochSnapshot(js, fresh, freshJobs).Pods), nil
}

// releaseMembers removes the group-member finalizer from the Pods the
// controller is done with. A Pod that left while running is released only
// on a fresh read of its Job: the cache may not show yet that the Job
// counted its index complete, and releasing it would lose the only trace.
func (r *Reconciler) releaseMembers(ctx context.Context, js *jobset.JobSet, pods []corev1.Pod, jobs []*batchv1.Job) error {
	byName := jobsByName(jobs)
	var release []*corev1.Pod
	freshNeeded := false
	for i := range pods {
		pod := &pods[i]
		if holdsMember(pod) && releasable(js, pod, byName) {
			release = append(release, pod)
			freshNeeded = freshNeeded || (gathers(js) && leftWhileRunning(pod))
		}
	}
	if freshNeeded {
		_, freshJobs, err := r.readChildrenFresh(ctx, js)
		if err != nil {
			return err
		}
		byName = jobsByName(freshJobs)
		release = slices.DeleteFunc(release, func(pod *corev1.Pod) bool { return !releasable(js, pod, byName) })
	}
	var errs []error
	for _, pod := range release {
		if err := r.releaseMember(ctx, pod); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// releaseAllMembers releases every Pod labelled with the JobSet's name:
// the JobSet (js, nil when it is gone) is finished or being deleted.
func (r *Reconciler) releaseAllMembers(ctx context.Context, js *jobset.JobSet, namespace, name string) error {
	pods, err := r.listPods(ctx, namespace, name)
	if err != nil {
		return err
	}
	return r.releaseMembers(ctx, js, pods, nil)
}

func jobsByName(jobs []*batchv1.Job) map[string]*batchv1.Job {
	out := make(map[string]*batchv1.Job, len(jobs))
	for _, job := range jobs {
		out[job.Name] = job
	}
	return out
}

// memberRelease removes only the group-member finalizer, whatever other
// finalizers the Pod has meanwhile gained or lost (the Job controller's
// tracking finalizer goes the same way).
var memberRelease = client.RawPatch(types.StrategicMergePatchType,
	[]byte(fmt.Sprintf(`{"metadata":{"$deleteFromPrimitiveList/finalizers":[%q]}}`, jobset.GroupMemberFinalizer)))

func (r *Reconciler) releaseMember(ctx context.Context, pod *corev1.Pod) error {
	ctrl.LoggerFrom(ctx).V(2).Info("Releasing a group member", "pod", klog.KObj(pod), "phase", pod.Status.Phase,
		"deleting", pod.DeletionTimestamp != nil)
	target := &corev1.Pod{}
	target.Namespace, target.Name = pod.Namespace, pod.Name
	if err := r.client.Patch(ctx, target, memberRelease); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("removing finalizer %s from Pod %s: %w", jobset.GroupMemberFinalizer, pod.Name, err)
	}
	return nil
}
