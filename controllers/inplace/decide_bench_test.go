package inplace

import (
	"fmt"
	"testing"
)

// BenchmarkDecide measures the decision over N Pods in the two shapes a
// reconcile meets most: a synced group (nothing to do) and a group restart
// half done.
func BenchmarkDecide(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		synced := Snapshot{Synced: 3, Deprecated: 2, ExpectedPods: int32(n), MaxRestarts: 10, RestartsUsed: 2}
		restarting := Snapshot{Synced: 3, Deprecated: 3, ExpectedPods: int32(n), MaxRestarts: 10, RestartsUsed: 3}
		for i := range n {
			name := fmt.Sprintf("trainer-workers-%d-0", i)
			synced.Pods = append(synced.Pods, Pod{Name: name, Epoch: "3"})
			epoch := "3"
			if i%2 == 0 {
				epoch = "4"
			}
			restarting.Pods = append(restarting.Pods, Pod{Name: name, Epoch: epoch})
		}
		for shape, s := range map[string]Snapshot{"synced": synced, "restarting": restarting} {
			b.Run(fmt.Sprintf("pods=%d/%s", n, shape), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_ = Decide(s)
				}
			})
		}
	}
}
