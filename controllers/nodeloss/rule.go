package nodeloss

import "time"

// Lost is the rule by which a member of an in-place group whose node the
// controller no longer hears from is declared lost, and its rank replaced.
//
// silence is how long the member's node has been silent; bound is the
// member's bound while the silence is not shared (its agent's fence time,
// a renew interval and the kubelet's stop of the worker), deferred the
// bound once it may be (the agent's defer limit instead of its fence
// time). silentNodes counts the silent nodes that may still run a Pod of
// the group; witnesses is the least number of peers the group's agents ask
// to vouch for a shared silence (0: none asks).
//
// An agent keeps its worker running past its fence time only when that
// many peers on other nodes, silent too, promised to join no later epoch.
// While no more nodes are silent than that, the agent and its witnesses
// cannot all be silent, so none of them is relying on the others when its
// rank is replaced; past it, only the defer limit, after which every agent
// stops its worker whatever its peers say, makes a replacement safe.
func Lost(silence, bound, deferred time.Duration, silentNodes, witnesses int) bool {
	if witnesses > 0 && silentNodes > witnesses {
		return silence >= deferred
	}
	return silence >= bound
}
