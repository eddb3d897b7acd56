package inplace

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// at builds live Pods w-0, w-1, ... at the given raw epochs.
func at(epochs ...string) []Pod {
	pods := make([]Pod, len(epochs))
	for i, e := range epochs {
		pods[i] = Pod{Name: fmt.Sprintf("w-%d", i), Index: strconv.Itoa(i), Epoch: e}
	}
	return pods
}

func with(pods []Pod, i int, mutate func(*Pod)) []Pod {
	out := append([]Pod(nil), pods...)
	mutate(&out[i])
	return out
}

func TestDecide(t *testing.T) {
	cases := map[string]struct {
		snapshot Snapshot
		want     Decision
	}{
		// The four cases of the KEP's test plan.
		"all Pods in sync: no status write": {
			snapshot: Snapshot{Synced: 2, Deprecated: 1, ExpectedPods: 3, Pods: at("2", "2", "2"), MaxRestarts: 5, RestartsUsed: 1},
			want:     Decision{Synced: 2, Deprecated: 1},
		},
		"all Pods just became in sync: syncedEpoch set": {
			snapshot: Snapshot{Synced: 0, ExpectedPods: 3, Pods: at("1", "1", "1")},
			want:     Decision{Synced: 1},
		},
		"in sync, then one Pod restarted into a new epoch: deprecatedEpoch set": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 3, Pods: at("1", "2", "1"), MaxRestarts: 3},
			want:     Decision{Synced: 1, Deprecated: 1, RestartStarted: true, Trigger: "Pod w-1 joined epoch 2", FailedInPlace: "w-1"},
		},
		"lost sync, and a second Pod reached the new epoch but not all: no status write": {
			snapshot: Snapshot{Synced: 1, Deprecated: 1, ExpectedPods: 3, Pods: at("2", "2", "1"), MaxRestarts: 3, RestartsUsed: 1},
			want:     Decision{Synced: 1, Deprecated: 1},
		},

		// kubectl delete job deletes in the background: the Job goes
		// before its Pods, the controller recreates it at once, and its new
		// Pods join while the old ones' workers still run their grace
		// period at the old epoch.
		"a Job deleted by hand: its old Pod still stops while its new Pod and the peers joined: no sync": {
			snapshot: Snapshot{Synced: 1, Deprecated: 1, ExpectedPods: 2, MaxRestarts: 3, RestartsUsed: 1,
				Pods: append(with(at("2", "1"), 1, func(p *Pod) { p.Deleting = true }), Pod{Name: "w-1b", Index: "1", Epoch: "2"})},
			want: Decision{Synced: 1, Deprecated: 1},
		},
		"a Job deleted by hand: once its old Pod ended, the group syncs": {
			snapshot: Snapshot{Synced: 1, Deprecated: 1, ExpectedPods: 2, MaxRestarts: 3, RestartsUsed: 1,
				Pods: append(with(at("2", "1"), 1, func(p *Pod) { p.Deleting, p.Failed = true, true }), Pod{Name: "w-1b", Index: "1", Epoch: "2"})},
			want: Decision{Synced: 2, Deprecated: 1, RestartCompleted: true},
		},

		// A Pod that failed in place again and again on its node is marked
		// Failed by the controller, for its Job to replace it elsewhere, as
		// part of the group restart its last failure started. Its agent may
		// have joined the next epoch before the mark, and its kubelet may
		// write its running phase back once before it stops it.
		"a Pod marked Failed to replace it off its node joined, its peer too: no sync without its replacement": {
			snapshot: Snapshot{Synced: 3, Deprecated: 3, ExpectedPods: 2, MaxRestarts: 5, RestartsUsed: 3,
				Pods: with(at("4", "4"), 0, func(p *Pod) { p.Failed = true })},
			want: Decision{Synced: 3, Deprecated: 3},
		},
		"its replacement joined while the marked Pod still runs: no sync": {
			snapshot: Snapshot{Synced: 3, Deprecated: 3, ExpectedPods: 2, MaxRestarts: 5, RestartsUsed: 3,
				Pods: append(with(at("4", "4"), 0, func(p *Pod) { p.Failed, p.StillRunning = true, true }), Pod{Name: "w-0b", Index: "0", Epoch: "4"})},
			want: Decision{Synced: 3, Deprecated: 3},
		},
		"its replacement joined and the marked Pod stopped: the group syncs, no new restart": {
			snapshot: Snapshot{Synced: 3, Deprecated: 3, ExpectedPods: 2, MaxRestarts: 5, RestartsUsed: 3,
				Pods: append(with(at("4", "4"), 0, func(p *Pod) { p.Failed = true }), Pod{Name: "w-0b", Index: "0", Epoch: "4"})},
			want: Decision{Synced: 4, Deprecated: 3, RestartCompleted: true},
		},
		"synced with its replacement, the marked Pod at the synced epoch is old news": {
			snapshot: Snapshot{Synced: 4, Deprecated: 3, ExpectedPods: 2, MaxRestarts: 5, RestartsUsed: 3,
				Pods: append(with(at("4", "4"), 0, func(p *Pod) { p.Failed = true }), Pod{Name: "w-0b", Index: "0", Epoch: "4"})},
			want: Decision{Synced: 4, Deprecated: 3},
		},

		// A Pod the controller has not put its group-member finalizer on
		// (created while the controller was away, or by a Job of an older
		// version): its worker must not run before it is held, or a
		// deletion that stops it could leave no trace.
		"every Pod joined, one is not held yet: no sync": {
			snapshot: Snapshot{Synced: 1, Deprecated: 1, ExpectedPods: 2, MaxRestarts: 3, RestartsUsed: 1,
				Pods: with(at("2", "2"), 1, func(p *Pod) { p.Unheld = true })},
			want: Decision{Synced: 1, Deprecated: 1},
		},
		"in sync, a Pod not held yet: nothing to decide": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 2, MaxRestarts: 3,
				Pods: with(at("1", "1"), 1, func(p *Pod) { p.Unheld = true })},
			want: Decision{Synced: 1},
		},

		// A member deleted while it ran whose worker
		// exited 0; its Job counted the index complete.
		"a Pod that left while running, its index counted complete: no sync of the smaller group": {
			snapshot: Snapshot{Synced: 1, Deprecated: 1, ExpectedPods: 2, MaxRestarts: 3, RestartsUsed: 1,
				Pods: with(at("2", "2", "1"), 2, func(p *Pod) { p.Succeeded, p.Deleting, p.Left, p.IndexComplete = true, true, true, true })},
			want: Decision{Synced: 1, Deprecated: 1,
				LostIndex: "Pod w-2 was deleted while its worker ran and the worker exited 0: its Job counts the index complete and will not replace it"},
		},
		"a Pod that left while running, its Job counted it failed: the replacement syncs": {
			snapshot: Snapshot{Synced: 1, Deprecated: 1, ExpectedPods: 3, MaxRestarts: 3, RestartsUsed: 1,
				Pods: append(with(at("2", "2", "1"), 2, func(p *Pod) { p.Succeeded, p.Deleting, p.Left = true, true, true }),
					Pod{Name: "w-2b", Index: "2", Epoch: "2"})},
			want: Decision{Synced: 2, Deprecated: 1, RestartCompleted: true},
		},

		// Completing a group restart.
		"every Pod reached the new epoch: the group restart completes": {
			snapshot: Snapshot{Synced: 1, Deprecated: 1, ExpectedPods: 3, Pods: at("2", "2", "2"), MaxRestarts: 3, RestartsUsed: 1},
			want:     Decision{Synced: 2, Deprecated: 1, RestartCompleted: true},
		},
		"first run: Pods still joining, nothing to deprecate": {
			snapshot: Snapshot{Synced: 0, ExpectedPods: 3, Pods: at("1", "", "1")},
			want:     Decision{},
		},
		"a missing Pod holds the sync": {
			snapshot: Snapshot{Synced: 0, ExpectedPods: 3, Pods: at("1", "1")},
			want:     Decision{},
		},

		// Succeeded and failed Pods.
		"succeeded Pods leave the epoch set; their completed indexes leave the expected count": {
			snapshot: Snapshot{Synced: 1, Deprecated: 1, ExpectedPods: 2, MaxRestarts: 3, RestartsUsed: 1,
				Pods: with(at("2", "2", "1"), 2, func(p *Pod) { p.Succeeded = true })},
			want: Decision{Synced: 2, Deprecated: 1, RestartCompleted: true},
		},
		// The expected count came from Pod objects, so a
		// completed Pod that the Pod GC removed held the group forever.
		"a completed index whose Pod is gone still leaves the expected count": {
			snapshot: Snapshot{Synced: 1, Deprecated: 1, ExpectedPods: 2, MaxRestarts: 3, RestartsUsed: 1, Pods: at("2", "2")},
			want:     Decision{Synced: 2, Deprecated: 1, RestartCompleted: true},
		},
		"a failed Pod is not live; its replacement joins at S+1 and the group syncs": {
			snapshot: Snapshot{Synced: 1, Deprecated: 1, ExpectedPods: 2, MaxRestarts: 3, RestartsUsed: 1,
				Pods: append(with(at("1"), 0, func(p *Pod) { p.Failed = true }), at("2", "2")...)},
			want: Decision{Synced: 2, Deprecated: 1, RestartCompleted: true},
		},

		// Fast failure detection.
		"in sync, a Pod at S shows a failure signal: deprecate at once": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 2, MaxRestarts: 3,
				Pods: with(at("1", "1"), 1, func(p *Pod) { p.FailureSignal = "container worker terminated with exit code 1" })},
			want: Decision{Synced: 1, Deprecated: 1, RestartStarted: true, Trigger: "Pod w-1: container worker terminated with exit code 1", FailedInPlace: "w-1"},
		},
		"in sync, a Pod failed: deprecate at once": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 2, MaxRestarts: 3,
				Pods: with(at("1", "1"), 0, func(p *Pod) { p.Failed = true })},
			want: Decision{Synced: 1, Deprecated: 1, RestartStarted: true, Trigger: "Pod w-0 failed"},
		},
		"in sync, a Pod is being deleted: deprecate at once": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 2, MaxRestarts: 3,
				Pods: with(at("1", "1"), 0, func(p *Pod) { p.Deleting = true })},
			want: Decision{Synced: 1, Deprecated: 1, RestartStarted: true, Trigger: "Pod w-0 is being deleted"},
		},
		// A Pod that joined the gather and then failed was
		// taken for a lost member once the group synced.
		"a Pod that joined S and failed before S synced is old news: its replacement was the member": {
			snapshot: Snapshot{Synced: 2, Deprecated: 1, ExpectedPods: 2, MaxRestarts: 3, RestartsUsed: 1,
				Pods: append(with(at("2"), 0, func(p *Pod) { p.Failed = true; p.Name = "old" }), at("2", "2")...)},
			want: Decision{Synced: 2, Deprecated: 1},
		},
		"a Pod that failed in an earlier epoch is old news": {
			snapshot: Snapshot{Synced: 2, Deprecated: 1, ExpectedPods: 2, MaxRestarts: 3, RestartsUsed: 1,
				Pods: append(with(at("1"), 0, func(p *Pod) { p.Failed = true; p.Name = "old" }), at("2", "2")...)},
			want: Decision{Synced: 2, Deprecated: 1},
		},
		"a failure that ends its Job (podFailurePolicy FailJob) starts no group restart": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 2, MaxRestarts: 3,
				Pods: with(at("1", "1"), 1, func(p *Pod) {
					p.FailureSignal = "container worker terminated with exit code 42"
					p.EndsJob = true
				})},
			want: Decision{Synced: 1},
		},
		"a Failed Pod whose failure ends its Job starts no group restart either": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 2, MaxRestarts: 3,
				Pods: with(at("1", "1"), 1, func(p *Pod) { p.Failed, p.EndsJob = true, true })},
			want: Decision{Synced: 1},
		},
		"a failure signal before the first sync starts nothing": {
			snapshot: Snapshot{Synced: 0, ExpectedPods: 2, MaxRestarts: 3,
				Pods: with(at("1", "1"), 1, func(p *Pod) { p.FailureSignal = "container worker terminated with exit code 1" })},
			want: Decision{Synced: 1},
		},
		"a failure signal on a Pod already past S changes nothing": {
			snapshot: Snapshot{Synced: 1, Deprecated: 0, ExpectedPods: 3, MaxRestarts: 3,
				Pods: with(at("1", "1", ""), 2, func(p *Pod) { p.FailureSignal = "its containers are restarting" })},
			want: Decision{Synced: 1},
		},

		// Every member restarted while the controller was
		// down; the trigger's exit code was gone, so the sync was plain.
		"every member restarted or was replaced before a reconcile saw it: counted as a group restart": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 2, MaxRestarts: 3, Pods: at("2", "2")},
			want: Decision{Synced: 2, Deprecated: 1, RestartStarted: true, RestartCompleted: true,
				Trigger: "every live Pod joined epoch 2 before a group restart was seen to start (its members restarted or were replaced)"},
		},
		"the same, with the budget spent: fail": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 2, MaxRestarts: 0, Pods: at("2", "2")},
			want: Decision{Synced: 1, BudgetExceeded: true,
				Message: "every live Pod joined epoch 2 before a group restart was seen to start (its members restarted or were replaced), but an in-place group restart would exceed failurePolicy.maxRestarts (0): 0 restarts used (full restarts counted toward the limit plus in-place group restarts)"},
		},

		// Pods the controller recreated (full restart, resume) are no group restart.
		"after a full restart or a resume, new Pods gather at S+1; S is deprecated, uncounted": {
			snapshot: Snapshot{Synced: 3, Deprecated: 2, ExpectedPods: 3, Regathering: true, Pods: at("4", "", "4"), MaxRestarts: 0, RestartsUsed: 0},
			want:     Decision{Synced: 3, Deprecated: 3},
		},
		"a Pod that outlived the suspension still runs S: deprecated with it, so that it regathers too": {
			snapshot: Snapshot{Synced: 3, Deprecated: 2, ExpectedPods: 3, Regathering: true, Pods: at("4", "3", ""), MaxRestarts: 0, RestartsUsed: 0},
			want:     Decision{Synced: 3, Deprecated: 3},
		},
		"and sync there, completing no group restart": {
			snapshot: Snapshot{Synced: 3, Deprecated: 2, ExpectedPods: 3, Regathering: true, Pods: at("4", "4", "4")},
			want:     Decision{Synced: 4, Deprecated: 2},
		},
		"a full restart that escalated a group restart: its Pods sync without completing it": {
			snapshot: Snapshot{Synced: 3, Deprecated: 3, ExpectedPods: 3, Regathering: true, Pods: at("4", "4", "4")},
			want:     Decision{Synced: 4, Deprecated: 3},
		},

		// The restart budget.
		"maxRestarts 0: the first group restart fails the JobSet": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 2, Pods: at("1", "2"), MaxRestarts: 0},
			want: Decision{Synced: 1, BudgetExceeded: true,
				Message: "Pod w-1 joined epoch 2, but an in-place group restart would exceed failurePolicy.maxRestarts (0): 0 restarts used (full restarts counted toward the limit plus in-place group restarts)"},
		},
		"maxRestarts N: the N-th group restart may start": {
			snapshot: Snapshot{Synced: 3, Deprecated: 2, ExpectedPods: 2, Pods: at("3", "4"), MaxRestarts: 3, RestartsUsed: 2},
			want:     Decision{Synced: 3, Deprecated: 3, RestartStarted: true, Trigger: "Pod w-1 joined epoch 4", FailedInPlace: "w-1"},
		},
		"maxRestarts N: the (N+1)-th fails": {
			snapshot: Snapshot{Synced: 4, Deprecated: 3, ExpectedPods: 2, Pods: at("4", "5"), MaxRestarts: 3, RestartsUsed: 3},
			want: Decision{Synced: 4, Deprecated: 3, BudgetExceeded: true,
				Message: "Pod w-1 joined epoch 5, but an in-place group restart would exceed failurePolicy.maxRestarts (3): 3 restarts used (full restarts counted toward the limit plus in-place group restarts)"},
		},

		// Invalid epochs: reported, ignored for sync, never fatal.
		"invalid epochs are reported and hold the sync": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 4, Pods: at("1", "banana", "0", "7")},
			want: Decision{Synced: 1, InvalidEpochs: []InvalidEpoch{
				{Pod: "w-1", Value: "banana", Problem: "not a decimal int32"},
				{Pod: "w-2", Value: "0", Problem: "below 1, the first epoch"},
				{Pod: "w-3", Value: "7", Problem: "above 2, the epoch after the synced one"},
			}},
		},
		"an invalid epoch on a failed Pod is not reported: only live Pods count": {
			snapshot: Snapshot{Synced: 1, Deprecated: 1, ExpectedPods: 1, MaxRestarts: 3, RestartsUsed: 1,
				Pods: append(with(at("banana"), 0, func(p *Pod) { p.Failed = true; p.Name = "old" }), at("2")...)},
			want: Decision{Synced: 2, Deprecated: 1, RestartCompleted: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Decide(tc.snapshot)); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}
