package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/fastjobset/jobset/agent/kubeclient"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// A node cut off from the API server (its link down, the VM hung) keeps its
// kubelet and containers: its worker may go on running epoch S while the
// controller, which hears nothing from the node, replaces that rank and the
// rest of the group moves to S+1. So an agent that has joined an epoch and
// has not been in contact with the API server for FenceAfter fences. If its
// worker may run (the barrier lifted), it exits with the restart code: the
// kubelet (alive on a cut-off node) restarts every container of the Pod in
// place, and the new agent, which cannot join an epoch while it is cut
// off, holds the worker at the barrier. The controller declares a Pod lost
// only after a bound longer than FenceAfter plus the kubelet's restart,
// each side measuring its own durations.
//
// If its worker still waits at the barrier, there is nothing to stop, but
// the epoch it joined can no longer lift the barrier by itself: the node
// back, the agent could see that epoch synced by a group that replaced its
// rank meanwhile. It lifts only after it has written its epoch to the Pod
// again, a write the admission policy refuses to a Pod that was marked
// Failed or is being deleted, as it refuses a new agent's join. So an API
// server outage longer than the fence in the middle of a group restart
// restarts nothing more: the agents that joined write their epoch again
// once it is back.
//
// Contact is measured on the monotonic clock, from evidence that a round
// trip happened: an answer (any status) to a request sent at t proves
// contact at t. An open watch proves nothing by itself once idle; its
// HTTP/2 connection does: the transport pings it after a short silence and
// closes it when no answer comes soon (kubeclient.PingAfter, PingTimeout),
// so an open connection was in contact at most kubeclient.LinkSlack ago. What a stalled process
// reads after it runs again (a frozen node thawed) may have waited in its
// socket since before the stall: a stall counts as silence from its start,
// and the watch is opened again for a fresh round trip.
//
// An agent that fences on its node's Lease (node_lease.go) counts its
// node's kubelet's silence too, and acts on whichever silence is nearer
// its fence (SilenceFor): a kubelet down alone, its agent in contact, is
// then fenced like a node cut off.

const (
	// DefaultFenceAfter is agentspec.DefaultFenceAfterSeconds.
	DefaultFenceAfter = agentspec.DefaultFenceAfterSeconds * time.Second

	// fenceTick is how often the fence looks at the silence; a tick that
	// comes stallAfter or more after the one before means the agent did
	// not run meanwhile.
	fenceTick  = agentspec.FenceTick
	stallAfter = time.Second
)

// contact follows the agent's contact with the API server.
type contact struct {
	now   func() time.Time
	slack time.Duration

	mu sync.Mutex
	// silentSince is zero while in contact; otherwise the earliest the
	// agent may have last been in contact.
	silentSince time.Time
	lastTick    time.Time
}

func newContact(now func() time.Time, slack time.Duration) *contact {
	t := now()
	return &contact{now: now, slack: slack, lastTick: t}
}

// confirmed records an answer to a request sent at sentAt.
func (c *contact) confirmed(sentAt time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.silentSince.IsZero() || !sentAt.Before(c.silentSince) {
		c.silentSince = time.Time{}
	}
}

// lostOrAnswered records how a request sent at sentAt ended.
func (c *contact) lostOrAnswered(sentAt time.Time, err error) {
	if err == nil || actedOn(err) {
		c.confirmed(sentAt)
		return
	}
	c.lost()
}

// actedOn: the request reached an API server that could act on it (a 5xx
// may come from a proxy, or from a server that cannot reach etcd).
func actedOn(err error) bool {
	var status *kubeclient.StatusError
	return errors.As(err, &status) && status.Code < 500
}

// lost records that a request got no answer or a watch ended: the agent
// was in contact kubeclient.LinkSlack ago at the latest it can be sure of.
func (c *contact) lost() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.silentSince.IsZero() {
		c.silentSince = c.now().Add(-c.slack)
	}
}

// tick is called every fenceTick; it returns how long the agent has been
// silent and whether it stalled since the last tick (then it counts as
// silent from the stall's start, and needs a fresh round trip).
func (c *contact) tick() (silence time.Duration, stalled bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if now.Sub(c.lastTick) >= stallAfter {
		stalled = true
		if since := c.lastTick.Add(-c.slack); c.silentSince.IsZero() || since.Before(c.silentSince) {
			c.silentSince = since
		}
	}
	c.lastTick = now
	if c.silentSince.IsZero() {
		return 0, stalled
	}
	return now.Sub(c.silentSince), stalled
}

// ticked records a tick now, after work of the fence's own that kept it
// from ticking.
func (c *contact) ticked() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastTick = c.now()
}

// silence is how long the agent has been out of contact, as the last tick
// left it (0: in contact).
func (c *contact) silence() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.silentSince.IsZero() {
		return 0
	}
	return c.now().Sub(c.silentSince)
}

// silence is the agent's silence as its fence counts it (SilenceFor), as
// the last tick left its own.
func (a *Agent) silence() time.Duration {
	return SilenceFor(a.contact.silence(), a.nodeLease.silence(), a.cfg.fenceLimits())
}

// fenceLimits are the agent's settings for Fence.
func (c Config) fenceLimits() FenceLimits {
	return FenceLimits{After: c.FenceAfter, DeferLimit: c.FenceDeferLimit, AskAhead: askAhead, Witnesses: c.FenceWitnesses}
}

// fence watches the silence until ctx ends, and acts as Fence decides.
// After a stall it asks for a fresh watch (rewatch), and forgets what its
// witnesses said: their promises may have run out meanwhile. stop stops
// the running worker.
func (a *Agent) fence(ctx context.Context, rewatch, stop func()) {
	ticker := time.NewTicker(fenceTick)
	defer ticker.Stop()
	limits := a.cfg.fenceLimits()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		own, stalled := a.contact.tick()
		silence := SilenceFor(own, a.nodeLease.silence(), limits)
		if stalled {
			klog.InfoS("The agent did not run for a while (a frozen or starved node): opening the watch again to confirm contact with the API server", "silence", silence.Round(time.Millisecond))
			rewatch()
		}
		if stalled || silence == 0 {
			a.witnesses.forget()
		}
		now := a.contact.now()
		state := Silence{For: silence, Joined: a.epoch.Load() != 0, Lifted: a.barrier.isLifted(), Fenced: a.barrier.isFenced(),
			Witnessed: a.witnesses.state(now), Regaining: a.witnesses.regaining(now, own == 0)}
		switch Fence(state, limits) {
		case HoldBarrier:
			if a.barrier.fence(fmt.Sprintf("no contact with the API server for %s: the agent writes epoch %d again before the worker starts", limits.After, a.epoch.Load())) {
				continue // lifted meanwhile: the next tick sees a running worker
			}
			klog.InfoS("No contact with the API server for the fence time: the worker, which waits at the barrier, starts only once the agent has written its epoch again, as its rank may be replaced meanwhile",
				"epoch", a.epoch.Load(), "silence", silence.Round(time.Millisecond), "fenceAfter", limits.After)
		case AskWitnesses:
			began := a.contact.now()
			a.askWitnesses(ctx)
			// A round takes up to witnessTimeout of the loop's time: not
			// a stall of the agent, which a longer one would be.
			if a.contact.now().Sub(began) < witnessTimeout+stallAfter {
				a.contact.ticked()
			}
		case StopWorker:
			klog.InfoS("No contact with the API server for the fence time, and the silence is not shared (or lasted past the defer limit): stopping the worker (restarting the Pod in place), as its rank may be replaced meanwhile",
				"epoch", a.epoch.Load(), "silence", silence.Round(time.Millisecond), "fenceAfter", limits.After, "deferLimit", limits.DeferLimit)
			stop()
			return
		}
	}
}
