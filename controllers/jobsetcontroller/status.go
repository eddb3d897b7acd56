package jobsetcontroller

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
	"github.com/fastjobset/jobset/controllers/internal/metrics"
)

// statusUpdate accumulates one reconcile's changes to a JobSet's status, and
// the events and metrics that record them. Nothing is emitted until the
// status write is known to be stored (writeStatus), so no event or counter
// describes a state that was never persisted, and a retried reconcile
// cannot count twice.
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
	return u.setGroupCondition(u.groupStatus(""), t, status, reason, message)
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
	ns, name := u.js.Namespace, u.js.Name
	switch d.kind {
	case completeJobSet:
		u.setCondition(jobset.JobSetCompleted, metav1.ConditionTrue, d.reason, d.terminalMessage())
		u.js.Status.TerminalState = string(jobset.JobSetCompleted)
		u.event(corev1.EventTypeNormal, d.reason, "Complete", d.message)
		u.recorded = append(u.recorded, func() { metrics.JobSetCompleted(ns, name) })
	case failJobSet:
		u.setCondition(jobset.JobSetFailed, metav1.ConditionTrue, d.reason, d.terminalMessage())
		u.js.Status.TerminalState = string(jobset.JobSetFailed)
		u.event(corev1.EventTypeWarning, d.reason, "Fail", d.message)
		u.recorded = append(u.recorded, func() { metrics.JobSetFailed(ns, name, d.reason) })
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
	case restartOneJob:
		countOneJobRestart(u.js, d.replicatedJob, d.jobIndex, d.countsTowardMax)
		u.event(corev1.EventTypeWarning, d.reason, "RestartJob", d.message)
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

// markRegathering records, in the same status write as the full restart or
// suspension that recreates every Pod, that each in-place group's new Pods
// gather at its next epoch without a group restart: a sync past a synced
// epoch without it is a group restart that the budget counts (Decide).
func (u *statusUpdate) markRegathering(why string) {
	if jobset.RestartStrategyOf(u.js) != jobset.InPlaceRestart {
		return
	}
	for _, g := range inplace.Groups(u.js) {
		if g.Synced < 1 {
			continue
		}
		u.setGroupCondition(u.groupStatus(g.Name), jobset.JobSetInPlaceRestarting, metav1.ConditionTrue, jobset.ReasonPodsRecreated,
			fmt.Sprintf("%s: the new Pods gather at epoch %d without an in-place group restart", why, g.Synced+1))
	}
}

// groupStatus is where one in-place group's state is written: the top of
// the status for the default group, its entry of status.inPlaceGroups for
// a named one.
type groupStatus struct {
	name               string
	synced, deprecated **int32
	conditions         *[]metav1.Condition
	// restarts and fencedRestarts are a named group's own counters, nil
	// for the default group's: the JobSet's count every group's.
	restarts, fencedRestarts *int32
}

// groupStatus returns the named group's place in the status being
// written, adding its entry to status.inPlaceGroups when it has none. The
// pointers are good until the next entry is added: addGroupEntries adds
// every group's first.
func (u *statusUpdate) groupStatus(name string) groupStatus {
	st := &u.js.Status
	if name == "" {
		return groupStatus{synced: &st.SyncedEpoch, deprecated: &st.DeprecatedEpoch, conditions: &st.Conditions}
	}
	i := slices.IndexFunc(st.InPlaceGroups, func(g jobset.InPlaceGroupStatus) bool { return g.Name == name })
	if i < 0 {
		st.InPlaceGroups = append(st.InPlaceGroups, jobset.InPlaceGroupStatus{Name: name})
		i = len(st.InPlaceGroups) - 1
	}
	e := &st.InPlaceGroups[i]
	return groupStatus{name: name, synced: &e.SyncedEpoch, deprecated: &e.DeprecatedEpoch, conditions: &e.Conditions,
		restarts: &e.InPlaceRestarts, fencedRestarts: &e.FencedInPlaceRestarts}
}

// addGroupEntries gives every named in-place group its entry of
// status.inPlaceGroups, so that a user sees each group from the start.
func (u *statusUpdate) addGroupEntries(groups []inplace.InPlaceGroup) {
	for _, g := range groups {
		if g.Name != "" {
			u.groupStatus(g.Name)
		}
	}
}

// describe names a named group at the start of a message.
func (g groupStatus) describe() string {
	return inplace.InPlaceGroup{Name: g.name}.Describe()
}

func (u *statusUpdate) setGroupCondition(g groupStatus, t jobset.JobSetConditionType, status metav1.ConditionStatus, reason, message string) bool {
	return meta.SetStatusCondition(g.conditions, metav1.Condition{
		Type:               string(t),
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: u.js.Generation,
		LastTransitionTime: u.now,
	})
}

// applyEpochs records one group's epoch decision in the status, with its
// condition, events and metrics. A spent budget is the caller's: it fails
// the JobSet, not the group.
func (u *statusUpdate) applyEpochs(g groupStatus, d inplace.Decision, s inplace.Snapshot) {
	js, ns := u.js, u.js.Namespace
	u.setInvalidEpochs(g, d.InvalidEpochs)
	if d.Deprecated != s.Deprecated {
		*g.deprecated = ptr.To(d.Deprecated)
	}
	if d.RestartStarted && d.Fenced {
		js.Status.FencedInPlaceRestarts++
		count := js.Status.FencedInPlaceRestarts
		if g.fencedRestarts != nil {
			*g.fencedRestarts++
		}
		note := g.describe() + inplace.FencedRestartStartedNote(count, d.Trigger, d.Deprecated)
		u.setGroupCondition(g, jobset.JobSetInPlaceRestarting, metav1.ConditionTrue, jobset.ReasonFencedRestartStarted, note)
		u.event(corev1.EventTypeWarning, jobset.ReasonFencedRestartStarted, "RestartInPlace", note)
	} else if d.RestartStarted {
		js.Status.InPlaceRestarts++
		if g.restarts != nil {
			*g.restarts++
		}
		note := g.describe() + inplace.RestartStartedNote(js.Status.InPlaceRestarts, d.Trigger, d.Deprecated)
		reason, cause := jobset.ReasonInPlaceRestartStarted, metrics.CauseFailure
		if d.Hang {
			reason, cause = jobset.ReasonHang, metrics.CauseHang
		}
		u.setGroupCondition(g, jobset.JobSetInPlaceRestarting, metav1.ConditionTrue, reason, note)
		u.event(corev1.EventTypeWarning, reason, "RestartInPlace", note)
		u.recorded = append(u.recorded, func() {
			metrics.InPlaceRestarts.WithLabelValues(ns).Inc()
			metrics.InPlaceRestartsByCause.WithLabelValues(ns, cause).Inc()
		})
	}
	if d.Synced != s.Synced {
		*g.synced = ptr.To(d.Synced)
		if d.RestartCompleted {
			// Its duration is known when its start was recorded by an
			// earlier reconcile.
			started := meta.FindStatusCondition(inplace.GroupState(u.original, g.name).Conditions, string(jobset.JobSetInPlaceRestarting))
			fenced := d.Fenced || started != nil && started.Reason == jobset.ReasonFencedRestartStarted
			note := inplace.RestartCompletedNote(js.Status.InPlaceRestarts, d.Synced)
			if fenced {
				note = inplace.FencedRestartCompletedNote(js.Status.FencedInPlaceRestarts, d.Synced)
			}
			if started != nil && started.Status == metav1.ConditionTrue {
				took := u.now.Sub(started.LastTransitionTime.Time)
				note = inplace.RestartCompletedInNote(js.Status.InPlaceRestarts, took, d.Synced)
				if fenced {
					note = inplace.FencedRestartCompletedNote(js.Status.FencedInPlaceRestarts, d.Synced) + fmt.Sprintf(" (in %.1fs)", took.Seconds())
				}
				u.recorded = append(u.recorded, func() { metrics.InPlaceRestartDuration.WithLabelValues(ns).Observe(took.Seconds()) })
			}
			// How the members came back, as their agents report it.
			// Informational only: read after the decision, never by it,
			// and no safety decision may rest on it (an agent writes it,
			// and the admission policy checks its form, not its truth).
			back := inplace.RestartTiers(s, d.Synced)
			note = g.describe() + inplace.WithTiers(note, back)
			u.recorded = append(u.recorded, func() { metrics.InPlaceRestartCompleted(ns, back.Process, back.Pod, back.Replaced, back.Unreported) })
			u.setGroupCondition(g, jobset.JobSetInPlaceRestarting, metav1.ConditionFalse, jobset.ReasonInPlaceRestartCompleted, note)
			u.event(corev1.EventTypeNormal, jobset.ReasonInPlaceRestartCompleted, "RestartInPlace", note)
		} else {
			note := g.describe() + fmt.Sprintf("every live Pod joined epoch %d", d.Synced)
			u.setGroupCondition(g, jobset.JobSetInPlaceRestarting, metav1.ConditionFalse, jobset.ReasonEpochSynced, note)
			u.logOnly(jobset.ReasonEpochSynced, note)
		}
	}
}

// setInvalidEpochs names, in the group's InvalidEpoch condition, the live
// Pods whose epoch annotation no agent could have written.
func (u *statusUpdate) setInvalidEpochs(g groupStatus, invalid []inplace.InvalidEpoch) {
	if len(invalid) == 0 {
		if meta.IsStatusConditionTrue(*g.conditions, string(jobset.JobSetInvalidEpoch)) {
			u.setGroupCondition(g, jobset.JobSetInvalidEpoch, metav1.ConditionFalse, jobset.ReasonEpochsValid, "every live Pod reports a valid epoch")
		}
		return
	}
	note := g.describe() + fmt.Sprintf("ignored for sync until fixed (only the agent writes %s): %s", jobset.EpochKey, describeInvalidEpochs(invalid))
	if u.setGroupCondition(g, jobset.JobSetInvalidEpoch, metav1.ConditionTrue, jobset.ReasonInvalidEpoch, note) {
		u.event(corev1.EventTypeWarning, jobset.ReasonInvalidEpoch, "ReadEpochs", note)
	}
}

// A condition's message is limited to 32 KiB by the CRD's schema, and a
// status write with a longer one fails, taking every other status change
// with it: an admin who "resets" the epochs of a thousand Pods must not
// leave the JobSet unable to record even its failure. So a message names a
// few Pods, each described in a bounded size, and counts the rest.
const (
	podsNamed             = 10
	podDescriptionSize    = 512
	invalidEpochValueSize = 32
)

func describeInvalidEpochs(invalid []inplace.InvalidEpoch) string {
	// By Pod name: the Pods come in the cache's order, which varies, and a
	// message that changed with it would be a status write every reconcile.
	invalid = slices.SortedFunc(slices.Values(invalid), func(a, b inplace.InvalidEpoch) int { return strings.Compare(a.Pod, b.Pod) })
	descriptions := make([]string, 0, min(len(invalid), podsNamed))
	for _, e := range invalid[:min(len(invalid), podsNamed)] {
		if len(e.Value) > invalidEpochValueSize {
			e.Value = e.Value[:invalidEpochValueSize] + "..."
		}
		descriptions = append(descriptions, e.String())
	}
	return boundedList(descriptions, len(invalid))
}

// boundedList joins the descriptions of the first podsNamed of total
// Pods, each cut to podDescriptionSize, and counts the others.
func boundedList(descriptions []string, total int) string {
	named := make([]string, 0, podsNamed+1)
	for _, d := range descriptions[:min(len(descriptions), podsNamed)] {
		if len(d) > podDescriptionSize {
			d = d[:podDescriptionSize] + "..."
		}
		named = append(named, d)
	}
	if more := total - len(named); more > 0 {
		named = append(named, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(named, "; ")
}

// setRestartingJobSet moves community JobSet's RestartingJobSet condition:
// True when the failure policy restarts the JobSet; once it exists, False
// when the JobSet failed, completed or is suspended, or when every Job of
// the attempt is ready. apply runs it for every decision, after the
// replicatedJobsStatus is set.
func (u *statusUpdate) setRestartingJobSet(d decision) {
	if d.kind == restartJobSet {
		reason, message := d.conditionReason, d.conditionMessage
		if reason == "" {
			reason, message = jobset.ReasonDefaultFailurePolicy, jobset.MessageRestartJobSet
		}
		u.setCondition(jobset.JobSetRestartingJobSet, metav1.ConditionTrue, reason, message)
		return
	}
	conditions := u.js.Status.Conditions
	if meta.FindStatusCondition(conditions, string(jobset.JobSetRestartingJobSet)) == nil {
		return
	}
	switch {
	case meta.IsStatusConditionTrue(conditions, string(jobset.JobSetFailed)):
		u.setCondition(jobset.JobSetRestartingJobSet, metav1.ConditionFalse, jobset.ReasonJobSetFailed, jobset.MessageJobSetFailed)
	case meta.IsStatusConditionTrue(conditions, string(jobset.JobSetCompleted)):
		u.setCondition(jobset.JobSetRestartingJobSet, metav1.ConditionFalse, jobset.ReasonJobSetCompleted, jobset.MessageAllJobsCompleted)
	case ptr.Deref(u.js.Spec.Suspend, false):
		u.setCondition(jobset.JobSetRestartingJobSet, metav1.ConditionFalse, jobset.ReasonJobSetSuspended, jobset.MessageSuspended)
	case allJobsReady(u.js):
		u.setCondition(jobset.JobSetRestartingJobSet, metav1.ConditionFalse, jobset.ReasonJobsReady, jobset.MessageJobsReady)
	}
}

// setGatherStalled records a stalled gather's report of the group ("" once
// it is not): the condition follows the report, the event says it once.
func (u *statusUpdate) setGatherStalled(g groupStatus, report string) {
	was := meta.IsStatusConditionTrue(*g.conditions, string(jobset.JobSetGatherStalled))
	if report == "" {
		if was {
			u.setGroupCondition(g, jobset.JobSetGatherStalled, metav1.ConditionFalse, jobset.ReasonGatherCompleted, "the gather it reported ended")
		}
		return
	}
	report = g.describe() + report
	u.setGroupCondition(g, jobset.JobSetGatherStalled, metav1.ConditionTrue, jobset.ReasonPodsNotJoined, report)
	if !was {
		u.event(corev1.EventTypeWarning, jobset.ReasonPodsNotJoined, "Gather", report)
	}
}

// setKeptOffNodes records the report of Pods that cannot be scheduled
// while kept off nodes ("" once there are none): the condition follows
// the report, the event says it once.
func (u *statusUpdate) setKeptOffNodes(report string) {
	was := meta.IsStatusConditionTrue(u.js.Status.Conditions, string(jobset.JobSetKeptOffNodes))
	if report == "" {
		if was {
			u.setCondition(jobset.JobSetKeptOffNodes, metav1.ConditionFalse, jobset.ReasonKeptOffScheduled, "every Pod it reported was scheduled, or is gone")
		}
		return
	}
	u.setCondition(jobset.JobSetKeptOffNodes, metav1.ConditionTrue, jobset.ReasonKeptOffUnschedulable, report)
	if !was {
		u.event(corev1.EventTypeWarning, jobset.ReasonKeptOffUnschedulable, "Schedule", report)
	}
}
