package jobsetcontroller

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/fastjobset/jobset/api/features"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// actions is everything one reconcile does, as decided from what it
// observed. Nothing in it has been done yet.
type actions struct {
	// confirm: the actions write something that a cache behind the API
	// server may have misled (an epoch, a full restart for a lost index,
	// the release of a Pod that left while running), so they are decided
	// again on a fresh read before anything is done.
	confirm bool
	// deleteJobs: Jobs of earlier restart attempts, or a finished JobSet's
	// active Jobs.
	deleteJobs []*batchv1.Job
	// converge: the children to create, and the active Jobs to move to the
	// JobSet's suspend state; nil when the JobSet does not keep running.
	converge *childrenPlan
	// status is the status to write, with the events and metrics that
	// record it; nil for a finished JobSet.
	status *statusUpdate
	// adopt: the live Pods of the in-place group the group-member
	// finalizer does not hold yet.
	adopt []*corev1.Pod
	// lost: the members whose node was lost, to mark Failed.
	lost []lostMember
	// failedInPlace: the Pod whose failure in place this decision's group
	// restart answers, to record once the status is written.
	failedInPlace *failureInPlace
	// deleteLost: the Pods marked lost that are not being deleted, to
	// delete again (before failAgain marks them Failed again).
	deleteLost []*corev1.Pod
	// withTheirJobs: the Pods replaced off their node with their
	// exclusively placed Job, marked after failedInPlace.
	withTheirJobs []withItsJob
	// failAgain: the Pods the controller marked Failed whose kubelet wrote a
	// phase of its own back over the mark, to mark Failed again.
	failAgain []*corev1.Pod
	// release: the Pods whose group-member finalizer the controller is
	// done with, released once the status is written.
	release []*corev1.Pod
	// expired: the finished JobSet's ttlSecondsAfterFinished is over.
	expired bool
	// requeueAfter: when to look again (a gather that may stall, a TTL,
	// an active deadline).
	requeueAfter time.Duration
	// gather is what the in-place group is left gathering at (nil: in
	// sync), valid when gatherKnown; the Pod event pacer weighs the next
	// events against it.
	gather      *inplace.Gather
	gatherKnown bool
}

// decide is the reconciler's one decision: from what a reconcile observed,
// every action, by the policies in order. A finished JobSet only stops
// what still runs. Otherwise a JobSet past its active deadline fails,
// unless its success policy is met (active_deadline.go); a failed Job goes
// to the failure policy, then the success policy; a lost index of the in-place group comes before the
// success policy (its Job may count complete only because the index's
// worker was stopped) and answers with a full restart; a JobSet that keeps
// running converges its children, and its in-place group follows the
// epoch protocol (inplace.Decide).
func decide(o *observed, gatherStallThreshold time.Duration) actions {
	js := o.js
	if finished(js) {
		return decideFinished(o)
	}
	status := replicatedJobsStatus(js, o.children)
	restartJobGate := o.gates.Enabled(features.RestartJob)
	// Under ExecutionAttemptsTracking, the execution the children converge
	// on; nil when off, and nothing is stamped or counted.
	var attempt *int32
	var started bool
	if o.gates.Enabled(features.ExecutionAttemptsTracking) {
		var a int32
		a, started = executionAttempt(js)
		attempt = &a
	}
	plan := planChildren(js, o.children, status, restartJobGate, attempt)
	if o.gates.Enabled(features.ElasticJobSet) {
		plan.rescale = rescaled(js, o.children.active)
	}
	d := policyDecision(js, o.children, restartJobGate)
	// Under JobSetActiveDeadlineSeconds, when the current execution
	// started; nothing is stored or bounded when off.
	deadlineGate := o.gates.Enabled(features.JobSetActiveDeadlineSeconds)
	var start *metav1.Time
	if deadlineGate {
		start = executionStart(js, o.now)
		if pastDeadline(js, start, o.now, o.children) {
			d = deadlineDecision(js)
		}
	}
	a := actions{deleteJobs: plan.delete}
	update := newStatusUpdate(js, metav1.NewTime(o.now))
	update.js.Status.ReplicatedJobsStatus = status

	pods, jobs := o.epochInputs()
	// Each in-place group decides on its own snapshot; what one cannot
	// absorb (a lost index) escalates to the JobSet.
	var groups []inplace.InPlaceGroup
	var snapshots []inplace.Snapshot
	if jobset.RestartStrategyOf(js) == jobset.InPlaceRestart {
		groups = inplace.Groups(js)
		update.addGroupEntries(groups)
		fenced := o.nodeLoss.fenced(js, o.pods, o.now)
		for _, g := range groups {
			// Suspended too: the Pods a suspension stopped may end
			// Succeeded, and their Jobs count them complete.
			snapshot := inplace.SnapshotOf(js, g, pods, jobs, o.signs, fenced)
			a.requeueAfter = sooner(a.requeueAfter, holdLostWorkers(&snapshot, pods, o.now))
			snapshots = append(snapshots, snapshot)
			if lost := inplace.LostIndex(snapshot.Pods); lost != "" && (d.kind.keepsRunning() || d.kind == completeJobSet) {
				d, a.confirm = lostIndexDecision(js, g, lost), true
			}
		}
		// A Job may count an index complete before the cache shows that
		// the Pod which completed it was stopped, not done: the completion
		// is decided on a fresh read, which shows the Pod as it ended.
		a.confirm = a.confirm || d.kind == completeJobSet
	}
	if d.kind.keepsRunning() {
		a.converge = &plan
		update.setRestarting(plan.restarting(js))
		update.setStartupPolicy(plan.inOrderPending)
	}
	switch {
	case d.kind.keepsRunning() && inPlaceRestartEnabled(js):
		restarting := false
		scoped, current := inplace.Scoped(js), inplace.CurrentAttempt(js, o.pods)
		for i, g := range groups {
			snapshot := snapshots[i]
			// The budget is the JobSet's: a group deciding after another
			// sees the restart that one started.
			snapshot.RestartsUsed = inplace.RestartsUsed(update.js)
			epochs := inplace.Decide(snapshot)
			a.confirm = a.confirm || writes(epochs, snapshot)
			if epochs.BudgetExceeded {
				d = failDecision(jobset.ReasonReachedMaxRestarts, "%s%s", g.Describe(), epochs.Message)
				break
			}
			if epochs.RestartStarted && a.failedInPlace == nil {
				a.failedInPlace = failedInPlace(epochs.FailedInPlace, pods, o.now, o.repeatedFailures)
			}
			status := update.groupStatus(g.Name)
			update.applyEpochs(status, epochs, snapshot)
			if inplace.RestartInProgress(epochs.Synced, epochs.Deprecated) {
				var only sets.Set[string]
				if scoped {
					only = g.Members
				}
				holdReadyCounts(js, only, update.js.Status.ReplicatedJobsStatus, js.Status.ReplicatedJobsStatus)
				restarting = true
			}
			groupPods, _ := inplace.GroupChildren(g, current, nil)
			report, stallLookAgain := stalledGather(update.js, g.StateIn(update.js), groupPods, snapshot.ExpectedPods, o.now, gatherStallThreshold)
			a.requeueAfter = sooner(a.requeueAfter, stallLookAgain)
			update.setGatherStalled(status, report)
		}
		if restarting {
			a.withTheirJobs = replacedWithTheirJobs(inplace.CurrentAttempt(js, pods), a.failedInPlace)
		}
		update.setKeptOffNodes(keptOffUnschedulable(current))
	default:
		// Suspended, finished or restarting fully: nothing gathers, and a
		// gather a GatherStalled condition reported is over; nor does a
		// Pod wait to be scheduled.
		for _, g := range groups {
			update.setGatherStalled(update.groupStatus(g.Name), "")
		}
		update.setKeptOffNodes("")
	}
	update.apply(d)
	update.setSuspended()
	if attempt != nil {
		update.countExecutions(*attempt, started, d)
	}
	if deadlineGate {
		start = startAfter(start, d, o.now)
		update.js.Status.StartTime = start
		if left, ok := deadlineLeft(js, start, o.now); ok && (d.kind.keepsRunning() || d.kind == restartJobSet) {
			a.requeueAfter = sooner(a.requeueAfter, max(left, time.Second))
		}
	}
	a.status = update

	a.adopt = adoptions(update.js, o.pods)
	a.deleteLost, a.failAgain = lostUndeleted(o.pods), phaseWrittenBack(o.pods)
	var lostLookAgain time.Duration
	a.lost, lostLookAgain = lostMembers(update.js, o.pods, o.nodeLoss, o.now)
	a.requeueAfter = sooner(a.requeueAfter, lostLookAgain)
	var confirmRelease bool
	a.release, confirmRelease = releases(update.js, o.pods, jobs, o.nodeLoss, o.now)
	a.confirm = a.confirm || confirmRelease
	if d.kind.keepsRunning() && inPlaceRestartEnabled(update.js) && !inplace.Scoped(update.js) {
		// The tally follows one group's gather: the Pod events of a
		// JobSet with named groups are all reconciled at the short pause.
		a.gather, a.gatherKnown = gatherOf(update.js), true
	}
	a.confirm = a.confirm && o.fresh == nil
	return a
}

// decideFinished: a finished JobSet stops what still runs, lets go of its
// Pods, and goes once its ttlSecondsAfterFinished is over.
func decideFinished(o *observed) actions {
	a := actions{deleteJobs: o.children.active}
	a.release, _ = releases(o.js, o.pods, nil, o.nodeLoss, o.now)
	if remaining, ok := ttlRemaining(o.js, o.now); ok {
		a.expired, a.requeueAfter = remaining <= 0, max(remaining, 0)
	}
	return a
}

// writes: the epoch decision changes the status or the JobSet's fate.
func writes(d inplace.Decision, s inplace.Snapshot) bool {
	return d.Synced != s.Synced || d.Deprecated != s.Deprecated || d.BudgetExceeded || d.LostIndex != ""
}
