package inplace

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/fastjobset/jobset/agent"
)

// member models one worker Pod: its epoch annotation (kept across an
// in-place restart, until the new agent overwrites it), the epoch its
// running agent joined (0: restarting, not joined yet), and whether the
// kubelet shows its containers restarting.
type member struct {
	annotation string
	joined     int32
	restarting bool
}

// agentStep applies the decision of the real agent (package agent's Next)
// to the modelled Pod, so that Decide is checked against the agent as it
// ships rather than against a restatement of it that could drift.
func agentStep(t *testing.T, m *member, synced, deprecated int32) {
	t.Helper()
	switch a := agent.Next(m.joined, agent.Epochs{Synced: synced, Deprecated: deprecated}); a {
	case agent.Join:
		m.joined = synced + 1
		m.annotation = strconv.Itoa(int(m.joined))
		m.restarting = false
	case agent.Restart:
		m.joined = 0 // exits with the restart code; the kubelet restarts the Pod
		m.restarting = true
	case agent.Lift, agent.Wait:
		// The barrier is not modelled: the controller does not see it.
	default:
		t.Fatalf("agent.Next returned an unknown action %d", int(a))
	}
}

// TestSimulatedGroupRestarts drives Decide against modelled agents through
// random interleavings of agent steps, controller reconciles and worker
// failures, and checks the protocol's invariants at every step and that the
// group converges once failures stop.
func TestSimulatedGroupRestarts(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 42))
		n := 1 + rng.IntN(6)
		group := make([]member, n)
		synced, deprecated := int32(0), int32(0)
		failures := 0

		reconcile := func() {
			s := Snapshot{Synced: synced, Deprecated: deprecated, ExpectedPods: int32(n), MaxRestarts: 1000}
			for i, m := range group {
				p := Pod{Name: fmt.Sprintf("w-%d", i), Epoch: m.annotation}
				if m.restarting {
					p.FailureSignal = "restarting"
				}
				s.Pods = append(s.Pods, p)
			}
			d := Decide(s)
			switch {
			case d.Synced < synced || d.Deprecated < deprecated:
				t.Fatalf("seed %d: epochs went back: %d/%d -> %d/%d", seed, synced, deprecated, d.Synced, d.Deprecated)
			case d.Deprecated > d.Synced:
				t.Fatalf("seed %d: deprecated %d > synced %d", seed, d.Deprecated, d.Synced)
			case d.Synced > synced+1:
				t.Fatalf("seed %d: synced skipped from %d to %d", seed, synced, d.Synced)
			case len(d.InvalidEpochs) > 0:
				t.Fatalf("seed %d: agents wrote invalid epochs: %v", seed, d.InvalidEpochs)
			}
			if d.Synced != synced {
				for i, m := range group {
					if m.annotation != strconv.Itoa(int(d.Synced)) {
						t.Fatalf("seed %d: synced %d while Pod %d is at %q", seed, d.Synced, i, m.annotation)
					}
				}
			}
			synced, deprecated = d.Synced, d.Deprecated
		}

		for step := 0; step < 400; step++ {
			switch r := rng.IntN(10); {
			case r < 4:
				reconcile()
			case r < 9:
				i := rng.IntN(n)
				agentStep(t, &group[i], synced, deprecated)
			case failures < 3 && synced >= 1:
				// A worker fails: the kubelet restarts its Pod in place.
				i := rng.IntN(n)
				group[i].joined, group[i].restarting = 0, true
				failures++
			}
		}

		// Failures stop: run to a fixed point.
		for round := 0; round < 4*n+8; round++ {
			reconcile()
			for i := range group {
				agentStep(t, &group[i], synced, deprecated)
			}
		}
		reconcile()
		for i, m := range group {
			if m.joined != synced || synced < 1 {
				t.Fatalf("seed %d: did not converge: Pod %d joined %d, synced %d, deprecated %d", seed, i, m.joined, synced, deprecated)
			}
		}
	}
}

// FuzzDecide checks that no snapshot, however malformed its annotations,
// makes Decide break its invariants.
func FuzzDecide(f *testing.F) {
	f.Add(int32(1), int32(0), int32(3), "1,2,1", int32(3), int32(1))
	f.Add(int32(0), int32(0), int32(2), "banana,-1", int32(0), int32(0))
	f.Fuzz(func(t *testing.T, synced, deprecated, expected int32, epochs string, maxRestarts, used int32) {
		if synced < 0 || deprecated < 0 || deprecated > synced || synced == 1<<31-1 {
			return // states the apiserver's schema refuses
		}
		s := Snapshot{Synced: synced, Deprecated: deprecated, ExpectedPods: expected, MaxRestarts: maxRestarts, RestartsUsed: used}
		for i, e := range strings.Split(epochs, ",") {
			s.Pods = append(s.Pods, Pod{Name: strconv.Itoa(i), Epoch: e, FailureSignal: map[bool]string{true: "x"}[i%3 == 0]})
		}
		d := Decide(s)
		if d.Synced < synced || d.Deprecated < deprecated || d.Deprecated > d.Synced || d.Synced > synced+1 {
			t.Fatalf("invariant broken: %+v -> %+v", s, d)
		}
		if d.BudgetExceeded && (d.Synced != synced || d.Deprecated != deprecated) {
			t.Fatalf("a refused restart changed the epochs: %+v", d)
		}
	})
}
