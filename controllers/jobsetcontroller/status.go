package jobsetcontroller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/internal/metrics"
)

// statusUpdate accumulates one reconcile's changes to a JobSet's status, and
// the events and metrics that record them. Nothing is emitted unless the
// status write succeeds, so no event or counter describes a state that was
// never persisted, and a retried reconcile cannot count twice.
type statusUpdate struct {
	original *jobset.JobSet
	js       *jobset.JobSet
	now      metav1.Time
	events   []event
	recorded []func()
}

// event is a decision to log and, unless its eventType is empty, to emit
// as an event.
type event struct {
	eventType, reason, action, note string
}

func newStatusUpdate(js *jobset.JobSet, now metav1.Time) *statusUpdate {
	return &statusUpdate{original: js, js: js.DeepCopy(), now: now}
}

func (u *statusUpdate) setCondition(t jobset.JobSetConditionType, status metav1.ConditionStatus, reason, message string) bool {
	return meta.SetStatusCondition(&u.js.Status.Conditions, metav1.Condition{
		Type:               string(t),
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: u.js.Generation,
		LastTransitionTime: u.now,
	})
}

func (u *statusUpdate) event(eventType, reason, action, note string) {
	u.events = append(u.events, event{eventType: eventType, reason: reason, action: action, note: note})
}

// logOnly records a decision that is logged once persisted but is too
// routine for an event (a group syncing without a restart).
func (u *statusUpdate) logOnly(reason, note string) {
	u.events = append(u.events, event{reason: reason, note: note})
}

// apply records a decision of the restart machine in the status.
func (u *statusUpdate) apply(d decision) {
	ns := u.js.Namespace
	switch d.kind {
	case completeJobSet:
		u.setCondition(jobset.JobSetCompleted, metav1.ConditionTrue, d.reason, d.terminalMessage())
		u.js.Status.TerminalState = string(jobset.JobSetCompleted)
		u.event(corev1.EventTypeNormal, d.reason, "Complete", d.message)
		u.recorded = append(u.recorded, func() { metrics.JobSetsCompleted.WithLabelValues(ns).Inc() })
	case failJobSet:
		u.setCondition(jobset.JobSetFailed, metav1.ConditionTrue, d.reason, d.terminalMessage())
		u.js.Status.TerminalState = string(jobset.JobSetFailed)
		u.event(corev1.EventTypeWarning, d.reason, "Fail", d.message)
		u.recorded = append(u.recorded, func() { metrics.JobSetsFailed.WithLabelValues(ns, d.reason).Inc() })
	case restartJobSet:
		u.js.Status.Restarts++
		if d.countsTowardMax {
			u.js.Status.RestartsCountTowardsMax++
		}
		u.setCondition(jobset.JobSetRestarting, metav1.ConditionTrue, jobset.ReasonRecreatingJobs,
			fmt.Sprintf("restart attempt %d: %s", u.js.Status.Restarts, d.message))
		u.markRegathering(fmt.Sprintf("restart attempt %d recreates every Job", u.js.Status.Restarts))
		u.event(corev1.EventTypeWarning, d.reason, "Restart", d.message)
		u.recorded = append(u.recorded, func() { metrics.JobSetRestarts.WithLabelValues(ns).Inc() })
	}
	u.setRestartingJobSet(d)
}

// setRestarting moves the Restarting condition of a full restart; it is
// absent until the first restart.
func (u *statusUpdate) setRestarting(inProgress bool) {
	if inProgress {
		u.setCondition(jobset.JobSetRestarting, metav1.ConditionTrue, jobset.ReasonRecreatingJobs,
			fmt.Sprintf("recreating the Jobs of restart attempt %d", u.js.Status.Restarts))
		return
	}
	if meta.IsStatusConditionTrue(u.js.Status.Conditions, string(jobset.JobSetRestarting)) {
		u.setCondition(jobset.JobSetRestarting, metav1.ConditionFalse, jobset.ReasonJobsRecreated,
			fmt.Sprintf("every Job of restart attempt %d exists", u.js.Status.Restarts))
	}
}

// setStartupPolicy reports an InOrder startup: in progress until every
// replicatedJob has started, then completed, for good (a later restart
// does not reopen it, as in community JobSet).
func (u *statusUpdate) setStartupPolicy(inOrderPending bool) {
	p := u.js.Spec.StartupPolicy
	if p == nil || p.StartupPolicyOrder != jobset.InOrder ||
		meta.IsStatusConditionTrue(u.js.Status.Conditions, string(jobset.JobSetStartupPolicyCompleted)) {
		return
	}
	if inOrderPending {
		u.setCondition(jobset.JobSetStartupPolicyInProgress, metav1.ConditionTrue, jobset.ReasonStartupPolicyInProgress,
			jobset.MessageStartupPolicyInProgress)
		return
	}
	// As community JobSet: the in-progress condition turns False and
	// keeps its reason and message.
	u.setCondition(jobset.JobSetStartupPolicyInProgress, metav1.ConditionFalse, jobset.ReasonStartupPolicyInProgress,
		jobset.MessageStartupPolicyInProgress)
	u.setCondition(jobset.JobSetStartupPolicyCompleted, metav1.ConditionTrue, jobset.ReasonStartupPolicyCompleted,
		jobset.MessageStartupPolicyCompleted)
}

// setSuspended mirrors spec.suspend in the Suspended condition.
func (u *statusUpdate) setSuspended() {
	if ptr.Deref(u.js.Spec.Suspend, false) {
		// An event for the transition only: a spec change while suspended
		// moves the condition's observedGeneration, not the state.
		wasSuspended := meta.IsStatusConditionTrue(u.js.Status.Conditions, string(jobset.JobSetSuspended))
		u.setCondition(jobset.JobSetSuspended, metav1.ConditionTrue, jobset.ReasonSuspended, jobset.MessageSuspended)
		if !wasSuspended {
			u.event(corev1.EventTypeNormal, jobset.ReasonSuspended, "Suspend", "suspended every child Job")
			u.markRegathering("the JobSet is suspended")
		}
		return
	}
	if meta.IsStatusConditionTrue(u.js.Status.Conditions, string(jobset.JobSetSuspended)) {
		u.setCondition(jobset.JobSetSuspended, metav1.ConditionFalse, jobset.ReasonResumed, jobset.MessageResumed)
		u.event(corev1.EventTypeNormal, jobset.ReasonResumed, "Resume", "resumed every child Job")
	}
}

// writeStatus persists the status with a merge patch guarded by the
// resourceVersion the reconcile read (a stale read fails with a conflict
// and is retried on fresh state), then logs and emits the queued events,
// which are the reconcile's decisions, and records the metrics.
func (r *Reconciler) writeStatus(ctx context.Context, u *statusUpdate) error {
	log := ctrl.LoggerFrom(ctx)
	if equality.Semantic.DeepEqual(u.original.Status, u.js.Status) {
		log.V(2).Info("Status unchanged")
		return nil
	}
	patch := client.MergeFromWithOptions(u.original, client.MergeFromWithOptimisticLock{})
	if err := r.client.Status().Patch(ctx, u.js, patch); err != nil {
		return fmt.Errorf("writing the status of JobSet %s: %w", client.ObjectKeyFromObject(u.js), err)
	}
	for _, e := range u.events {
		log.Info(e.note, "reason", e.reason, "restarts", u.js.Status.Restarts, "inPlaceRestarts", u.js.Status.InPlaceRestarts,
			"syncedEpoch", ptr.Deref(u.js.Status.SyncedEpoch, 0), "deprecatedEpoch", ptr.Deref(u.js.Status.DeprecatedEpoch, 0))
		if e.eventType != "" {
			r.recorder.Eventf(u.js, nil, e.eventType, e.reason, e.action, "%s", e.note)
		}
	}
	for _, record := range u.recorded {
		record()
	}
	return nil
}
