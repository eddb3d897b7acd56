package nodeloss

import "time"

// Lost is the rule by which a member of an in-place group whose node the
// controller no longer hears from is declared lost, and its rank replaced.
//
// silence is how long the member's node has been silent; alone is how
// much of that silence came after the last time it was shared (Alone),
// the whole of it when it never was. bound is the member's bound while the
// silence is not shared (its agent's fence time, a renew interval and the
// kubelet's stop of the worker), deferred the bound once it may be (the
// agent's defer limit instead of its fence time). silentNodes counts the
// silent nodes that may still run a Pod of the group; witnesses is the
// least number of peers the group's agents ask to vouch for a shared
// silence (0: none asks).
//
// An agent keeps its worker running past its fence time only when that
// many peers on other nodes, silent too, promised to join no later epoch.
// While no more nodes are silent than that, the agent and its witnesses
// cannot all be silent, so none of them is relying on the others when its
// rank is replaced; past it, only the defer limit, after which every agent
// stops its worker whatever its peers say, makes a replacement safe.
//
// Nodes that were silent together come back one after another: each
// kubelet reaches the API server on a retry of its own, one may take tens
// of seconds longer than another, while the agents, back in contact, have
// already brought the group in sync again. So once the silence is no
// longer shared, the bound counts from then, not from when the silence
// began: the node of a rack that came back gets a bound's time to renew
// before its member is replaced, as it would have after a cut of its own.
//
// Counting from later is as safe: this rule declares a member lost only in
// a state where the rule that counts from the silence's start would too
// (alone <= silence, and silence >= deferred >= bound), so every run it
// allows is one that rule allows at a later moment, and the nodeloss
// checker, which lets the controller declare a member lost at any moment
// once that rule allows it, explored each of them. Past the deferred
// bound the member is lost however often the silence was shared: a
// flapping peer cannot hold its replacement back for ever.
func Lost(silence, alone, bound, deferred time.Duration, silentNodes, witnesses int) bool {
	switch {
	case witnesses == 0:
		return silence >= bound
	case silence >= deferred:
		return true
	case silentNodes > witnesses:
		return false
	}
	return alone >= bound
}

// Suspect: a node silent for more than a renew interval and a half missed
// a renewal; it may be lost.
func Suspect(silence, renewInterval time.Duration) bool {
	return silence > SuspectAfter(renewInterval)
}

// SuspectAfter is the longest silence that is not yet Suspect.
func SuspectAfter(renewInterval time.Duration) time.Duration {
	return renewInterval + renewInterval/2
}

// Alone is how long a member's node has been silent since its silence was
// last shared with another node of its group: the latest time one of
// those nodes came back from a silence during which both were suspects
// (Suspect) at once, so that both counted as silent. A silence shared with
// no one is alone for its whole length.
//
// silence and renewInterval are the member's node's; others are the
// spells of silence that ended, of the other nodes of the group.
func Alone(now time.Time, silence, renewInterval time.Duration, others []Spell) time.Duration {
	since := now.Add(-silence)
	from := since
	for _, o := range others {
		// Both are suspects at once at the latest when the other renews.
		shared := o.To.After(since) && Suspect(o.To.Sub(o.From), o.RenewInterval) && Suspect(o.To.Sub(since), renewInterval)
		if shared && o.To.After(from) {
			from = o.To
		}
	}
	return now.Sub(from)
}
