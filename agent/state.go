package agent

import (
	"time"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// Action is what the agent does after seeing a JobSet status.
type Action int

const (
	// Wait: nothing to do until the status changes.
	Wait Action = iota
	// Join: patch the Pod's epoch annotation to Status.Synced + 1.
	Join
	// Restart: exit with the restart code.
	Restart
	// Lift: lift the barrier (idempotent).
	Lift
)

func (a Action) String() string {
	return [...]string{"Wait", "Join", "Restart", "Lift"}[a]
}

// Epochs is the part of the JobSet status the agent reads (absent = 0).
type Epochs struct {
	Synced, Deprecated int32
}

// Next decides, from the agent's epoch (0 until it joined) and the JobSet's
// epochs, what the agent does.
func Next(epoch int32, status Epochs) Action {
	switch {
	case epoch == 0:
		return Join
	case epoch <= status.Deprecated:
		return Restart
	case epoch == status.Synced:
		return Lift
	default:
		return Wait
	}
}

// FenceAction is what the agent does about a silence from the API server.
type FenceAction int

const (
	// CarryOn: nothing to do (in contact, or nothing runs that a
	// replacement could run beside).
	CarryOn FenceAction = iota
	// HoldBarrier: keep a worker that waits at the barrier there until the
	// agent has written its epoch again.
	HoldBarrier
	// AskWitnesses: ask peers on other nodes whether they are out of
	// contact too.
	AskWitnesses
	// StopWorker: stop the running worker (the one route to the restart
	// exit for a silence).
	StopWorker
)

func (a FenceAction) String() string {
	return [...]string{"CarryOn", "HoldBarrier", "AskWitnesses", "StopWorker"}[a]
}

// Witnessed is what the agent heard from its peers during a silence.
type Witnessed int

const (
	// NotAsked: no peer asked since the silence began, or the promises
	// the agent held are due to be asked again.
	NotAsked Witnessed = iota
	// Vouched: enough peers on other nodes, silent too, promised to write
	// no epoch beyond the agent's for a while: the silence is shared, and
	// no group can move past the agent's epoch without them.
	Vouched
	// Alone: a peer is in contact, or too few vouched.
	Alone
)

// NodeSilence is what the agent read of its node's kubelet: how long its
// Lease has gone unrenewed, by the node's clock, and how often the kubelet
// renews it (0: the agent does not fence on its node's Lease).
type NodeSilence struct {
	Unrenewed, RenewInterval time.Duration
}

// SilenceFor is the silence the fence acts on: the agent's own silence
// from the API server, or its node's Lease's, whichever is nearer its
// fence. The Lease counts only once its peers can tell whether the
// silence is shared (agentspec.NodeSilenceSharedAfter, when the agent
// asks them), and reaches the fence time a round of questions later
// (agentspec.NodeLeaseFenceAfter): an agent told it is alone stops its
// worker then, unless it was vouched for before.
func SilenceFor(own time.Duration, node NodeSilence, l FenceLimits) time.Duration {
	if node.RenewInterval <= 0 {
		return own
	}
	fenceAt := agentspec.NodeLeaseFenceAfter(l.After, node.RenewInterval)
	askAt := fenceAt - agentspec.WitnessRound
	if node.Unrenewed < askAt {
		return own
	}
	over := node.Unrenewed - askAt
	lease := l.After + over - agentspec.WitnessRound
	if over < agentspec.WitnessRound {
		// From asking ahead of the fence time to the fence time, within
		// the round.
		lease = l.After - l.AskAhead + time.Duration(float64(l.AskAhead)*float64(over)/float64(agentspec.WitnessRound))
	}
	return max(own, lease, time.Nanosecond)
}

// Silence is the agent's state as the fence sees it.
type Silence struct {
	// For is how long the agent has been silent, as SilenceFor counts it
	// (0: in contact, and its node's Lease renewed on time).
	For time.Duration
	// Joined: the agent joined an epoch. Lifted: its barrier lifted (the
	// worker may run). Fenced: the barrier waits for the agent to write
	// its epoch again.
	Joined, Lifted, Fenced bool
	Witnessed              Witnessed
	// Regaining: told it is alone while the promises it held last still
	// bind its witnesses, the agent tries to reach the API server itself
	// for a short while first (regainContactWithin), or, in contact, waits
	// as long for its kubelet to renew the node's Lease
	// (regainRenewalWithin).
	Regaining bool
}

// FenceLimits are the agent's fence settings.
type FenceLimits struct {
	// After: the fence time (0: never fence). DeferLimit: the longest
	// silence witnesses can ride out. Witnesses: how many must vouch (0:
	// none is asked). AskAhead: how long before the fence time they are
	// asked, so that their answers are in by then.
	After, DeferLimit, AskAhead time.Duration
	Witnesses                   int
}

// Fence decides what the agent does about a silence. A replacement can run
// beside the Pod's worker only once the controller declared the Pod lost,
// which it does only after a silence longer than the fence time, and only
// while few enough nodes of the group are silent that the agent could not
// have been vouched for (docs/controller.md, "Shared silence"). So a
// running worker stops at the fence time unless the silence is shared, and
// at the defer limit whatever; a waiting one just stays at the barrier.
//
// A peer in contact proves the API server answers, not that this node is
// cut off: when an outage ends, the agents reach the server back one after
// another, within their backoff's cap. So an agent told it is alone stops
// its worker only at its fence time, not on the answer, and past its fence
// time only once it has tried to reach the server itself for a while, when
// the promises it held until then still cover that while and its worker's
// stop (docs/controller.md, "Shared silence").
func Fence(s Silence, l FenceLimits) FenceAction {
	switch {
	case l.After <= 0:
		return CarryOn
	case !s.Lifted:
		if s.For < l.After || !s.Joined || s.Fenced {
			return CarryOn
		}
		return HoldBarrier
	case l.Witnesses <= 0:
		if s.For < l.After {
			return CarryOn
		}
		return StopWorker
	case s.For < l.After-l.AskAhead:
		return CarryOn
	case s.For >= l.DeferLimit:
		return StopWorker
	case s.Witnessed == Alone:
		if s.For < l.After || s.Regaining {
			return CarryOn
		}
		return StopWorker
	case s.Witnessed == Vouched:
		return CarryOn
	default:
		return AskWitnesses
	}
}
