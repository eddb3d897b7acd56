package inplace

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fencedAt marks Pod i as one whose agent fenced at epoch e and wrote so
// with its join (agentspec.FencedAnnotation).
func fencedAt(pods []Pod, i int, e string) []Pod {
	return with(pods, i, func(p *Pod) { p.Fenced = e })
}

// A group restart whose only cause is agents that fenced (they lost contact
// with the API server and stopped their workers) is the platform's: it is
// not counted against maxRestarts and blames no Pod for failing in place.
// Every other cause beside it still counts, once.
func TestDecideFencedRestarts(t *testing.T) {
	cases := map[string]struct {
		snapshot Snapshot
		want     Decision
	}{
		"a Pod that fenced at S joined S+1: the restart starts, uncounted, no Pod blamed": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 2, Pods: fencedAt(at("2", "1"), 0, "1"), MaxRestarts: 3},
			want: Decision{Synced: 1, Deprecated: 1, RestartStarted: true, Fenced: true,
				Trigger: "Pod w-0 joined epoch 2 after its agent fenced at epoch 1 (out of contact with the API server)"},
		},
		"two Pods fenced at S joined S+1: one uncounted restart": {
			snapshot: Snapshot{Synced: 4, Deprecated: 3, ExpectedPods: 3, Pods: fencedAt(fencedAt(at("5", "5", "4"), 0, "4"), 1, "4"), MaxRestarts: 3, RestartsUsed: 1},
			want: Decision{Synced: 4, Deprecated: 4, RestartStarted: true, Fenced: true,
				Trigger: "Pod w-0 joined epoch 5 after its agent fenced at epoch 4 (out of contact with the API server)"},
		},
		"the budget spent, a fence alone still restarts the group: it costs nothing": {
			snapshot: Snapshot{Synced: 2, ExpectedPods: 2, Pods: fencedAt(at("3", "2"), 0, "2"), MaxRestarts: 3, RestartsUsed: 3},
			want: Decision{Synced: 2, Deprecated: 2, RestartStarted: true, Fenced: true,
				Trigger: "Pod w-0 joined epoch 3 after its agent fenced at epoch 2 (out of contact with the API server)"},
		},
		"a fenced Pod and a worker that failed at the same moment: counted, the failed one blamed": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 3, MaxRestarts: 3,
				Pods: with(fencedAt(at("2", "1", "1"), 0, "1"), 2, func(p *Pod) { p.FailureSignal = "container worker terminated with exit code 1" })},
			want: Decision{Synced: 1, Deprecated: 1, RestartStarted: true, Trigger: "Pod w-2: container worker terminated with exit code 1", FailedInPlace: "w-2"},
		},
		"a fenced Pod and another that joined S+1 without a fence: counted, the other blamed": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 3, Pods: fencedAt(at("2", "2", "1"), 0, "1"), MaxRestarts: 3},
			want:     Decision{Synced: 1, Deprecated: 1, RestartStarted: true, Trigger: "Pod w-1 joined epoch 2", FailedInPlace: "w-1"},
		},
		"a fenced Pod and a member that failed: counted": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 3, MaxRestarts: 3,
				Pods: with(fencedAt(at("2", "1", "1"), 0, "1"), 1, func(p *Pod) { p.Failed = true })},
			want: Decision{Synced: 1, Deprecated: 1, RestartStarted: true, Trigger: "Pod w-1 failed"},
		},
		"a fenced Pod and a member deleted while its worker ran, which exited 0: counted": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 3, MaxRestarts: 3,
				Pods: with(fencedAt(at("2", "1", "1"), 0, "1"), 1, func(p *Pod) { p.Epoch, p.Succeeded, p.Deleting, p.Left = "1", true, true, true })},
			want: Decision{Synced: 1, Deprecated: 1, RestartStarted: true,
				Trigger: "Pod w-0 joined epoch 2 after its agent fenced at epoch 1, and Pod w-1 was deleted while its worker ran"},
		},
		"a fenced Pod and a member replaced, its failed Pod gone: counted": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 3, MaxRestarts: 3,
				Pods: append(fencedAt(at("2", "1"), 0, "1"), Pod{Name: "w-2b", Index: "2"})},
			want: Decision{Synced: 1, Deprecated: 1, RestartStarted: true,
				Trigger: "Pod w-0 joined epoch 2 after its agent fenced at epoch 1, and 1 member(s) of epoch 1 are gone"},
		},
		"a fenced Pod and a member that finished its work, its index not yet counted complete: uncounted": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 3, MaxRestarts: 3,
				Pods: with(fencedAt(at("2", "1", "1"), 0, "1"), 1, func(p *Pod) { p.Succeeded = true })},
			want: Decision{Synced: 1, Deprecated: 1, RestartStarted: true, Fenced: true,
				Trigger: "Pod w-0 joined epoch 2 after its agent fenced at epoch 1 (out of contact with the API server)"},
		},
		"a fenced Pod and a member being deleted: counted": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 3, MaxRestarts: 3,
				Pods: with(fencedAt(at("2", "1", "1"), 0, "1"), 1, func(p *Pod) { p.Deleting = true })},
			want: Decision{Synced: 1, Deprecated: 1, RestartStarted: true, Trigger: "Pod w-1 is being deleted"},
		},
		"a fenced Pod beside a real failure, the budget spent: the JobSet fails": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 3, MaxRestarts: 1, RestartsUsed: 1, Pods: fencedAt(at("2", "2", "1"), 0, "1")},
			want: Decision{Synced: 1, BudgetExceeded: true,
				Message: "Pod w-1 joined epoch 2, but an in-place group restart would exceed failurePolicy.maxRestarts (1): 1 restarts used (full restarts counted toward the limit plus in-place group restarts)"},
		},
		"a stale fence record (an older epoch) is no fence of this one: counted": {
			snapshot: Snapshot{Synced: 3, ExpectedPods: 2, Pods: fencedAt(at("4", "3"), 0, "2"), MaxRestarts: 3},
			want:     Decision{Synced: 3, Deprecated: 3, RestartStarted: true, Trigger: "Pod w-0 joined epoch 4", FailedInPlace: "w-0"},
		},
		"a fence record that is no epoch: counted": {
			snapshot: Snapshot{Synced: 3, ExpectedPods: 2, Pods: fencedAt(at("4", "3"), 0, "03"), MaxRestarts: 3},
			want:     Decision{Synced: 3, Deprecated: 3, RestartStarted: true, Trigger: "Pod w-0 joined epoch 4", FailedInPlace: "w-0"},
		},
		"a Pod that fenced and was then marked Failed (its node lost): its record blames nothing, the loss counts": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 2, MaxRestarts: 3,
				Pods: with(fencedAt(at("2", "1"), 0, "1"), 0, func(p *Pod) { p.Failed, p.Epoch = true, "1" })},
			want: Decision{Synced: 1, Deprecated: 1, RestartStarted: true, Trigger: "Pod w-0 failed"},
		},
		"every member fenced and joined before a reconcile saw the restart: synced, uncounted": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 2, Pods: fencedAt(fencedAt(at("2", "2"), 0, "1"), 1, "1"), MaxRestarts: 3},
			want: Decision{Synced: 2, Deprecated: 1, RestartStarted: true, RestartCompleted: true, Fenced: true,
				Trigger: "every live Pod joined epoch 2 before a group restart was seen to start, each after its agent fenced at epoch 1 (out of contact with the API server)"},
		},
		"every member joined before a reconcile saw it, one without a fence: counted": {
			snapshot: Snapshot{Synced: 1, ExpectedPods: 2, Pods: fencedAt(at("2", "2"), 0, "1"), MaxRestarts: 3},
			want: Decision{Synced: 2, Deprecated: 1, RestartStarted: true, RestartCompleted: true,
				Trigger: "every live Pod joined epoch 2 before a group restart was seen to start (its members restarted or were replaced)"},
		},
		"a group restart in progress: a fence record changes nothing": {
			snapshot: Snapshot{Synced: 1, Deprecated: 1, ExpectedPods: 2, Pods: fencedAt(at("2", "1"), 0, "1"), MaxRestarts: 3, RestartsUsed: 1},
			want:     Decision{Synced: 1, Deprecated: 1},
		},
		"regathering after a full restart: a fence record changes nothing": {
			snapshot: Snapshot{Synced: 1, Deprecated: 1, Regathering: true, ExpectedPods: 2, Pods: fencedAt(at("2", "2"), 0, "1"), MaxRestarts: 3, RestartsUsed: 1},
			want:     Decision{Synced: 2, Deprecated: 1},
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
