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
	// term counts the leadership terms the tracker has served (NewTerm).
	term int
}

type lease struct {
	renewTime     time.Time
	seen          time.Time
	renewInterval time.Duration
	// ended is the node's last spell of silence that ended, if it missed
	// a renewal then (Suspect).
	ended *Spell
	// term is the last term whose informer delivered the Lease.
	term int
}

// NewTerm starts a leadership term, whose informer lists every Lease
// again. The process keeps one tracker across its terms: a term that ends
// under load (its lease renewals time out) and the next one, seconds
// later, would otherwise count every node's silence afresh, and a lost
// node's members would wait a whole bound more after each. What the
// tracker knows of a node stays, but it answers for the node only once
// the new term's informer has delivered its Lease: one renewed in between
// shows a renewTime the tracker has not seen, timed as a renewal when it
// arrives; one that stayed silent shows the same, and its silence goes
// on. Until then the node is unknown, as it is to a new tracker: a silence
// read before would count the time between the terms, when a renewal may
// have come unseen.
//
// The returned Term is what that term's informer reports through: once a
// later term began, what the earlier one's informer still delivers while
// it stops is dropped.
func (t *Tracker) NewTerm() Term {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.term++
	return Term{tracker: t, term: t.term}
}

// Term is one leadership term's informer's way into the Tracker.
type Term struct {
	tracker *Tracker
	term    int
}

// Observe records a Lease as the term's informer delivered it, unless a
// later term began.
func (m Term) Observe(l *coordinationv1.Lease) { m.tracker.observe(m.term, l) }

// Forget drops a node whose Lease the term's informer saw deleted, unless
// a later term began.
func (m Term) Forget(name string) { m.tracker.forget(m.term, name) }

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

// observe records a Lease as term's informer delivered it (added, updated
// or listed again).
func (t *Tracker) observe(term int, l *coordinationv1.Lease) {
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
	if term != t.term {
		return
	}
	now := t.clock.Now()
	n, known := t.nodes[l.Name]
	if known && n.renewTime.Equal(renewed) {
		n.renewInterval, n.term = interval, t.term
		return
	}
	if !t.lastRenewal.IsZero() && now.Sub(t.lastRenewal) >= t.quietGap {
		t.contactSince = now
	}
	t.lastRenewal = now
	renewal := &lease{renewTime: renewed, seen: now, renewInterval: interval, term: t.term}
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

// forget drops a node whose Lease term's informer saw deleted.
func (t *Tracker) forget(term int, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if term == t.term {
		delete(t.nodes, name)
	}
}

// Silence reports how long the controller has seen no renewal of the
// node's Lease while in contact, and the kubelet's renew interval; known is
// false for a node whose Lease the current term has not seen.
func (t *Tracker) Silence(node string) (silence, renewInterval time.Duration, known bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, ok := t.nodes[node]
	if !ok || n.term != t.term {
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
