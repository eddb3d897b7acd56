package inplace

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// hungAtEpoch marks Pod i as one whose agent stopped its worker for a hang
// at epoch e and wrote so with its join (agentspec.HungAnnotation).
func hungAtEpoch(pods []Pod, i int, e string) []Pod {
	return with(pods, i, func(p *Pod) { p.Hung = e })
}

// A group restart caused by a hung worker is a failure like any other: it
// counts against maxRestarts and blames the Pod; only its reason differs.
func TestDecideHangRestarts(t *testing.T) {
	cases := map[string]struct {
		snapshot Snapshot
		want     Decision
	}{
		"a Pod whose worker hung at S joined S+1: a counted restart with the reason Hang": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 2, Pods: hungAtEpoch(at("2", "1"), 0, "1"), MaxRestarts: 3},
			want: Decision{Synced: 1, Deprecated: 1, RestartStarted: true, Hang: true, FailedInPlace: "w-0",
				Trigger: "Pod w-0 joined epoch 2 after its worker made no progress within the JobSet's timeouts at epoch 1"},
		},
		"a hung worker beside a worker that exited: the hang is named": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 3, Pods: hungAtEpoch(at("2", "2", "1"), 1, "1"), MaxRestarts: 3},
			want: Decision{Synced: 1, Deprecated: 1, RestartStarted: true, Hang: true, FailedInPlace: "w-1",
				Trigger: "Pod w-1 joined epoch 2 after its worker made no progress within the JobSet's timeouts at epoch 1"},
		},
		"the budget spent: the JobSet fails as on any failure": {
			snapshot: Snapshot{Synced: 2, ExpectedPods: 2, Pods: hungAtEpoch(at("3", "2"), 0, "2"), MaxRestarts: 1, RestartsUsed: 1},
			want: Decision{Synced: 2, BudgetExceeded: true, Hang: true,
				Message: "Pod w-0 joined epoch 3 after its worker made no progress within the JobSet's timeouts at epoch 2, but an in-place group restart would exceed failurePolicy.maxRestarts (1): 1 restarts used (full restarts counted toward the limit plus in-place group restarts)"},
		},
		"a stale hang record (an older epoch) is no hang of this restart": {
			snapshot: Snapshot{Synced: 3, ExpectedPods: 2, Pods: hungAtEpoch(at("4", "3"), 0, "2"), MaxRestarts: 3},
			want:     Decision{Synced: 3, Deprecated: 3, RestartStarted: true, Trigger: "Pod w-0 joined epoch 4", FailedInPlace: "w-0"},
		},
		"every member joined before a reconcile saw it, one after a hang: counted, with the reason Hang": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 2, Pods: hungAtEpoch(at("2", "2"), 1, "1"), MaxRestarts: 3},
			want: Decision{Synced: 2, Deprecated: 1, RestartStarted: true, RestartCompleted: true, Hang: true,
				Trigger: "every live Pod joined epoch 2 before a group restart was seen to start (its members restarted or were replaced); Pod w-1's worker made no progress at epoch 1"},
		},
		"a group restart in progress: a hang record changes nothing": {
			snapshot: Snapshot{Synced: 1, Deprecated: 1, ExpectedPods: 2, Pods: hungAtEpoch(at("2", "1"), 0, "1"), MaxRestarts: 3, RestartsUsed: 1},
			want:     Decision{Synced: 1, Deprecated: 1},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, Decide(c.snapshot)); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}
