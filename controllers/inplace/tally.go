package inplace

import (
	"maps"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// Most Pod events of an in-place JobSet cannot change Decide's output.
// While the group gathers (its first run, a group restart, the new Pods
// after a full restart or a resume): the kubelet's status writes while a
// Pod restarts, and every join but the last, since Decide syncs only once
// every expected live Pod of the group has joined and reads no failure
// signal meanwhile. In sync: the status writes that show no failure signal
// (the workers starting after a group restart, a probe's result). Every
// decision reads all of a JobSet's Pods, so the controller reconciles the
// events that may change it soon and spaces the others out.
//
// The Tally tells the two apart at O(1) an event. It follows each Pod from
// its events and, while the last decision left the group gathering, counts
// the group's live Pods that have not joined the gather's epoch. An event
// is news when it changes who is in the group or how a Pod ended (a Pod
// created, gone, ended, being deleted, left while running, relabelled); while the group gathers, when it leaves no
// live Pod waiting (to join, or to be held); in sync, when it changes a Pod's epoch or shows, or
// stops showing, a failure signal. Nothing is decided from the tally: it only says when to
// look. The protocol checker holds it to Decide: every Pod event after
// which Decide's output differs must be news.

// Mark is what the tally keeps of one Pod, as its last event showed it:
// what Decide reads of a Pod, but for its failure signal's wording.
type Mark struct {
	// Attempt names the JobSet and restart attempt the Pod was created
	// for; Member the replicatedJob it runs.
	Attempt, Member string
	// Epoch is the raw epoch annotation.
	Epoch string
	// Succeeded, Failed, Deleting, StillRunning, Left and Unheld are Pod's.
	Succeeded, Failed, Deleting, StillRunning, Left, Unheld bool
	// FailureSignal: FailureSignal finds a sign in the Pod's status. Only
	// read while the group is in sync (ReadsSignals): then only does
	// Decide read it, and it costs more than the rest of the mark.
	FailureSignal bool
}

func (m Mark) live() bool {
	return !m.Succeeded && !m.Failed && !m.Deleting
}

// Gather is what a decision that leaves the group gathering publishes:
// the attempt and replicatedJobs of the group, and the epoch it gathers at.
type Gather struct {
	Attempt string
	Group   sets.Set[string]
	Epoch   int32
}

// Equal reports whether two gathers are the same (nil: in sync).
func (g *Gather) Equal(o *Gather) bool {
	if g == nil || o == nil {
		return g == o
	}
	return g.Attempt == o.Attempt && g.Epoch == o.Epoch && g.Group.Equal(o.Group)
}

// waitsFor: a live Pod of the group that has not joined the gather's
// epoch or is not held yet, which keeps the gather from syncing.
func (g *Gather) waitsFor(m Mark) bool {
	if g == nil || !m.live() || m.Attempt != g.Attempt || !g.Group.Has(m.Member) {
		return false
	}
	e, err := agentspec.ParseEpoch(m.Epoch)
	return err != nil || e != g.Epoch || m.Unheld
}

// Tally is one JobSet's: its Pods as their events showed them, and what
// the last decision left the group in.
type Tally struct {
	pods map[string]Mark // by Pod name
	// known: a decision was published since the tally began or since the
	// last one failed; gather is what it left (nil: in sync).
	known  bool
	gather *Gather
	// waiting counts, while the group gathers, the Pods gather waits for.
	waiting int
	// quiet: an event since the last publish was found not to be news.
	quiet bool
	// signs holds, by Pod name, the epoch a Pod showed when an event of it
	// in sync showed a failure signal (Signs).
	signs map[string]string
}

// NewTally returns a tally that follows no Pod and knows no decision.
func NewTally() *Tally {
	return &Tally{pods: map[string]Mark{}, signs: map[string]string{}}
}

// Observe records a Pod's event (m nil: the Pod is gone) and reports
// whether it is news: whether it may change the decision.
func (t *Tally) Observe(name string, m *Mark) (news bool) {
	before, seen := t.pods[name]
	if seen && t.waitsFor(before) {
		t.waiting--
	}
	if m == nil {
		delete(t.pods, name)
		delete(t.signs, name)
		return true
	}
	after := *m
	t.pods[name] = after
	switch epoch, signed := t.signs[name]; {
	case after.FailureSignal && t.ReadsSignals():
		t.signs[name] = after.Epoch
	case signed && epoch != after.Epoch:
		delete(t.signs, name)
	}
	if t.waitsFor(after) {
		t.waiting++
	}
	news = true
	switch {
	case !t.known || !seen:
	case before.Succeeded != after.Succeeded || before.Failed != after.Failed || before.Deleting != after.Deleting ||
		before.StillRunning != after.StillRunning || before.Left != after.Left ||
		before.Attempt != after.Attempt || before.Member != after.Member:
	case t.gather == nil: // in sync
		news = before.Epoch != after.Epoch || before.FailureSignal != after.FailureSignal || after.FailureSignal
	default:
		news = (before.Epoch != after.Epoch || before.Unheld != after.Unheld) && t.waiting == 0
	}
	t.quiet = t.quiet || !news
	return news
}

// ReadsSignals reports whether the next event's failure signal matters:
// while the group is in sync. Otherwise the mark may leave it false.
func (t *Tally) ReadsSignals() bool {
	return t.known && t.gather == nil
}

// Publish records what a decision left the group in: gathering at g, or in
// sync (g nil). It reports whether to look again: when that changed, the
// events weighed against the last one may be news now (a joined Pod's
// failure signal, quiet while the group gathered, is news once it syncs),
// and a gather that no live Pod waits for anymore may sync.
func (t *Tally) Publish(g *Gather) (lookAgain bool) {
	defer func() { t.quiet = false }()
	if t.known && t.gather.Equal(g) {
		return false
	}
	t.known, t.gather = true, g
	if g != nil {
		clear(t.signs)
	}
	t.recount()
	return t.quiet || (g != nil && t.waiting == 0)
}

// Signs are the failure signals the tally saw in sync that no decision
// has answered yet: by Pod name, the epoch the Pod showed with its sign,
// as long as it still shows it and the group has not gathered since.
//
// The clearest sign, a worker's exit code, is in the Pod's status for one
// kubelet write only: the next shows every container restarting, which is
// no sign (FailureSignal). A reconcile paced behind a storm of events, or
// reading thousands of Pods, reads the Pod after that write and would wait
// for the Pod's rejoin of the next epoch instead. The event handler sees
// every write, so the tally keeps the sign for the decision. That is as
// sound as the sign read at the decision: the status that showed it was
// the API server's, after the Pod's agent joined the epoch the Pod still
// shows, and a sign answered by a group restart is dropped when the group
// gathers.
func (t *Tally) Signs() map[string]string {
	if len(t.signs) == 0 {
		return nil
	}
	return maps.Clone(t.signs)
}

// Forget records that no decision is known (a failed reconcile, a JobSet
// restarting fully or gone): every event is news until the next Publish.
// It reports whether to look again, as Publish does. The signs stay: each
// is still true of its Pod while the Pod shows its epoch.
func (t *Tally) Forget() (lookAgain bool) {
	defer func() { t.quiet = false }()
	if !t.known {
		return false
	}
	t.known, t.gather = false, nil
	t.recount()
	return t.quiet
}

// Empty: the tally follows no Pod and knows no decision; it can be dropped.
func (t *Tally) Empty() bool {
	return len(t.pods) == 0 && !t.known
}

func (t *Tally) waitsFor(m Mark) bool {
	return t.known && t.gather.waitsFor(m)
}

func (t *Tally) recount() {
	t.waiting = 0
	for _, m := range t.pods {
		if t.waitsFor(m) {
			t.waiting++
		}
	}
}
