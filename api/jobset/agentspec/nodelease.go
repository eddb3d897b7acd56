package agentspec

import "time"

// A node's kubelet renews its Lease in NodeLeaseNamespace every renew
// interval. The controller reads a node's silence from it, and so does the
// agent when it fences on its node's Lease (EnvFenceNodeLease): the same
// evidence, read by the same rule on both sides.
const (
	NodeLeaseNamespace = "kube-node-lease"
	// DefaultNodeRenewInterval is the kubelet's, for a Lease of its
	// default duration (40 s).
	DefaultNodeRenewInterval = 10 * time.Second
)

// NodeRenewInterval is how often the kubelet renews a Lease of the given
// duration: a quarter of it (the kubelet's nodeLeaseRenewIntervalFraction).
// A Lease that gives none is renewed at the default interval.
func NodeRenewInterval(leaseDurationSeconds int32) time.Duration {
	if leaseDurationSeconds <= 0 {
		return DefaultNodeRenewInterval
	}
	return time.Duration(leaseDurationSeconds) * time.Second / 4
}

// MissedRenewalAfter is the longest a Lease renewed every renewInterval
// goes unrenewed while its kubelet works: past it, the kubelet missed a
// renewal, and the node's silence is suspect.
func MissedRenewalAfter(renewInterval time.Duration) time.Duration {
	return renewInterval + renewInterval/2
}

// EnvFenceNodeLease: "true" has the agent fence on its node's Lease too.
// Besides its own silence from the API server, it follows its node's
// Lease in NodeLeaseNamespace and stops its running worker once the
// kubelet has not renewed it for NodeLeaseFenceAfter, by the node's own
// clock, unless peers on other nodes vouch that the silence is shared, as
// for its own silence. That covers what its own silence cannot: a kubelet
// down alone while the agent stays in contact, and an agent that lost
// contact only after its kubelet fell silent. The controller, which
// declares a member lost from the same renewal, need then not hold a lost
// Pod's group after the mark. The agent's ServiceAccount must be allowed
// to watch its node's Lease; the agent lifts its barrier only once it has
// read it.
const EnvFenceNodeLease = "FENCE_NODE_LEASE"

// NodeRenewJitter is how much later than its renew interval a working
// kubelet may renew its Lease: the Lease controller's jitter.
const NodeRenewJitter = 0.04

// NodeLeaseWriteSlack bounds how long a renewal takes to reach the API
// server after the kubelet wrote its renew time.
const NodeLeaseWriteSlack = time.Second

// WitnessRound bounds one round of an agent's questions to its witnesses,
// name lookups included.
const WitnessRound = time.Second

// RenewedWithin is the longest a working kubelet leaves its Lease
// unrenewed, as read on its node: its renew interval stretched by its
// jitter, and the renewal's way to the API server.
func RenewedWithin(renewInterval time.Duration) time.Duration {
	return renewInterval + time.Duration(float64(renewInterval)*NodeRenewJitter) + NodeLeaseWriteSlack
}

// NodeSilenceSharedAfter is how long an agent's node's Lease must go
// unrenewed before its peers can tell whether their own kubelets fell
// silent with it (an API server that takes no renewals while its watches
// go on, as when etcd stalls on writes) or renew on. A kubelet that fell
// silent at the same moment renewed last at most RenewedWithin after the
// asker's did, so its own Lease is unrenewed for at least the asker's
// less that; a working one renewed within RenewedWithin of the question.
// The two are told apart once the asker's Lease is unrenewed for twice
// RenewedWithin and the question's way.
func NodeSilenceSharedAfter(renewInterval time.Duration) time.Duration {
	return 2*RenewedWithin(renewInterval) + WitnessRound
}

// NodeLeaseFenceAfter is how long the node's Lease may go unrenewed before
// an agent that fences on it (EnvFenceNodeLease) stops its running worker
// when no peer vouches: a round of questions past the moment its peers can
// tell a silence they share (it asks then), and never before the agent's
// fence time, which a platform may have set long to ride out outages.
func NodeLeaseFenceAfter(fenceAfter, renewInterval time.Duration) time.Duration {
	return max(fenceAfter, NodeSilenceSharedAfter(renewInterval)+WitnessRound)
}
