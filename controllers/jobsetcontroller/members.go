package jobsetcontroller

import (
	"slices"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// A worker deleted while it runs (kubectl delete, a drain, an eviction, a
// preemption) gets SIGTERM, and many trainers exit 0 on it after a
// checkpoint. Its Pod then ends Succeeded, its Job counts the index
// complete and never replaces it, and a group that synced without it would
// train on a rank short. From the Pod's final state alone, that cannot be
// told from a Pod that finished its work and was deleted later (by the Pod
// garbage collector, say). So the controller holds every live Pod of an
// InPlaceRestart JobSet's group with jobset.GroupMemberFinalizer, and
// releases it as soon as it has seen how the Pod ended: at once for one
// seen to finish before any deletion; only after the answer (a full
// restart) for one that finished Succeeded while being deleted.
//
// The controller adds the finalizer to the Pods itself rather than through
// the Jobs' Pod template: a template's finalizers go on every Pod its Job
// creates, also after a rollback to a controller that never releases them
// (community JobSet's, an older version of this one), where every deleted
// Pod would hang. It covers the Pods of Jobs created before this version
// too. No epoch syncs while a live member is not held (inplace.Pod.Unheld),
// and a worker runs only in a synced epoch: every worker that runs is held.

// adoptions picks the live Pods of the JobSet's in-place group that the
// group-member finalizer does not hold yet. (A Pod being deleted cannot
// gain a finalizer, and has not run a worker unless it was held.)
func adoptions(js *jobset.JobSet, pods []corev1.Pod) []*corev1.Pod {
	if !keepsMembers(js) {
		return nil
	}
	_, group := inplace.Group(js)
	var adopt []*corev1.Pod
	for i := range pods {
		pod := &pods[i]
		if inplace.Live(pod) && !inplace.Held(pod) && inplace.OfCurrentAttempt(js, pod) && group.Has(pod.Labels[jobset.ReplicatedJobNameKey]) {
			adopt = append(adopt, pod)
		}
	}
	return adopt
}

// keepsMembers reports whether the JobSet (nil when gone) still has an
// in-place group whose Pods the finalizer must hold: not deleted or
// finished. Suspended too: a suspension (Kueue's preemption) stops the
// workers, and one that exits 0 on the SIGTERM did not finish its work.
func keepsMembers(js *jobset.JobSet) bool {
	return js != nil && js.DeletionTimestamp == nil && !finished(js) && jobset.RestartStrategyOf(js) == jobset.InPlaceRestart
}

// releasable reports whether the controller is done with a Pod that holds
// the group-member finalizer. js is nil when the JobSet is gone; jobs are
// the JobSet's current Jobs by name; replaced reports whether a later Pod
// of the Pod's Job and completion index exists.
func releasable(js *jobset.JobSet, pod *corev1.Pod, jobs map[string]*batchv1.Job, replaced func(*corev1.Pod) bool, loss nodeLoss, now time.Time) bool {
	if !keepsMembers(js) {
		return true
	}
	if fence := agentFence(pod); markedLost(pod) && (loss.mayRunUnheard(pod, fence) || loss.mayVouchUnseen(js, pod, fence, now)) {
		// Kept readable: while it may run, of whatever restart attempt, or
		// its agent's promises may bind, its node counts among the
		// JobSet's silent ones (nodeLoss.sharedSilence).
		return false
	}
	if !inplace.OfCurrentAttempt(js, pod) {
		return true // of an earlier attempt, which a full restart deletes, or of another JobSet of the name
	}
	job := jobs[pod.Labels[batchv1.JobNameLabel]]
	if job == nil || job.DeletionTimestamp != nil {
		return true
	}
	switch {
	case markedLost(pod) && !replaced(pod) && !ptr.Deref(job.Spec.Suspend, false):
		// Held until its Job created its replacement: the Pod webhook keeps
		// the replacement off the lost node by this Pod's mark, which it
		// must find (the node's taint may have been refused), and a Pod
		// deleted with no grace period goes once its finalizers are off.
		// A suspended Job creates none, and whoever suspended the JobSet
		// (Kueue preempting it) waits until its Pods are gone: held, the
		// Pod would make that wait endless.
		return false
	case pod.Status.Phase == corev1.PodFailed:
		return true // its Job replaces it
	case pod.Status.Phase == corev1.PodSucceeded && pod.DeletionTimestamp == nil:
		return true // it finished its work before anyone deleted it
	case pod.DeletionTimestamp != nil && pod.Spec.NodeName == "":
		return true // never scheduled: no worker ran
	case inplace.LeftWhileRunning(pod):
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
	return err == nil && inplace.ParseIndexes(job.Status.CompletedIndexes).Has(index)
}

// releases picks the Pods holding the group-member finalizer that the
// controller is done with (js is the JobSet as this reconcile leaves it,
// nil when gone; jobs are its current Jobs). confirm: one of them left
// while running, and its release must be decided on a fresh read of its
// Job: the cache may not show yet that the Job counted its index complete,
// and releasing it would lose the only trace.
func releases(js *jobset.JobSet, pods []corev1.Pod, jobs []*batchv1.Job, loss nodeLoss, now time.Time) (release []*corev1.Pod, confirm bool) {
	byName, replaced := jobsByName(jobs), replacedAmong(pods)
	for i := range pods {
		pod := &pods[i]
		if inplace.Held(pod) && releasable(js, pod, byName, replaced, loss, now) {
			release = append(release, pod)
			confirm = confirm || (keepsMembers(js) && inplace.LeftWhileRunning(pod))
		}
	}
	return release, confirm
}

// replacedAmong reports whether pods hold a Pod of the given Pod's Job and
// completion index created after it. A Pod of no known index counts as
// replaced: nothing would tell its replacement. The index is read only
// when asked, for the few Pods marked lost.
func replacedAmong(pods []corev1.Pod) func(*corev1.Pod) bool {
	var newest map[string]time.Time
	key := func(pod *corev1.Pod) string {
		job, index := pod.Labels[batchv1.JobNameLabel], pod.Annotations[batchv1.JobCompletionIndexAnnotation]
		if job == "" || index == "" {
			return ""
		}
		return job + "/" + index
	}
	return func(pod *corev1.Pod) bool {
		if newest == nil {
			newest = map[string]time.Time{}
			for i := range pods {
				if k := key(&pods[i]); k != "" && pods[i].CreationTimestamp.After(newest[k]) {
					newest[k] = pods[i].CreationTimestamp.Time
				}
			}
		}
		k := key(pod)
		return k == "" || newest[k].After(pod.CreationTimestamp.Time)
	}
}

func jobsByName(jobs []*batchv1.Job) map[string]*batchv1.Job {
	out := make(map[string]*batchv1.Job, len(jobs))
	for _, job := range jobs {
		out[job.Name] = job
	}
	return out
}
