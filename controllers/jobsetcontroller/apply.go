package jobsetcontroller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/internal/metrics"
	"github.com/fastjobset/jobset/controllers/nodeloss"
)

// apply does what decide decided, in an order that keeps every step safe to
// repeat: children first, the members to mark Failed (lost, or replaced
// off their node) and to hold, then the one status write (with its
// events), then the releases that status answers (a Pod that left while
// running is released only once the full restart that answers it is
// recorded), then an expired JobSet's deletion.
func (r *Reconciler) apply(ctx context.Context, o *observed, a actions) (ctrl.Result, error) {
	if err := r.deleteJobs(ctx, a.deleteJobs); err != nil {
		return ctrl.Result{}, err
	}
	if a.converge != nil {
		if err := r.convergeChildren(ctx, o.js, o.children, *a.converge); errors.Is(err, errChildrenNotCached) {
			// Nothing failed: the rest of this reconcile would act on
			// children the cache does not show yet. The Job's event in
			// the cache reconciles again; the requeue is a backstop.
			ctrl.LoggerFrom(ctx).V(2).Info("Stopping the reconcile: the cache does not show yet a Job this JobSet created", "err", err)
			return ctrl.Result{RequeueAfter: time.Second}, nil
		} else if err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := r.markLost(ctx, o.js, a.lost); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.deleteLostAgain(ctx, a.deleteLost); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.failAgain(ctx, a.failAgain); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.holdMembers(ctx, a.adopt); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.replaceOffNode(ctx, o.js, a.failedInPlace); err != nil {
		return ctrl.Result{}, err
	}
	js := o.js
	if a.status != nil {
		if err := r.writeStatus(ctx, a.status); err != nil {
			return ctrl.Result{}, err
		}
		js = a.status.js
	}
	recordEpochs(js)
	if err := r.recordFailureInPlace(ctx, a.failedInPlace); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.replaceWithTheirJobs(ctx, js, a.withTheirJobs); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.releaseMembers(ctx, a.release); err != nil {
		return ctrl.Result{}, err
	}
	if a.expired {
		return ctrl.Result{}, r.deleteExpired(ctx, js)
	}
	return ctrl.Result{RequeueAfter: a.requeueAfter}, nil
}

// convergeChildren creates the missing children and moves every active Job
// to the JobSet's suspend state.
func (r *Reconciler) convergeChildren(ctx context.Context, js *jobset.JobSet, children childJobs, plan childrenPlan) error {
	if DNSHostnamesEnabled(js) {
		if err := r.ensureExists(ctx, "headless Service", constructService(js)); err != nil {
			return err
		}
	}
	// Claims before Jobs: a Pod whose claim is missing does not schedule.
	for _, claim := range volumeClaims(js) {
		if err := r.ensureExists(ctx, "PersistentVolumeClaim of volumeClaimPolicies", claim); err != nil {
			return err
		}
	}
	if len(plan.create) > 0 {
		ctrl.LoggerFrom(ctx).V(2).Info("Creating Jobs", "count", len(plan.create))
	}
	var notCached atomic.Bool
	if err := r.forEach(ctx, plan.create, func(job *batchv1.Job) error {
		err := r.client.Create(ctx, job)
		switch {
		case err == nil:
			return nil
		case !apierrors.IsAlreadyExists(err):
			return fmt.Errorf("creating Job %s: %w", job.Name, err)
		}
		switch owned, err := r.createdByThisJobSet(ctx, js, job); {
		case err != nil:
			return fmt.Errorf("creating Job %s: the name is taken, and reading the Job that holds it failed: %w", job.Name, err)
		case owned:
			notCached.Store(true)
			return nil
		}
		return fmt.Errorf("creating Job %s: the name is taken by a Job this JobSet does not own (another JobSet's, or one of an earlier JobSet of this name still being deleted): %w", job.Name, err)
	}); err != nil {
		return err
	}
	if notCached.Load() {
		return errChildrenNotCached
	}
	if err := r.forEach(ctx, jobsOf(plan.rescale), func(job *batchv1.Job) error {
		scaled := plan.rescale[job]
		ctrl.LoggerFrom(ctx).Info("Scaling a Job to its replicatedJob's parallelism and completions", "job", klog.KObj(job),
			"parallelism", ptr.Deref(scaled.Spec.Parallelism, 0), "completions", ptr.Deref(scaled.Spec.Completions, 0))
		return r.patchJob(ctx, job, scaled)
	}); err != nil {
		return fmt.Errorf("scaling Jobs: %w", err)
	}
	suspend, resume := suspendPlan(js, children.active)
	if err := r.forEach(ctx, suspend, func(job *batchv1.Job) error {
		suspended := job.DeepCopy()
		suspended.Spec.Suspend = ptr.To(true)
		return r.patchJob(ctx, job, suspended)
	}); err != nil {
		return fmt.Errorf("suspending Jobs: %w", err)
	}
	if err := r.forEach(ctx, resume, func(job *batchv1.Job) error {
		return r.patchJob(ctx, job, resumedJob(js, job, plan.executionAttempt))
	}); err != nil {
		return fmt.Errorf("resuming Jobs: %w", err)
	}
	return nil
}

// patchJob is the one way a Job is changed: a merge patch from the cached
// Job, guarded by its resourceVersion so that a change made since (by the
// Job controller, or Kueue) fails with a conflict and is retried on fresh
// state instead of being overwritten.
func (r *Reconciler) patchJob(ctx context.Context, cached, changed *batchv1.Job) error {
	ctrl.LoggerFrom(ctx).V(2).Info("Patching Job", "job", klog.KObj(changed), "suspend", ptr.Deref(changed.Spec.Suspend, false))
	if err := r.client.Patch(ctx, changed, client.MergeFromWithOptions(cached, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("patching Job %s: %w", changed.Name, err)
	}
	return nil
}

// ensureExists creates obj, described as what in errors, unless an object
// of its name exists. For a shared claim, one that a retained policy kept
// from an earlier JobSet of the same name is mounted again, data and all.
func (r *Reconciler) ensureExists(ctx context.Context, what string, obj client.Object) error {
	err := r.client.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
	if apierrors.IsNotFound(err) {
		err = r.client.Create(ctx, obj)
	}
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ensuring %s %s: %w", what, obj.GetName(), err)
	}
	return nil
}

// errChildrenNotCached: a Job to create exists already, created for this
// JobSet by an earlier reconcile whose create the cache has not shown yet
// (the informer lags the API server, and more so on a loaded machine).
var errChildrenNotCached = errors.New("a Job this JobSet created is not in the cache yet")

// createdByThisJobSet reads the Job that holds job's name from the API
// server (the cache does not show it) and reports whether js controls it.
func (r *Reconciler) createdByThisJobSet(ctx context.Context, js *jobset.JobSet, job *batchv1.Job) (bool, error) {
	var existing batchv1.Job
	if err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(job), &existing); err != nil {
		return false, err
	}
	return metav1.IsControlledBy(&existing, js) && existing.DeletionTimestamp == nil, nil
}

// deleteJobs deletes in the foreground: a Job stays visible, holding its
// name, until its Pods are gone, which is what BlockingRecreate waits for.
func (r *Reconciler) deleteJobs(ctx context.Context, jobs []*batchv1.Job) error {
	if len(jobs) > 0 {
		ctrl.LoggerFrom(ctx).V(2).Info("Deleting Jobs", "count", len(jobs))
	}
	return r.forEach(ctx, jobs, func(job *batchv1.Job) error {
		err := r.client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationForeground),
			client.Preconditions{UID: &job.UID})
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Job %s: %w", job.Name, err)
		}
		return nil
	})
}

// forEach runs write for every Job, in parallel, and returns every error:
// with thousands of Jobs, the first alone may hide that all failed alike.
func (r *Reconciler) forEach(ctx context.Context, jobs []*batchv1.Job, write func(*batchv1.Job) error) error {
	errs := make([]error, len(jobs))
	workqueue.ParallelizeUntil(ctx, writeParallelism, len(jobs), func(i int) {
		errs[i] = write(jobs[i])
	})
	return errors.Join(errs...)
}

// deleteExpired deletes a finished JobSet whose ttlSecondsAfterFinished is
// over, with its children (foreground: the JobSet goes last).
func (r *Reconciler) deleteExpired(ctx context.Context, js *jobset.JobSet) error {
	ctrl.LoggerFrom(ctx).Info("Deleting the finished JobSet: its ttlSecondsAfterFinished is over")
	err := r.client.Delete(ctx, js, client.PropagationPolicy(metav1.DeletePropagationForeground), client.Preconditions{UID: &js.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting JobSet %s after its ttlSecondsAfterFinished: %w", js.Name, err)
	}
	return nil
}

// writeStatus persists the status with a merge patch guarded by the
// resourceVersion the reconcile read (a stale read fails with a conflict
// and is retried on fresh state; statusPatch), then announces it. A write
// that failed without a refusal may have been stored all the same: its
// announcement waits until a later reconcile sees whether it was
// (unconfirmedWrites).
func (r *Reconciler) writeStatus(ctx context.Context, u *statusUpdate) error {
	log := ctrl.LoggerFrom(ctx)
	if apiequality.Semantic.DeepEqual(u.original.Status, u.js.Status) {
		log.V(2).Info("Status unchanged")
		return nil
	}
	key := client.ObjectKeyFromObject(u.js)
	if err := r.client.Status().Patch(ctx, u.js, statusPatch(u.original)); err != nil {
		if mayHaveLanded(err) {
			r.unconfirmed.hold(key, u, func() {
				log.Info("A status write whose answer was lost was stored: announcing it", "err", err.Error())
				r.announce(log, u)
			})
		}
		return fmt.Errorf("writing the status of JobSet %s: %w", key, err)
	}
	r.unconfirmed.forget(key)
	r.announce(log, u)
	return nil
}

// announce logs and emits the events of a stored status write, which are
// the reconcile's decisions, and records its metrics.
func (r *Reconciler) announce(log logr.Logger, u *statusUpdate) {
	counts := []any{"restarts", u.js.Status.Restarts, "inPlaceRestarts", u.js.Status.InPlaceRestarts,
		"syncedEpoch", ptr.Deref(u.js.Status.SyncedEpoch, 0), "deprecatedEpoch", ptr.Deref(u.js.Status.DeprecatedEpoch, 0)}
	if attempts := u.js.Status.ExecutionAttempts; attempts != nil {
		counts = append(counts, "executionAttempts", *attempts)
	}
	for _, e := range u.events {
		log.Info(e.note, append([]any{"reason", e.reason}, counts...)...)
		if e.eventType != "" {
			r.recorder.Eventf(u.js, nil, e.eventType, e.reason, e.action, "%s", e.note)
		}
	}
	for _, record := range u.recorded {
		record()
	}
}

// memberHold adds the group-member finalizer to a Pod, whatever other
// finalizers it has (a strategic merge: the list is merged, not replaced).
var memberHold = client.RawPatch(types.StrategicMergePatchType,
	[]byte(fmt.Sprintf(`{"metadata":{"finalizers":[%q]}}`, jobset.GroupMemberFinalizer)))

// holdMembers adds the group-member finalizer to the Pods decided. A Pod
// whose deletion began meanwhile refuses a new finalizer (Invalid): it ran
// no worker unheld, and its end needs no trace.
func (r *Reconciler) holdMembers(ctx context.Context, pods []*corev1.Pod) error {
	return writeMembers(pods, func(pod *corev1.Pod) error {
		ctrl.LoggerFrom(ctx).V(2).Info("Holding a group member", "pod", klog.KObj(pod))
		target := &corev1.Pod{}
		target.Namespace, target.Name = pod.Namespace, pod.Name
		if err := r.client.Patch(ctx, target, memberHold); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) {
			return fmt.Errorf("adding finalizer %s to Pod %s: %w", jobset.GroupMemberFinalizer, pod.Name, err)
		}
		return nil
	})
}

// releaseMembers removes the group-member finalizer from the Pods decided.
func (r *Reconciler) releaseMembers(ctx context.Context, pods []*corev1.Pod) error {
	return writeMembers(pods, func(pod *corev1.Pod) error { return r.releaseMember(ctx, pod) })
}

// memberWritesInFlight bounds the patches of the group-member finalizer a
// reconcile has in flight at once. A group holds and releases a Pod at a
// time (it starts, its JobSet is deleted) in patches of one round trip
// each: one after another, 10000 of them would hold back the group's first
// sync, or a deleted JobSet's Pods, for minutes. The client's rate limit
// and the API server's Priority and Fairness still pace them.
const memberWritesInFlight = 16

// writeMembers calls write for each Pod, at most memberWritesInFlight at a
// time, and returns their errors in the order of pods.
func writeMembers(pods []*corev1.Pod, write func(*corev1.Pod) error) error {
	errs := make([]error, len(pods))
	slots := make(chan struct{}, memberWritesInFlight)
	var wg sync.WaitGroup
	for i, pod := range pods {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			errs[i] = write(pod)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
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

// ReasonNodeLost is the reason of the DisruptionTarget condition and the
// event of a member marked Failed because its node was lost: the API's.
const ReasonNodeLost = jobset.PodReasonNodeLost

// ReasonNodeNotTainted is the reason of the event that says a lost node
// could not be tainted, and that the Pod webhook keeps the replacement off
// it instead.
const ReasonNodeNotTainted = "NodeNotTainted"

// markLost marks each lost member Failed with a DisruptionTarget
// condition, as the Pod garbage collector does for a Pod whose node is
// gone, and deletes it with no grace period: nothing waits for its dead
// kubelet, also for a Pod whose graceful deletion began before (its bound
// says its worker stopped). Its Job replaces it. Its node is tainted
// first, so that the replacement lands elsewhere. A node that cannot be
// tainted (a platform that forbids it: the controller's RBAC, an admission
// policy) does not keep the member from being replaced: the Pod webhook
// keeps the replacement off the node of a predecessor marked lost, and the
// JobSet says so in a Warning event.
func (r *Reconciler) markLost(ctx context.Context, js *jobset.JobSet, lost []lostMember) error {
	var errs []error
	tainted := map[string]bool{}
	for _, m := range lost {
		if !tainted[m.node] {
			tainted[m.node] = true
			if err := nodeloss.SetTaint(ctx, r.apiReader, r.client, m.node, true); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "Tainting a lost node; the Pod webhook keeps the replacements off it instead", "node", m.node)
				r.recorder.Eventf(js, nil, corev1.EventTypeWarning, ReasonNodeNotTainted, "TaintNode",
					"Node %s, lost, could not be tainted %s (%v): the Pod webhook keeps the replacement of Pod %s off it instead",
					m.node, nodeloss.Taint, err, m.pod.Name)
			}
		}
		if err := r.markFailed(ctx, m.pod, corev1.DisruptionTarget, ReasonNodeLost, m.why, m.lastHeard); err != nil {
			errs = append(errs, err)
			continue
		}
		err := r.client.Delete(ctx, m.pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &m.pod.UID})
		if client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting Pod %s: %w", m.pod.Name, err))
		}
		switch {
		case m.again:
			ctrl.LoggerFrom(ctx).Info("Marked a member Failed again: its node, back after it was lost, is lost again", "pod", klog.KObj(m.pod), "node", m.node, "why", m.why)
			continue
		case m.earlier:
			ctrl.LoggerFrom(ctx).Info("Removed a Pod of an earlier restart attempt held Terminating on a lost node: its Job's deletion can end",
				"pod", klog.KObj(m.pod), "node", m.node, "why", m.why)
			r.recorder.Eventf(js, m.pod, corev1.EventTypeWarning, ReasonNodeLost, "MarkFailed",
				"Pod %s of an earlier restart attempt, held Terminating on a lost node, marked Failed and removed so that the full restart can go on: %s", m.pod.Name, m.why)
			continue
		}
		metrics.NodeLossReplacements.WithLabelValues(js.Namespace, m.node).Inc()
		ctrl.LoggerFrom(ctx).Info("Marked a member Failed: its node was lost", "pod", klog.KObj(m.pod), "node", m.node, "why", m.why)
		r.recorder.Eventf(js, m.pod, corev1.EventTypeWarning, ReasonNodeLost, "MarkFailed",
			"Pod %s marked Failed for its Job to replace it: %s", m.pod.Name, m.why)
	}
	return errors.Join(errs...)
}

// deleteLostAgain deletes the Pods marked lost that are not being deleted
// (lostUndeleted), each only if it is still the Pod that was marked.
func (r *Reconciler) deleteLostAgain(ctx context.Context, pods []*corev1.Pod) error {
	var errs []error
	for _, pod := range pods {
		ctrl.LoggerFrom(ctx).Info("Deleting again a member marked lost: it was not deleted after the mark",
			"pod", klog.KObj(pod), "node", pod.Spec.NodeName, "phase", pod.Status.Phase)
		if err := r.client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID}); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting Pod %s, marked lost: %w", pod.Name, err))
		}
	}
	return errors.Join(errs...)
}

// replaceOffNode marks Failed, with ConditionReplacedOffNode, a Pod whose
// failures in place reached the limit, for its Job to replace it and the
// Pod webhook to keep the replacement off its node. It comes before the
// status write that records the group restart the last failure started,
// as a lost member's mark does: once that restart is recorded, no later
// reconcile would decide the replacement again, and a mark that failed
// after it would leave the Pod to rejoin in place on the node it failed
// on. Marked, the Pod is a failed member to the next decision, which
// starts (and counts) the restart once, should the status write fail.
func (r *Reconciler) replaceOffNode(ctx context.Context, js *jobset.JobSet, f *failureInPlace) error {
	if f == nil || !f.replace {
		return nil
	}
	if err := r.markFailed(ctx, f.pod, ConditionReplacedOffNode, ReasonRepeatedFailures, f.why, time.Time{}); err != nil {
		return err
	}
	metrics.RepeatedFailureReplacements.WithLabelValues(js.Namespace, f.pod.Spec.NodeName).Inc()
	ctrl.LoggerFrom(ctx).Info("Replacing a Pod off its node", "pod", klog.KObj(f.pod), "node", f.pod.Spec.NodeName, "why", f.why)
	r.recorder.Eventf(js, f.pod, corev1.EventTypeWarning, ReasonRepeatedFailures, "ReplaceOffNode", "%s", f.why)
	return nil
}

// recordFailureInPlace writes a Pod's failures in place once the group
// restart its last one started is recorded: a status write that failed
// must not count it twice.
func (r *Reconciler) recordFailureInPlace(ctx context.Context, f *failureInPlace) error {
	if f == nil {
		return nil
	}
	annotation, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{FailuresInPlaceAnnotation: f.annotation}}})
	if err != nil {
		return err
	}
	target := &corev1.Pod{}
	target.Namespace, target.Name = f.pod.Namespace, f.pod.Name
	if err := r.client.Patch(ctx, target, client.RawPatch(types.MergePatchType, annotation)); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("recording a failure in place of Pod %s: %w", f.pod.Name, err))
	}
	return nil
}

// replaceWithTheirJobs marks Failed, with ConditionReplacedOffNode, the
// Pods replaced off their node with their exclusively placed Job: after
// the Pod that failed, whose mark the Pod webhook reads to keep their
// replacements off its node. One event per Job.
func (r *Reconciler) replaceWithTheirJobs(ctx context.Context, js *jobset.JobSet, pods []withItsJob) error {
	perJob := map[string][]string{}
	var errs []error
	for _, p := range pods {
		if err := r.markFailed(ctx, p.pod, ConditionReplacedOffNode, jobset.PodReasonReplacedWithItsJob, p.why, time.Time{}); err != nil {
			errs = append(errs, err)
			continue
		}
		ctrl.LoggerFrom(ctx).Info("Replacing a Pod off its node with its Job", "pod", klog.KObj(p.pod), "node", p.pod.Spec.NodeName, "why", p.why)
		job := p.pod.Labels[batchv1.JobNameLabel]
		perJob[job] = append(perJob[job], p.pod.Name)
	}
	for _, job := range slices.Sorted(maps.Keys(perJob)) {
		r.recorder.Eventf(js, nil, corev1.EventTypeWarning, ReasonRepeatedFailures, "ReplaceOffNode",
			"Job %s is placed exclusively: its Pods %s are replaced with it, for it to move to another domain", job, strings.Join(perJob[job], ", "))
	}
	return errors.Join(errs...)
}

// markFailed sets the Pod's phase Failed with a condition that says why, as
// the Pod garbage collector does: its Job replaces it, and its kubelet, if
// it comes back, stops it. (The Pod's own status: the kubelet, alive, would
// not have let it end otherwise.)
//
// The Job controller holds a Job's replacements back 10 s after its last
// failed Pod, doubled for every failed Pod it counted since the Job's last
// success, up to 10 minutes, whatever the Pod failure policy says. The
// Jobs of an in-place group live as long as the JobSet and none of their
// Pods succeeds before the end: counted, every node lost would hold the
// next replacement of its Job back longer (320 s after six). A Pod marked
// here failed for its node, not for what it ran, so its Job does not count
// it: the Job controller counts a failed Pod only while it holds its
// tracking finalizer, which goes first.
//
// notReadySince, unless zero, is when the Pod was last known to be ready:
// its Ready condition turns False from then.
func (r *Reconciler) markFailed(ctx context.Context, pod *corev1.Pod, condition corev1.PodConditionType, reason, why string, notReadySince time.Time) error {
	if slices.Contains(pod.Finalizers, batchv1.JobTrackingFinalizer) {
		target := &corev1.Pod{}
		target.Namespace, target.Name = pod.Namespace, pod.Name
		if err := r.client.Patch(ctx, target, jobTrackingRelease); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("removing finalizer %s from Pod %s before marking it Failed: %w", batchv1.JobTrackingFinalizer, pod.Name, err)
		}
	}
	conditions := []corev1.PodCondition{{Type: condition, Status: corev1.ConditionTrue,
		Reason: reason, Message: why, LastTransitionTime: metav1.Now()}}
	if !notReadySince.IsZero() {
		conditions = append(conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse,
			Reason: reason, Message: why, LastTransitionTime: metav1.NewTime(notReadySince)})
	}
	return r.writeFailed(ctx, pod, reason, why, conditions)
}

// jobTrackingRelease removes only the Job controller's tracking finalizer.
var jobTrackingRelease = client.RawPatch(types.StrategicMergePatchType,
	[]byte(fmt.Sprintf(`{"metadata":{"$deleteFromPrimitiveList/finalizers":[%q]}}`, batchv1.JobTrackingFinalizer)))

// writeFailed patches the Pod's status to phase Failed, with reason and
// message, merging conditions into those it has.
func (r *Reconciler) writeFailed(ctx context.Context, pod *corev1.Pod, reason, why string, conditions []corev1.PodCondition) error {
	fields := map[string]any{"phase": corev1.PodFailed, "reason": reason, "message": why}
	if len(conditions) > 0 {
		fields["conditions"] = conditions
	}
	status, err := json.Marshal(map[string]any{"status": fields})
	if err != nil {
		return err
	}
	target := &corev1.Pod{}
	target.Namespace, target.Name = pod.Namespace, pod.Name
	if err := r.client.Status().Patch(ctx, target, client.RawPatch(types.StrategicMergePatchType, status)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("marking Pod %s Failed: %w", pod.Name, err)
	}
	return nil
}

// failAgain marks Failed again the Pods the controller marked Failed whose
// kubelet wrote its own phase back over the mark, with the reason and
// message of the mark, which stays as it was.
func (r *Reconciler) failAgain(ctx context.Context, pods []*corev1.Pod) error {
	var errs []error
	for _, pod := range pods {
		mark := jobset.ControllerMark(pod)
		if mark == nil {
			continue // phaseWrittenBack picks marked Pods only
		}
		ctrl.LoggerFrom(ctx).Info("Marking a Pod Failed again: its kubelet wrote its phase back over the controller's mark",
			"pod", klog.KObj(pod), "node", pod.Spec.NodeName, "phase", pod.Status.Phase, "reason", mark.Reason)
		if err := r.writeFailed(ctx, pod, mark.Reason, mark.Message, nil); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
