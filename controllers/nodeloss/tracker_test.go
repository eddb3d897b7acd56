package nodeloss

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

func TestTracker(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	renewedAt := func(node string, at time.Time) *coordinationv1.Lease { return leaseRenewedAt(node, at, 40) }
	clock := testingclock.NewFakePassiveClock(start)
	tr := NewTracker(clock, 15*time.Second)
	informer := tr.NewTerm()
	// Node clocks are read nowhere: a renewTime far in the future or past
	// counts as a renewal when it changes, at the controller's time.
	nodeClock := start.Add(time.Hour)
	renew := func(nodes ...string) {
		nodeClock = nodeClock.Add(time.Second)
		for _, n := range nodes {
			informer.Observe(renewedAt(n, nodeClock))
		}
	}
	expect := func(node string, want time.Duration) {
		t.Helper()
		silence, interval, known := tr.Silence(node)
		if !known || silence != want || interval != 10*time.Second {
			t.Errorf("Silence(%s) = %s, %s, %v; want %s, 10s, true", node, silence, interval, known, want)
		}
	}
	step := func(d time.Duration) { clock.SetTime(clock.Now().Add(d)) }

	renew("a", "b")
	step(5 * time.Second)
	expect("a", 5*time.Second)
	informer.Observe(renewedAt("a", nodeClock)) // listed again, not renewed
	expect("a", 5*time.Second)

	// b goes silent while a renews every 10 s.
	step(5 * time.Second)
	renew("a")
	for range 2 {
		step(10 * time.Second)
		renew("a")
	}
	expect("a", 0)
	expect("b", 30*time.Second)

	// The API server goes away for 20 s: nobody renews. The controller,
	// seeing no renewal at all, counts no silence meanwhile...
	step(20 * time.Second)
	expect("b", 0)
	// ...and once renewals come again, the silence counts from then.
	renew("a")
	step(3 * time.Second)
	expect("b", 3*time.Second)
	expect("a", 3*time.Second)

	// b was silent 30 s and more before the outage, which the controller
	// counts no silence through: when b renews, the spell it ends counts
	// from the controller's contact again.
	if _, ok := tr.Ended("b"); ok {
		t.Error("b ended a spell of silence before it renewed")
	}
	contactAgain := clock.Now().Add(-3 * time.Second)
	step(7 * time.Second)
	renew("a")
	step(6 * time.Second)
	renew("a", "b")
	if spell, ok := tr.Ended("b"); !ok || !spell.From.Equal(contactAgain) || !spell.To.Equal(clock.Now()) || spell.RenewInterval != 10*time.Second {
		t.Errorf("Ended(b) = %+v, %v; want from %s to %s, every 10s", spell, ok, contactAgain, clock.Now())
	}
	// a missed no renewal: no spell. Nor does a renewal on time end one.
	if spell, ok := tr.Ended("a"); ok {
		t.Errorf("Ended(a) = %+v: a renews on time", spell)
	}
	ended, _ := tr.Ended("b")
	step(10 * time.Second)
	renew("b")
	if spell, _ := tr.Ended("b"); spell != ended {
		t.Errorf("Ended(b) = %+v after a renewal on time; want the last spell kept, %+v", spell, ended)
	}

	if _, _, known := tr.Silence("c"); known {
		t.Error("a node whose Lease was never seen is known")
	}
	informer.Forget("b")
	if _, _, known := tr.Silence("b"); known {
		t.Error("a forgotten node is known")
	}
}

// A leadership term that ends under load is followed by another within
// seconds: the silence of a node that stayed silent goes on through both,
// while the new term's informer has not yet delivered a node's Lease the
// node is unknown, and a node that renewed in between is heard from when
// its Lease arrives.
func TestTrackerAcrossTerms(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	renewedAt := func(node string, at time.Time) *coordinationv1.Lease { return leaseRenewedAt(node, at, 20) }
	clock := testingclock.NewFakePassiveClock(start)
	tr := NewTracker(clock, 15*time.Second)
	first := tr.NewTerm()
	for _, n := range []string{"silent", "renewing", "deleted"} {
		first.Observe(renewedAt(n, start))
	}
	clock.SetTime(start.Add(4 * time.Second))
	first.Observe(renewedAt("renewing", start.Add(4*time.Second)))

	clock.SetTime(start.Add(9 * time.Second))
	second := tr.NewTerm()
	// The first term's informer, still stopping, delivers a Lease it
	// held: it is no longer the tracker's source.
	first.Observe(renewedAt("silent", start))
	for _, n := range []string{"silent", "renewing", "deleted"} {
		if _, _, known := tr.Silence(n); known {
			t.Errorf("Silence(%s) known before the new term's informer delivered its Lease", n)
		}
	}
	clock.SetTime(start.Add(10 * time.Second))
	second.Observe(renewedAt("silent", start))                      // listed again, not renewed
	second.Observe(renewedAt("renewing", start.Add(8*time.Second))) // renewed between the terms
	clock.SetTime(start.Add(12 * time.Second))
	for node, want := range map[string]time.Duration{"silent": 12 * time.Second, "renewing": 2 * time.Second} {
		if silence, interval, known := tr.Silence(node); !known || silence != want || interval != 5*time.Second {
			t.Errorf("Silence(%s) = %s, %s, %v; want %s, 5s, true", node, silence, interval, known, want)
		}
	}
	if _, _, known := tr.Silence("deleted"); known {
		t.Error("Silence(deleted) known: its Lease was not listed in the new term")
	}
}

// leaseRenewedAt is node's Lease of the given duration, last renewed at at.
func leaseRenewedAt(node string, at time.Time, durationSeconds int32) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node},
		Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: at}, LeaseDurationSeconds: ptr.To(durationSeconds)}}
}
