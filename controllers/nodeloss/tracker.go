package nodeloss

import (
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

// DefaultRenewInterval is the kubelet's, for a Lease of its default
// duration (40 s).
const DefaultRenewInterval = 10 * time.Second

// Tracker follows the nodes' Leases. It is safe for concurrent use.
type Tracker struct {
	clock clock.PassiveClock
	// quietGap: see the package comment; longer than a renew interval,
	// so that one node's renewals alone keep the contact.
	quietGap time.Duration

	mu    sync.Mutex
	nodes map[string]*lease
	// lastRenewal is when the controller last saw any Lease renewed;
	// contactSince when its contact last began.
	lastRenewal, contactSince time.Time
}

type lease struct {
	renewTime     time.Time
	seen          time.Time
	renewInterval time.Duration
	// ended is the node's last spell of silence that ended, if it missed
	// a renewal then (Suspect).
	ended *Spell
}

// Spell is a spell of a node's silence that ended, by the controller's
// clock: from when it was last heard before, to when it renewed again.
type Spell struct {
	From, To      time.Time
	RenewInterval time.Duration
}

// NewTracker returns a Tracker that knows no Lease yet.
func NewTracker(c clock.PassiveClock, quietGap time.Duration) *Tracker {
	return &Tracker{clock: c, quietGap: quietGap, nodes: map[string]*lease{}, contactSince: c.Now()}
}

// Observe records a Lease as an informer delivered it (added, updated or
// listed again).
func (t *Tracker) Observe(l *coordinationv1.Lease) {
	if l == nil {
		return
	}
	var renewed time.Time
	if l.Spec.RenewTime != nil {
		renewed = l.Spec.RenewTime.Time
	}
	interval := DefaultRenewInterval
	if d := ptr.Deref(l.Spec.LeaseDurationSeconds, 0); d > 0 {
		interval = time.Duration(d) * time.Second / 4
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clock.Now()
	n, known := t.nodes[l.Name]
	if known && n.renewTime.Equal(renewed) {
		n.renewInterval = interval
		return
	}
	if !t.lastRenewal.IsZero() && now.Sub(t.lastRenewal) >= t.quietGap {
		t.contactSince = now
	}
	t.lastRenewal = now
	renewal := &lease{renewTime: renewed, seen: now, renewInterval: interval}
	if known {
		renewal.ended = n.ended
		if from := t.heardSince(n); Suspect(now.Sub(from), n.renewInterval) {
			renewal.ended = &Spell{From: from, To: now, RenewInterval: n.renewInterval}
		}
	}
	t.nodes[l.Name] = renewal
}

// heardSince is when the node was last heard from, as its silence counts:
// not before the controller's own contact began.
func (t *Tracker) heardSince(n *lease) time.Time {
	if t.contactSince.After(n.seen) {
		return t.contactSince
	}
	return n.seen
}

// Forget drops a node whose Lease was deleted.
func (t *Tracker) Forget(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.nodes, name)
}

// Silence reports how long the controller has seen no renewal of the
// node's Lease while in contact, and the kubelet's renew interval; known is
// false for a node whose Lease it has not seen.
func (t *Tracker) Silence(node string) (silence, renewInterval time.Duration, known bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, ok := t.nodes[node]
	if !ok {
		return 0, 0, false
	}
	from := t.heardSince(n)
	now := t.clock.Now()
	if !t.lastRenewal.IsZero() && now.Sub(t.lastRenewal) >= t.quietGap {
		// No renewal at all for a while: the controller, not the node,
		// may be the one cut off.
		return 0, n.renewInterval, true
	}
	return now.Sub(from), n.renewInterval, true
}

// Ended returns the node's last spell of silence that ended, if it missed
// a renewal then.
func (t *Tracker) Ended(node string) (Spell, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, ok := t.nodes[node]
	if !ok || n.ended == nil {
		return Spell{}, false
	}
	return *n.ended, true
}

// Nodes lists the nodes whose Leases the tracker follows.
func (t *Tracker) Nodes() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	names := make([]string, 0, len(t.nodes))
	for name := range t.nodes {
		names = append(names, name)
	}
	return names
}
