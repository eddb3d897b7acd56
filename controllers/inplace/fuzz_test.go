package inplace

import (
	"strconv"
	"strings"
	"testing"
)

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
