// Package inplace is the controller's half of the in-place restart protocol
// of KEP-467, as pure functions: a Snapshot of the JobSet's epochs and of its
// Pods in, a Decision out. No client, no clock.
//
// S is status.syncedEpoch and D status.deprecatedEpoch (absent = 0). Both
// only increase and D <= S. Each agent joins epoch S+1 when it starts and
// writes it to its Pod's jobset.sigs.k8s.io/epoch annotation; it restarts its
// Pod in place when its epoch is <= D, and lets its worker run when its
// epoch == S.
//
//   - Sync: every expected live Pod reports the same epoch e > S and is
//     held by the group-member finalizer, and no Pod of the group is
//     stopping (being deleted without having ended, or marked Failed by
//     the controller before its kubelet stopped it): S := e. The expected
//     count is the Jobs' indexes that have not completed.
//   - Deprecate: otherwise, some live Pod reports m > S: D := max(D, m-1).
//     (m <= S+1, so this sets D := S: every Pod still at S restarts.)
//   - Fast failure detection: in sync (S >= 1, D < S), a member of the
//     synced group failed, is being deleted or shows a failure signal:
//     D := S at once, without waiting for its agent to come back at S+1.
//   - Lost index: a member deleted while it ran whose worker exited 0 is
//     counted complete by its Job and never replaced; the JobSet restarts
//     fully (LostIndex) rather than sync a smaller group.
//   - Regathering: after a full restart or a suspension the controller
//     recreated every Pod; the new Pods gather at S+1 and sync without a
//     group restart.
//   - Budget, counted exactly once per group restart whatever the
//     controller saw: a group restart counts when it starts (D := S); an
//     epoch that syncs past S without one having started (every member
//     restarted or was replaced before a reconcile saw it) counts then. A
//     full restart that a group restart in progress escalates to is the
//     same failure and does not count again.
//   - Fences: a group restart whose only cause is Pods whose agents fenced
//     at S (out of contact with the API server, they stopped their
//     workers; each says so with its join of S+1) is the platform's: it
//     counts not, and blames no Pod for failing in place. Any other cause
//     the decision sees beside them (a Pod that joined S+1 without that
//     record, a member that failed, is being deleted or shows a failure
//     signal) counts it, as before.
package inplace

import (
	"fmt"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// Pod is what the protocol reads of one Pod of the JobSet's current Jobs.
type Pod struct {
	Name string
	// Index identifies the Pod's place in the group (its Job and completion
	// index); a replacement has the same Index as the Pod it replaces.
	Index string
	// IndexComplete: the Pod's Job counts its index complete (whichever
	// Pod completed it), so the Pod's own failure is old news.
	IndexComplete bool
	// Epoch is the raw jobset.sigs.k8s.io/epoch annotation, "" if absent.
	Epoch string
	// Succeeded Pods finished their work: they leave the epoch set, and
	// their Job's completed indexes leave the expected count.
	Succeeded bool
	// Failed Pods (and Pods being deleted) are not live: the Job controller
	// replaces them, and the replacement joins at S+1.
	Failed   bool
	Deleting bool
	// StillRunning: the controller marked the Pod Failed (replaced off its
	// node, or its node lost) and its kubelet has not reported its
	// containers stopped: its worker may still run, as a deleted Pod's may
	// until it ends.
	StillRunning bool
	// Left: the Pod was deleted while its worker ran, and the worker exited
	// 0 on the SIGTERM (the controller releases the Pods it sees finish
	// first). If its Job counted the index complete, it will not replace the
	// Pod: see LostIndex.
	Left bool
	// EndsJob: the Pod's failure matches a podFailurePolicy rule that fails
	// its Job; the Job's failure, not a group restart, answers it.
	EndsJob bool
	// FailureSignal, when not empty, describes a lasting sign that the
	// Pod's containers failed or are restarting since the group synced.
	FailureSignal string
	// Fenced is the raw jobset.sigs.k8s.io/fenced annotation, "" if
	// absent: the epoch at which the Pod's agent fenced (it lost contact
	// with the API server and stopped its worker), written with its join of
	// the next epoch.
	Fenced string
	// Hung is the raw jobset.sigs.k8s.io/hung annotation, "" if absent:
	// the epoch at which the Pod's agent stopped its worker for making no
	// progress, written with its join of the next epoch.
	Hung string
	// Restarts is the raw jobset.sigs.k8s.io/worker-restarts annotation,
	// "" if absent: how the Pod's agent reports the Pod joined its epoch,
	// and its worker's restarts by tier. A report only (RestartTiers):
	// nothing here decides on it.
	Restarts string
	// Unheld: the Pod does not carry the group-member finalizer yet, so
	// were it deleted now, how it ended could be lost with it. No epoch
	// syncs until every live Pod is held: a worker runs only in a synced
	// epoch, so every worker that runs is held.
	Unheld bool
}

// Snapshot is the state the decision is made on.
type Snapshot struct {
	Synced, Deprecated int32
	// ExpectedPods is the sum over replicatedJobs of replicas * parallelism,
	// minus the indexes the Jobs count complete (from the Jobs' status:
	// the Pods that completed them may be gone).
	ExpectedPods int32
	// Regathering: the controller recreated every Pod (a full restart or a
	// suspension) since the group last synced.
	Regathering bool
	Pods        []Pod
	// MaxRestarts and RestartsUsed (full restarts counted toward the
	// budget plus group restarts in place) bound new group restarts.
	MaxRestarts, RestartsUsed int32
}

// Decision is what the controller writes and reports.
type Decision struct {
	// Synced and Deprecated are the new epochs; equal to the snapshot's when
	// nothing changes.
	Synced, Deprecated int32
	// RestartStarted: this decision deprecates the synced epoch, starting a
	// group restart; Trigger says why.
	RestartStarted bool
	Trigger        string
	// Fenced: the group restart this decision starts has no cause but
	// Pods whose agents fenced at the synced epoch: it is not counted
	// against maxRestarts, and FailedInPlace is empty.
	Fenced bool
	// Hang: the group restart this decision starts was caused by a
	// member whose worker made no progress within the JobSet's timeouts
	// (its agent stopped it and joined the next epoch); counted as any
	// failure, only its reason differs.
	Hang bool
	// FailedInPlace names the Pod whose failure in place (a failure
	// signal, or its restart into the next epoch) started the group
	// restart, when one did: the Pod stays, and so does its node.
	FailedInPlace string
	// RestartCompleted: this decision syncs the epoch that a group restart
	// was waiting for.
	RestartCompleted bool
	// BudgetExceeded: a group restart should start but maxRestarts is
	// spent; the JobSet fails with Message, and the epochs stay.
	BudgetExceeded bool
	Message        string
	// InvalidEpochs are live Pods whose epoch no agent could have written;
	// they are ignored for sync.
	InvalidEpochs []InvalidEpoch
	// LostIndex, when not empty, says which Pod left the group for good
	// (see LostIndex): no epoch decision is made, the JobSet must restart
	// fully.
	LostIndex string
}

// InvalidEpoch names a Pod and what is wrong with its epoch.
type InvalidEpoch struct {
	Pod, Value, Problem string
}

func (i InvalidEpoch) String() string {
	return fmt.Sprintf("Pod %s has epoch %q: %s", i.Pod, i.Value, i.Problem)
}

// RestartInProgress reports whether a group restart started and has not
// synced yet: a full restart now is its escalation, the same failure.
func RestartInProgress(synced, deprecated int32) bool {
	return synced >= 1 && deprecated == synced
}

// LostIndex names a Pod that left the group for good, or returns "": it was
// deleted while its worker ran, its worker exited 0, and its Job counted
// that as completing the index, so no replacement comes. A group that
// synced without it would train on a rank short; only recreating the Jobs
// (a full restart) brings the index back.
func LostIndex(pods []Pod) string {
	for _, p := range pods {
		if p.Left && p.IndexComplete {
			return fmt.Sprintf("Pod %s was deleted while its worker ran and the worker exited 0: its Job counts the index complete and will not replace it", p.Name)
		}
	}
	return ""
}

// Gathering reports whether the group gathers at S+1: its first run, a
// group restart in progress, or the new Pods after a full restart or a
// suspension. Then only a sync moves the epochs, and no failure signal is
// read: a Pod matters by whether it is live and has joined.
func Gathering(synced, deprecated int32, regathering bool) bool {
	return regathering || synced == 0 || RestartInProgress(synced, deprecated)
}

// Decide applies the protocol to one snapshot.
func Decide(s Snapshot) Decision {
	d := Decision{Synced: s.Synced, Deprecated: s.Deprecated}
	if d.LostIndex = LostIndex(s.Pods); d.LostIndex != "" {
		return d // a sync now would be a smaller group
	}
	inProgress := RestartInProgress(s.Synced, s.Deprecated)

	// One pass over the Pods, without copying them: this runs on every
	// Pod event of JobSets with thousands of Pods.
	live, valid, stopping, unheld := int32(0), int32(0), 0, 0
	minEpoch, maxEpoch := int32(0), int32(0)
	for _, p := range s.Pods {
		if p.stopping() {
			stopping++
		}
		if !p.live() {
			continue
		}
		live++
		if p.Unheld {
			unheld++
		}
		if p.Epoch == "" {
			continue
		}
		e, problem := readEpoch(p.Epoch, s.Synced)
		if problem != "" {
			d.InvalidEpochs = append(d.InvalidEpochs, InvalidEpoch{Pod: p.Name, Value: p.Epoch, Problem: problem})
			continue
		}
		if valid == 0 || e < minEpoch {
			minEpoch = e
		}
		maxEpoch = max(maxEpoch, e)
		valid++
	}

	// Sync: every expected live Pod joined the same new epoch and is held,
	// and no Pod of the group is still stopping: its worker may run an
	// older epoch until it ends (a Job deleted by hand goes before its
	// Pods, and its replacement's new Pods join meanwhile).
	if s.ExpectedPods > 0 && live == s.ExpectedPods && valid == live && maxEpoch > s.Synced && minEpoch == maxEpoch && stopping == 0 && unheld == 0 {
		switch {
		case s.Regathering || s.Synced == 0:
		case inProgress:
			d.RestartCompleted = true
		case allFencedAt(s.Pods, maxEpoch, s.Synced):
			// Every member restarted after its own fence: the platform's.
			d.Deprecated, d.RestartStarted, d.RestartCompleted, d.Fenced = s.Synced, true, true, true
			d.Trigger = fmt.Sprintf("every live Pod joined epoch %d before a group restart was seen to start, each after its agent fenced at epoch %d (out of contact with the API server)", maxEpoch, s.Synced)
		default:
			// The epoch moved past a synced group that no reconcile saw
			// break: every member restarted or was replaced meanwhile.
			// Still a group restart, which the budget must count.
			trigger := fmt.Sprintf("every live Pod joined epoch %d before a group restart was seen to start (its members restarted or were replaced)", maxEpoch)
			if s.RestartsUsed >= s.MaxRestarts {
				return d.exceedBudget(s, trigger)
			}
			if hung := hungAt(s.Pods, maxEpoch, s.Synced); hung != "" {
				trigger = fmt.Sprintf("every live Pod joined epoch %d before a group restart was seen to start (its members restarted or were replaced); Pod %s's worker made no progress at epoch %d", maxEpoch, hung, s.Synced)
				d.Hang = true
			}
			d.Deprecated, d.RestartStarted, d.RestartCompleted, d.Trigger = s.Synced, true, true, trigger
		}
		d.Synced = maxEpoch
		return d
	}

	// Deprecate: a Pod is ahead of the synced epoch, or, in sync, a member
	// shows a failure that will bring it there. New Pods that regather
	// after a full restart or a suspension start no group restart; but a
	// Pod that outlived the suspension (Kueue resumed before the Job
	// controller stopped it) still runs S, and only a deprecation of S
	// brings it to S+1 with the new ones. Not counted: the suspension, not
	// a failure, stopped the others.
	if Gathering(s.Synced, s.Deprecated, s.Regathering) {
		if s.Regathering && s.Synced >= 1 && s.Deprecated < s.Synced {
			d.Deprecated = s.Synced
		}
		return d
	}
	// A Pod that joined S+1 after its own fence is no failure; any other
	// cause beside it is, and counts the restart.
	trigger, failedInPlace := "", ""
	if joined := livePodAt(s.Pods, maxEpoch, s.Synced, false); maxEpoch > s.Synced && joined != "" {
		failedInPlace = joined
		trigger = fmt.Sprintf("Pod %s joined epoch %d", joined, maxEpoch)
		if hung := hungAt(s.Pods, maxEpoch, s.Synced); hung != "" {
			failedInPlace = hung
			trigger = fmt.Sprintf("Pod %s joined epoch %d after its worker made no progress within the JobSet's timeouts at epoch %d", hung, maxEpoch, s.Synced)
			d.Hang = true
		}
	} else {
		trigger, failedInPlace = failureTrigger(s.Pods, s.Synced)
	}
	if fenced := livePodAt(s.Pods, maxEpoch, s.Synced, true); trigger == "" && maxEpoch > s.Synced && fenced != "" {
		if left := leftAt(s.Pods, s.Synced); left != "" {
			// A member deleted while its worker ran is a fault of the
			// group's own, which its lost index would otherwise count
			// only once no restart is in progress.
			trigger = fmt.Sprintf("Pod %s joined epoch %d after its agent fenced at epoch %d, and Pod %s was deleted while its worker ran", fenced, maxEpoch, s.Synced, left)
		} else if missing := s.ExpectedPods - membersOrFenced(s.Pods, s.Synced); missing > 0 {
			// A fence keeps its Pod: a member gone (replaced, its failed
			// Pod collected) is a fault of the group's own.
			trigger = fmt.Sprintf("Pod %s joined epoch %d after its agent fenced at epoch %d, and %d member(s) of epoch %d are gone", fenced, maxEpoch, s.Synced, missing, s.Synced)
		} else {
			d.Deprecated, d.RestartStarted, d.Fenced = s.Synced, true, true
			d.Trigger = fmt.Sprintf("Pod %s joined epoch %d after its agent fenced at epoch %d (out of contact with the API server)", fenced, maxEpoch, s.Synced)
			return d
		}
	}
	if trigger == "" {
		return d
	}
	if s.RestartsUsed >= s.MaxRestarts {
		return d.exceedBudget(s, trigger)
	}
	d.Deprecated = s.Synced
	d.RestartStarted = true
	d.Trigger, d.FailedInPlace = trigger, failedInPlace
	return d
}

func (d Decision) exceedBudget(s Snapshot, trigger string) Decision {
	d.BudgetExceeded = true
	d.Message = fmt.Sprintf("%s, but an in-place group restart would exceed failurePolicy.maxRestarts (%d): %d restarts used (full restarts counted toward the limit plus in-place group restarts)",
		trigger, s.MaxRestarts, s.RestartsUsed)
	return d
}

// readEpoch accepts what an agent can write: an epoch (agentspec.ParseEpoch)
// no later than S+1, the epoch after the synced one, which an agent joins.
func readEpoch(raw string, synced int32) (int32, string) {
	e, err := agentspec.ParseEpoch(raw)
	switch {
	case err != nil:
		return 0, err.Error()
	case int64(e) > int64(synced)+1:
		return 0, fmt.Sprintf("above %d, the epoch after the synced one", int64(synced)+1)
	}
	return e, ""
}

// live: the Pod counts toward its group (Live, for a Pod of the API).
func (p Pod) live() bool {
	return !p.Succeeded && !p.Failed && !p.Deleting
}

// stopping: the Pod left its group but its worker may still run: it is
// being deleted and has not ended, or it is still running.
func (p Pod) stopping() bool {
	return (p.Deleting && !p.Succeeded && !p.Failed) || p.StillRunning
}

// at reports whether the Pod reports epoch e.
func (p Pod) at(e int32) bool {
	got, err := agentspec.ParseEpoch(p.Epoch)
	return err == nil && got == e
}

// livePodAt names the first live Pod at epoch whose agent fenced at
// synced (fenced) or did not (!fenced), "" if none.
func livePodAt(pods []Pod, epoch, synced int32, fenced bool) string {
	for _, p := range pods {
		if p.live() && p.at(epoch) && p.fencedAt(synced) == fenced {
			return p.Name
		}
	}
	return ""
}

// leftAt names the first Pod at epoch that left while its worker ran
// (Pod.Left), "" if none.
func leftAt(pods []Pod, epoch int32) string {
	for _, p := range pods {
		if p.Left && p.at(epoch) {
			return p.Name
		}
	}
	return ""
}

// membersOrFenced counts the live Pods still at epoch synced, those that
// finished their work there (their Job may not count the index complete
// yet), and those that joined the next one after their agent fenced at
// synced: the members of the synced group that no fault of their own took
// away.
func membersOrFenced(pods []Pod, synced int32) int32 {
	var n int32
	for _, p := range pods {
		if p.live() && (p.at(synced) || p.at(synced+1) && p.fencedAt(synced)) || p.Succeeded && !p.Left && p.at(synced) {
			n++
		}
	}
	return n
}

// allFencedAt: every live Pod at epoch joined it after its agent fenced at
// synced.
func allFencedAt(pods []Pod, epoch, synced int32) bool {
	return livePodAt(pods, epoch, synced, false) == ""
}

// hungAt names the first live Pod at epoch that joined it after its
// agent stopped its worker for a hang at synced, "" if none. As with the
// fence's record, the admission policy admits the record only with the
// join after the epoch it names.
func hungAt(pods []Pod, epoch, synced int32) string {
	for _, p := range pods {
		if got, err := agentspec.ParseEpoch(p.Hung); p.live() && p.at(epoch) && err == nil && got == synced {
			return p.Name
		}
	}
	return ""
}

// fencedAt reports whether the Pod's agent fenced at epoch e. The admission
// policy admits the record only with the epoch the Pod showed when it was
// written, so a record of e on a Pod past e is its agent's own.
func (p Pod) fencedAt(e int32) bool {
	got, err := agentspec.ParseEpoch(p.Fenced)
	return err == nil && got == e
}

// failureTrigger finds the first sign that a member of the synced group (a
// Pod at epoch S) is lost: it failed, is being deleted, or shows a failure
// signal. Pods of earlier epochs are old news: a failed Pod stays in the API
// long after its replacement joined. So is a Pod that joined S and failed
// before S synced: its replacement at S (live, or finished since) was the
// member. It also names the Pod when it shows a failure signal: a failure
// in place.
func failureTrigger(pods []Pod, synced int32) (trigger, failedInPlace string) {
	replaced := map[string]bool{}
	for _, p := range pods {
		if !p.Failed && !p.Deleting && p.Index != "" && p.at(synced) {
			replaced[p.Index] = true
		}
	}
	for _, p := range pods {
		if p.Succeeded || p.EndsJob || p.IndexComplete || !p.at(synced) {
			continue
		}
		if (p.Failed || p.Deleting) && replaced[p.Index] {
			continue
		}
		switch {
		case p.Failed:
			return fmt.Sprintf("Pod %s failed", p.Name), ""
		case p.Deleting:
			return fmt.Sprintf("Pod %s is being deleted", p.Name), ""
		case p.FailureSignal != "":
			return fmt.Sprintf("Pod %s: %s", p.Name, p.FailureSignal), p.Name
		}
	}
	return "", ""
}
