package jobsetcontroller

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
	"github.com/fastjobset/jobset/controllers/internal/metrics"
)

// PodJobSetUIDIndex indexes Pods by the UID of their JobSet (the
// jobset-uid label every child Pod carries).
const PodJobSetUIDIndex = "jobset.x-k8s.io/pod-jobset-uid"

func indexPodByJobSetUID(o client.Object) []string {
	if uid, ok := o.GetLabels()[jobset.JobSetUIDKey]; ok {
		return []string{uid}
	}
	return nil
}

// podToJobSet maps a child Pod event to its JobSet.
func podToJobSet(_ context.Context, o client.Object) []reconcile.Request {
	name, ok := o.GetLabels()[jobset.JobSetNameKey]
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// recordEpochs mirrors the epochs of an InPlaceRestart JobSet in the
// gauges, from every reconcile; a JobSet that is gone loses its series.
func recordEpochs(js *jobset.JobSet) {
	if jobset.RestartStrategyOf(js) != jobset.InPlaceRestart {
		return
	}
	metrics.SetEpochs(js.Namespace, js.Name, ptr.Deref(js.Status.SyncedEpoch, 0), ptr.Deref(js.Status.DeprecatedEpoch, 0))
}

func inPlaceRestartEnabled(js *jobset.JobSet) bool {
	return jobset.RestartStrategyOf(js) == jobset.InPlaceRestart && !ptr.Deref(js.Spec.Suspend, false)
}

// decideEpochs gathers the JobSet's current Pods and runs the epoch
// protocol on them.
func (r *Reconciler) decideEpochs(ctx context.Context, js *jobset.JobSet) (inplace.Decision, inplace.Snapshot, error) {
	var pods corev1.PodList
	// Read only, so the cache's objects are used as they are: no copy of
	// thousands of Pods on every Pod event.
	if err := r.client.List(ctx, &pods, client.InNamespace(js.Namespace),
		client.MatchingFields{PodJobSetUIDIndex: string(js.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return inplace.Decision{}, inplace.Snapshot{}, fmt.Errorf("listing the Pods of JobSet %s: %w", js.Name, err)
	}
	snapshot := epochSnapshot(js, pods.Items, lastSyncTime(js))
	return inplace.Decide(snapshot), snapshot, nil
}

// epochSnapshot reads the protocol's inputs: the Pods of the current
// restart attempt, the expected Pod count and the restart budget.
func epochSnapshot(js *jobset.JobSet, pods []corev1.Pod, syncedAt time.Time) inplace.Snapshot {
	s := inplace.Snapshot{
		Synced:       ptr.Deref(js.Status.SyncedEpoch, 0),
		Deprecated:   ptr.Deref(js.Status.DeprecatedEpoch, 0),
		RestartsUsed: restartsUsed(js),
	}
	if js.Spec.FailurePolicy != nil {
		s.MaxRestarts = js.Spec.FailurePolicy.MaxRestarts
	}
	for _, rj := range js.Spec.ReplicatedJobs {
		s.ExpectedPods += rj.Replicas * ptr.Deref(rj.Template.Spec.Parallelism, 1)
	}
	failurePolicies := map[string]*batchv1.PodFailurePolicy{}
	for i := range js.Spec.ReplicatedJobs {
		rj := &js.Spec.ReplicatedJobs[i]
		failurePolicies[rj.Name] = rj.Template.Spec.PodFailurePolicy
	}
	attempt := strconv.Itoa(int(js.Status.Restarts))
	var current []*corev1.Pod
	// A Pod whose failure fails its Job dooms the whole Job: the Job
	// controller deletes its other Pods next, which must not look like
	// members lost. (Pod events arrive in order, so the failed Pod's status
	// is seen before its siblings' deletion.)
	doomedJobs := map[string]bool{}
	for i := range pods {
		pod := &pods[i]
		if pod.Labels[jobset.RestartsKey] != attempt || pod.Labels[jobset.JobSetUIDKey] != string(js.UID) {
			continue
		}
		current = append(current, pod)
		if inplace.EndsJob(pod, failurePolicies[pod.Labels[jobset.ReplicatedJobNameKey]]) {
			doomedJobs[pod.Labels[batchv1.JobNameLabel]] = true
		}
	}
	for _, pod := range current {
		s.Pods = append(s.Pods, inplace.Pod{
			Name:          pod.Name,
			Epoch:         pod.Annotations[jobset.EpochKey],
			Succeeded:     pod.Status.Phase == corev1.PodSucceeded,
			Failed:        pod.Status.Phase == corev1.PodFailed,
			Deleting:      pod.DeletionTimestamp != nil,
			EndsJob:       doomedJobs[pod.Labels[batchv1.JobNameLabel]],
			FailureSignal: inplace.FailureSignal(pod, syncedAt),
		})
	}
	return s
}

// restartsUsed is what spec.failurePolicy.maxRestarts limits: full restarts
// that count plus group restarts in place.
func restartsUsed(js *jobset.JobSet) int32 {
	return js.Status.RestartsCountTowardsMax + js.Status.InPlaceRestarts
}

// lastSyncTime is when the group last synced: the InPlaceRestarting
// condition turns False then. Zero when unknown.
func lastSyncTime(js *jobset.JobSet) time.Time {
	c := meta.FindStatusCondition(js.Status.Conditions, string(jobset.JobSetInPlaceRestarting))
	if c == nil || c.Status != metav1.ConditionFalse {
		return time.Time{}
	}
	return c.LastTransitionTime.Time
}

// applyEpochs records an epoch decision in the status, with its condition,
// events and metrics.
func (u *statusUpdate) applyEpochs(d inplace.Decision, s inplace.Snapshot) {
	js, ns := u.js, u.js.Namespace
	u.setInvalidEpochs(d.InvalidEpochs)
	if d.BudgetExceeded {
		u.apply(failDecision(jobset.ReasonReachedMaxRestarts, "%s", d.Message))
		return
	}
	if d.Deprecated != s.Deprecated {
		js.Status.DeprecatedEpoch = ptr.To(d.Deprecated)
	}
	if d.RestartStarted {
		js.Status.InPlaceRestarts++
		note := fmt.Sprintf("in-place group restart %d started: %s; every Pod at epoch %d or below restarts in place",
			js.Status.InPlaceRestarts, d.Trigger, d.Deprecated)
		u.setCondition(jobset.JobSetInPlaceRestarting, metav1.ConditionTrue, jobset.ReasonInPlaceRestartStarted, note)
		u.event(corev1.EventTypeWarning, jobset.ReasonInPlaceRestartStarted, "RestartInPlace", note)
		u.recorded = append(u.recorded, func() { metrics.InPlaceRestarts.WithLabelValues(ns).Inc() })
	}
	if d.Synced != s.Synced {
		js.Status.SyncedEpoch = ptr.To(d.Synced)
		if d.RestartCompleted {
			note := fmt.Sprintf("in-place group restart %d completed: every live Pod joined epoch %d", js.Status.InPlaceRestarts, d.Synced)
			// Its duration is known when its start was recorded by an
			// earlier reconcile.
			if started := meta.FindStatusCondition(u.original.Status.Conditions, string(jobset.JobSetInPlaceRestarting)); started != nil && started.Status == metav1.ConditionTrue {
				took := u.now.Sub(started.LastTransitionTime.Time)
				note = fmt.Sprintf("in-place group restart %d completed in %.1fs: every live Pod joined epoch %d",
					js.Status.InPlaceRestarts, took.Seconds(), d.Synced)
				u.recorded = append(u.recorded, func() { metrics.InPlaceRestartDuration.WithLabelValues(ns).Observe(took.Seconds()) })
			}
			u.markSynced(jobset.ReasonInPlaceRestartCompleted, note)
			u.event(corev1.EventTypeNormal, jobset.ReasonInPlaceRestartCompleted, "RestartInPlace", note)
		} else {
			note := fmt.Sprintf("every live Pod joined epoch %d", d.Synced)
			u.markSynced(jobset.ReasonEpochSynced, note)
			u.logOnly(jobset.ReasonEpochSynced, note)
		}
	}
}

// markSynced sets InPlaceRestarting False with a transition time of now,
// even when it was False already: that time is when the group last synced,
// which fast failure detection compares container terminations with.
func (u *statusUpdate) markSynced(reason, message string) {
	meta.RemoveStatusCondition(&u.js.Status.Conditions, string(jobset.JobSetInPlaceRestarting))
	u.setCondition(jobset.JobSetInPlaceRestarting, metav1.ConditionFalse, reason, message)
}

// setInvalidEpochs names, in the InvalidEpoch condition, the live Pods whose
// epoch annotation no agent could have written.
func (u *statusUpdate) setInvalidEpochs(invalid []inplace.InvalidEpoch) {
	if len(invalid) == 0 {
		if meta.IsStatusConditionTrue(u.js.Status.Conditions, string(jobset.JobSetInvalidEpoch)) {
			u.setCondition(jobset.JobSetInvalidEpoch, metav1.ConditionFalse, jobset.ReasonEpochsValid, "every live Pod reports a valid epoch")
		}
		return
	}
	note := fmt.Sprintf("ignored for sync until fixed (only the agent writes %s): %s", jobset.EpochKey, describeInvalidEpochs(invalid))
	if u.setCondition(jobset.JobSetInvalidEpoch, metav1.ConditionTrue, jobset.ReasonInvalidEpoch, note) {
		u.event(corev1.EventTypeWarning, jobset.ReasonInvalidEpoch, "ReadEpochs", note)
	}
}

// A condition's message is limited to 32 KiB by the CRD's schema, and a
// status write with a longer one fails, taking every other status change
// with it: an admin who "resets" the epochs of a thousand Pods must not
// leave the JobSet unable to record even its failure. So the message names
// a few Pods, each with a shortened value, and counts the rest.
const (
	invalidEpochsNamed    = 10
	invalidEpochValueSize = 32
)

func describeInvalidEpochs(invalid []inplace.InvalidEpoch) string {
	descriptions := make([]string, 0, min(len(invalid), invalidEpochsNamed)+1)
	for _, e := range invalid[:min(len(invalid), invalidEpochsNamed)] {
		if len(e.Value) > invalidEpochValueSize {
			e.Value = e.Value[:invalidEpochValueSize] + "..."
		}
		descriptions = append(descriptions, e.String())
	}
	if more := len(invalid) - invalidEpochsNamed; more > 0 {
		descriptions = append(descriptions, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(descriptions, "; ")
}
