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
//   - Sync: every expected live Pod reports the same epoch e > S: S := e.
//   - Deprecate: otherwise, some live Pod reports m > S: D := max(D, m-1).
//     (m <= S+1, so this sets D := S: every Pod still at S restarts.)
//   - Fast failure detection: in sync (S >= 1, D < S), a Pod at S failed,
//     is being deleted or shows a lasting failure signal: D := S at once,
//     without waiting for the failed Pod's agent to come back at S+1.
//     Only when some live Pod is still at S or below: Pods that all arrive
//     at S+1 (after a full restart or a resume) gather and sync without a
//     group restart.
//   - Budget: a group restart that starts counts toward maxRestarts; one
//     beyond it fails the JobSet instead.
package inplace

import (
	"fmt"
	"strconv"
	"strings"
)

// Pod is what the protocol reads of one Pod of the JobSet's current Jobs.
type Pod struct {
	Name string
	// Epoch is the raw jobset.sigs.k8s.io/epoch annotation, "" if absent.
	Epoch string
	// Succeeded Pods finished their work: they leave both the expected
	// count and the epoch set, so that a late group restart cannot wait for
	// them forever.
	Succeeded bool
	// Failed Pods (and Pods being deleted) are not live: the Job controller
	// replaces them, and the replacement joins at S+1.
	Failed   bool
	Deleting bool
	// EndsJob: the Pod's failure matches a podFailurePolicy rule that fails
	// its Job; the Job's failure, not a group restart, answers it.
	EndsJob bool
	// FailureSignal, when not empty, describes a lasting sign that the
	// Pod's containers failed or are restarting since the group synced.
	FailureSignal string
}

// Snapshot is the state the decision is made on.
type Snapshot struct {
	Synced, Deprecated int32
	// ExpectedPods is the sum over replicatedJobs of replicas * parallelism.
	ExpectedPods int32
	Pods         []Pod
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
}

// InvalidEpoch names a Pod and what is wrong with its epoch.
type InvalidEpoch struct {
	Pod, Value, Problem string
}

func (i InvalidEpoch) String() string {
	return fmt.Sprintf("Pod %s has epoch %q: %s", i.Pod, i.Value, i.Problem)
}

// Decide applies the protocol to one snapshot.
func Decide(s Snapshot) Decision {
	d := Decision{Synced: s.Synced, Deprecated: s.Deprecated}

	// One pass over the Pods, without copying them: this runs on every
	// Pod event of JobSets with thousands of Pods.
	expected, live, valid := s.ExpectedPods, int32(0), int32(0)
	minEpoch, maxEpoch := int32(0), int32(0)
	memberLeft := false // some live Pod is still at S or below
	for _, p := range s.Pods {
		switch {
		case p.Succeeded:
			expected--
			continue
		case p.Failed || p.Deleting:
			continue
		}
		live++
		if p.Epoch == "" {
			continue
		}
		e, problem := parseEpoch(p.Epoch, s.Synced)
		if problem != "" {
			d.InvalidEpochs = append(d.InvalidEpochs, InvalidEpoch{Pod: p.Name, Value: p.Epoch, Problem: problem})
			continue
		}
		if valid == 0 || e < minEpoch {
			minEpoch = e
		}
		maxEpoch = max(maxEpoch, e)
		memberLeft = memberLeft || e <= s.Synced
		valid++
	}

	// Sync: every expected live Pod joined the same new epoch.
	if expected > 0 && live == expected && valid == live && maxEpoch > s.Synced && minEpoch == maxEpoch {
		inRestart := s.Synced >= 1 && s.Deprecated == s.Synced
		// Every member restarted before any reconcile saw it (a coalesced
		// burst): still a group restart, which the budget must count.
		if unseen := signalledPod(s.Pods); s.Synced >= 1 && !inRestart && unseen != "" {
			if s.RestartsUsed >= s.MaxRestarts {
				return d.exceedBudget(s, unseen)
			}
			d.Deprecated, d.RestartStarted, d.Trigger = s.Synced, true, unseen
			inRestart = true
		}
		d.Synced = maxEpoch
		d.RestartCompleted = inRestart
		return d
	}

	// Deprecate: a Pod is ahead of the synced epoch, or, in sync, a Pod shows
	// a failure that will bring it there.
	trigger := ""
	if maxEpoch > s.Synced {
		trigger = fmt.Sprintf("Pod %s joined epoch %d", livePodAt(s.Pods, maxEpoch, s.Synced), maxEpoch)
	} else if s.Synced >= 1 && s.Deprecated < s.Synced {
		trigger = failureTrigger(s.Pods, s.Synced)
	}
	// Only members of the synced group need deprecating. When no live Pod
	// is at S or below (a full restart or a resume replaced them all), the
	// new Pods simply gather at S+1 and sync: no group restart happens.
	if trigger == "" || s.Deprecated >= s.Synced || !memberLeft {
		return d
	}
	if s.RestartsUsed >= s.MaxRestarts {
		return d.exceedBudget(s, trigger)
	}
	d.Deprecated = s.Synced
	d.RestartStarted = true
	d.Trigger = trigger
	return d
}

func (d Decision) exceedBudget(s Snapshot, trigger string) Decision {
	d.BudgetExceeded = true
	d.Message = fmt.Sprintf("%s, but an in-place group restart would exceed failurePolicy.maxRestarts (%d): %d restarts used (full restarts counted toward the limit plus in-place group restarts)",
		trigger, s.MaxRestarts, s.RestartsUsed)
	return d
}

// signalledPod describes the first live Pod with a failure signal, or "".
func signalledPod(pods []Pod) string {
	for _, p := range pods {
		if !p.Succeeded && !p.Failed && !p.Deleting && !p.EndsJob && p.FailureSignal != "" {
			return fmt.Sprintf("Pod %s: %s", p.Name, p.FailureSignal)
		}
	}
	return ""
}

// parseEpoch accepts what an agent can write: an integer from 1 (the first
// epoch) to S+1 (an agent joins the epoch after the synced one).
func parseEpoch(raw string, synced int32) (int32, string) {
	e, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 32)
	switch {
	case err != nil:
		return 0, "not a decimal int32"
	case e < 1:
		return 0, "below 1, the first epoch"
	case e > int64(synced)+1:
		return 0, fmt.Sprintf("above %d, the epoch after the synced one", int64(synced)+1)
	}
	return int32(e), ""
}

func livePodAt(pods []Pod, epoch, synced int32) string {
	for _, p := range pods {
		if p.Succeeded || p.Failed || p.Deleting {
			continue
		}
		if e, problem := parseEpoch(p.Epoch, synced); problem == "" && e == epoch {
			return p.Name
		}
	}
	return ""
}

// failureTrigger finds the first sign that a member of the synced group (a
// Pod at epoch S) is lost: it failed, is being deleted, or shows a failure
// signal. Pods of earlier epochs are old news: a failed Pod stays in the API
// long after its replacement joined.
func failureTrigger(pods []Pod, synced int32) string {
	member := strconv.Itoa(int(synced))
	for _, p := range pods {
		if p.Succeeded || p.EndsJob || p.Epoch != member {
			continue
		}
		switch {
		case p.Failed:
			return fmt.Sprintf("Pod %s failed", p.Name)
		case p.Deleting:
			return fmt.Sprintf("Pod %s is being deleted", p.Name)
		case p.FailureSignal != "":
			return fmt.Sprintf("Pod %s: %s", p.Name, p.FailureSignal)
		}
	}
	return ""
}
