package nodeloss

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fastjobset/jobset/agent"
)

// The checker explores every interleaving, within a budget of faults, of
// an in-place group of three ranks on three nodes whose links to the API
// server fail: one node cut off, two together (a rack), every node at once
// (an API server outage, which the controller shares), a node whose agent
// alone loses the API server (its kubelet renews on), a node whose kubelet
// alone is down (its agent in contact, its containers running, nothing
// restarting them), and a node that comes back and goes again. Each rank's agent runs the real agent.Next and
// agent.Fence; the controller declares ranks lost by the real Lost and
// replaces each on a healthy spare node.
//
// When the API server is back, each agent reaches it on a retry of its
// own, in any order: a peer back first tells one still retrying that it is
// in contact. An agent whose link works reaches the server within the
// window it gives itself before stopping its worker (agent.Fence's
// Regaining), before its time moves on. The API server stays up until
// every agent reached it: one that fails again within seconds may stop a
// worker that had not (docs/controller.md, "Shared silence").
//
// Time is abstract: a silent node's agent passes its fence time, then its
// defer limit, as quiet steps, in that order. The controller may declare a
// rank lost once its node's silence passed the bound, which leaves the
// agent time to act on its fence time (ask its witnesses, stop its worker),
// or the deferred bound, which leaves it time to stop its worker whatever
// its witnesses said: so declaring a rank lost waits for its agent to have
// done so. A witness's promise outlives the asker's next question and the
// stop of its worker (the promise's length, agentspec.WitnessPromiseSeconds,
// is set so): so a promise ends only once its asker asked again or stopped
// its worker.
//
// A worker starts only through its kubelet, which starts the worker
// container once the agent's startup probe says the barrier lifted (the
// Pod tier): a kubelet that is down starts nothing, and one that runs
// starts nothing of a Pod declared lost, which it sees deleted.
//
// Every worker runs under the worker wrapper: an agent stops its worker
// itself (its fence, or a deprecation it reads), whether its kubelet runs
// or not, and after a deprecation confirms the stop on its Pod. The
// controller holds a Pod it declared lost as still running, keeping the
// group from syncing, until its agent confirmed, its kubelet reported it
// stopped, or the bound from the mark passed (controllers/jobsetcontroller,
// lostWorkerMayRun), by which time its agent, in contact or silent, acted.
//
// With leaseFence, each agent fences on its node's Lease too, and the
// controller holds no lost Pod (TestFenceCheckerNodeLease). When the API
// server is back, each kubelet renews its node's Lease on a retry of its
// own too, in any order with the agents' returns and its peers' renewals:
// until it does, its agent, in contact or not, counts the outage as its
// node's silence. An agent that asked its witnesses in the outage, told
// it is alone once a peer's kubelet renewed, waits for its own kubelet's
// renewal (Regaining: agent's regainRenewalWithin covers the kubelet's
// backoff cap); one that never asked sees the renewal before its Lease
// reaches the point where it would ask, as the kubelet retries within its
// backoff cap of the server's return (pending).
//
// It checks in every reachable state:
//
//   - safety: no worker starts at an epoch while another runs at another
//     one, nor while another Pod of its rank runs;
//   - no harm: in a run whose only fault is an API server outage, no worker
//     stops and no rank is declared lost;
//
// and that from every state, quiet steps can bring the group back in sync
// with every rank running (a node that never comes back is replaced).

const (
	ranks     = 3
	gens      = 2 // a rank's Pod and its replacement on a spare node
	maxFaults = 3
	// witnessesNeeded is FENCE_WITNESSES.
	witnessesNeeded = 1
)

// maxStates stops a model grown past what the checker's machine holds in
// memory, with an error rather than the machine's OOM killer.
const maxStates = 12_000_000

var limits = agent.FenceLimits{After: 15 * time.Second, DeferLimit: 10 * time.Minute, AskAhead: time.Second, Witnesses: witnessesNeeded}

// Silence levels of a node, as its agent measures it.
const (
	inContact int8 = iota
	silent         // out of contact, less than the fence time
	pastFence      // past the fence time
	pastLimit      // past the defer limit: its agent stops its worker and vouches for no one
	// pastPromises: past the deferred bound, by which every promise its
	// agent made ran out and each agent that relied on one asked again.
	pastPromises
)

// silenceOf is a level as a duration, for agent.Fence.
func silenceOf(level int8) time.Duration {
	return [...]time.Duration{0, time.Second, limits.After + time.Second, limits.DeferLimit + time.Second, limits.DeferLimit + time.Minute}[level]
}

// pod is one Pod of a rank: gen 0 on the rank's node, gen 1 a replacement
// on a spare node, which never fails.
type pod struct {
	exists bool
	// lost: the controller declared it lost (marked Failed); it runs on
	// until its kubelet hears of it.
	lost       bool
	agentUp    bool
	restarting bool
	joined     int8 // the agent's epoch (0: not joined)
	worker     int8 // the epoch the worker runs at (0: not running)
	fenced     bool
	// seen: the agent saw the JobSet's epochs since it started; what it
	// saw is viewSynced, viewDeprecated.
	seen                       bool
	viewSynced, viewDeprecated int8
	// witnessed: what its peers said during this silence; vouchers: the
	// Pods (bits by index) whose promises it relies on.
	witnessed agent.Witnessed
	vouchers  uint8
	// confirmed: its agent confirmed that the worker of the epoch the Pod
	// shows stopped (a join shows another); boundPassed:
	// the controller's bound from the mark passed (lost Pods only).
	confirmed, boundPassed bool
	// promisesOver: the controller's promise bound from the mark passed
	// (lost Pods only): the Pod no longer counts as a silent node that
	// may vouch.
	promisesOver bool
}

type node struct {
	// cut: kubelet and agent cut off; agentCut: the agent alone (its
	// Service path), the kubelet renews on; kubeletDown: the kubelet
	// alone, its agent in contact.
	cut, agentCut, kubeletDown bool
	// reconnecting: the API server is back and the node's agent has yet
	// to reach it; its peers may have already. renewing: the same for its
	// kubelet's renewal of the node's Lease (with leaseFence).
	reconnecting, renewing bool
	level                  int8
}

type state struct {
	pods [ranks][gens]pod
	// nodes: each Pod's; a replacement's spare node fails only with
	// the API server.
	nodes              [ranks][gens]node
	apiDown            bool
	synced, deprecated int8
	faults             int8
	// sharedOnly: every fault so far was an API server outage.
	sharedOnly bool
}

func index(rank, gen int) uint8 { return uint8(rank*gens + gen) }

func initial() state {
	s := state{synced: 1, sharedOnly: true}
	for r := range ranks {
		s.pods[r][0] = pod{exists: true, agentUp: true, joined: 1, worker: 1, seen: true, viewSynced: 1}
	}
	return s
}

// agentSilent: the agent of Pod (r, g) hears nothing from the API server.
func (s *state) agentSilent(r, g int) bool {
	return s.apiDown || s.nodes[r][g].cut || s.nodes[r][g].agentCut || s.nodes[r][g].reconnecting
}

// regainPending: the API server is back, and the agent's link to it works:
// its next retry, within its backoff's cap, reaches it.
func (s *state) regainPending(r, g int) bool {
	nd := s.nodes[r][g]
	return nd.reconnecting && !s.apiDown && !nd.cut && !nd.agentCut
}

// renewalPending: the API server is back, and the node's kubelet, up and
// linked to it, has yet to renew the node's Lease: its next retry, within
// its backoff's cap, does.
func (s *state) renewalPending(r, g int) bool {
	nd := s.nodes[r][g]
	return nd.renewing && !s.apiDown && !nd.cut && !nd.kubeletDown
}

// reconnecting: some agent has yet to reach the API server back, or some
// kubelet to renew its Lease.
func (s *state) reconnecting() bool {
	for _, rank := range s.nodes {
		for _, nd := range rank {
			if nd.reconnecting || nd.renewing {
				return true
			}
		}
	}
	return false
}

// silence is the agent's silence as agent.Fence sees it. An agent whose
// link works regains contact within the window it is given when told it
// is alone (regainContactWithin: it asked that much before its fence
// time, or rides on the promises it held): Regaining stands for it.
func (s *state) silence(r, g int) agent.Silence {
	p := s.pods[r][g]
	return agent.Silence{For: silenceOf(s.level(r, g)), Joined: p.joined != 0, Lifted: p.worker != 0, Fenced: p.fenced,
		Witnessed: p.witnessed, Regaining: regainContact && s.regainPending(r, g) || regainRenewal && s.renewalPending(r, g)}
}

// leaseSilent: the controller hears nothing from the Pod's node.
func (s *state) leaseSilent(r, g int) bool { return s.nodes[r][g].cut || s.nodes[r][g].kubeletDown }

// holdLostWorkers: the controller holds a lost Pod as still running until
// its agent confirmed, its kubelet reported, or its bound passed. The
// checker finds a rank that runs twice without it.
var holdLostWorkers = true

// regainContact: an agent told by a peer in contact that it is alone tries
// to reach the API server itself before it stops its worker. The checker
// finds a worker stopped in an API server outage without it: its peers
// reached the server back first.
var regainContact = true

// regainRenewal: an agent in contact told it is alone while its node's
// Lease is still stale from an outage waits for its kubelet's renewal
// before it stops its worker. The checker finds a worker stopped in an API
// server outage without it: its peers' kubelets renewed first.
var regainRenewal = true

// leaseFence: each agent fences on its node's Lease too
// (FENCE_NODE_LEASE): the silence its fence counts is its node's, which
// the kubelet down alone advances while the agent stays in contact, and a
// peer whose kubelet is silent vouches; the controller declares the
// member of a node whose kubelet alone is down only past the fence time,
// as for a node cut off, and holds no lost Pod after the mark.
var leaseFence = false

// nodeSilent: the fence of the agent of (r, g) counts a silence: its own,
// or, fencing on its node's Lease, its kubelet's.
func (s *state) nodeSilent(r, g int) bool {
	return s.agentSilent(r, g) || leaseFence && (s.nodes[r][g].kubeletDown || s.nodes[r][g].renewing)
}

// countLostWitnesses: the controller counts a Pod it declared lost among
// the silent nodes until its promise bound from the mark passed. The
// checker finds a rank that runs twice without it.
var countLostWitnesses = true

func (s *state) level(r, g int) int8 { return s.nodes[r][g].level }

// current is the rank's member: its newest Pod not declared lost.
func (s *state) current(r int) (int, bool) {
	for g := gens - 1; g >= 0; g-- {
		if p := s.pods[r][g]; p.exists && !p.lost {
			return g, true
		}
	}
	return 0, false
}

// reliedOn: some agent relies on the promise of Pod (r, g).
func (s *state) reliedOn(r, g int) bool {
	bit := uint8(1) << index(r, g)
	for _, rank := range s.pods {
		for _, p := range rank {
			if p.exists && p.vouchers&bit != 0 {
				return true
			}
		}
	}
	return false
}

type step struct {
	label     string
	next      state
	violation string
}

// quiet are the steps that happen without faults.
func quiet(s state) []step {
	var out []step
	add := func(n state, violation string, format string, args ...any) {
		out = append(out, step{label: fmt.Sprintf(format, args...), next: n, violation: violation})
	}
	for r := range ranks {
		for g := range gens {
			p := s.pods[r][g]
			if !p.exists {
				continue
			}
			// Time passes on a silent node; an API server outage is
			// shorter than the defer limit (a longer one stops every
			// worker, as documented).
			// An agent acts on its silence at once, long before the next
			// level (a tick, a round of questions, its worker's stop).
			if nd := s.nodes[r][g]; !pending(s, r, g) && (s.nodeSilent(r, g) && nd.level < pastFence || lastingSilence(nd) && nd.level < pastLimit ||
				lastingSilence(nd) && nd.level == pastLimit && !s.reliedOn(r, g)) {
				n := s
				n.nodes[r][g].level++
				add(n, "", "time passes on the node of %s (level %d)", name(r, g), n.nodes[r][g].level)
			}
			if s.regainPending(r, g) {
				out = append(out, backAfterOutage(s, r, g, func(nd *node) { nd.reconnecting = false }, "the agent of %s reaches the API server again"))
			}
			if s.renewalPending(r, g) {
				out = append(out, backAfterOutage(s, r, g, func(nd *node) { nd.renewing = false }, "the kubelet of %s renews the node's Lease again"))
			}
			if p.restarting && !s.nodes[r][g].kubeletDown {
				n := s
				q := &n.pods[r][g]
				q.restarting, q.agentUp = false, true
				q.joined, q.seen, q.fenced, q.witnessed, q.vouchers = 0, false, false, agent.NotAsked, 0
				add(n, "", "kubelet restarts the containers of %s", name(r, g))
				continue
			}
			if p.lost && !s.leaseSilent(r, g) && (p.agentUp || p.worker != 0) {
				// Its kubelet in contact stops a Pod declared lost.
				n := s
				n.pods[r][g] = pod{exists: true, lost: true, confirmed: true, promisesOver: p.promisesOver}
				add(n, "", "kubelet stops the lost %s", name(r, g))
				continue
			}
			if !p.agentUp {
				continue
			}
			if s.agentSilent(r, g) {
				out = append(out, silentAgentSteps(s, r, g)...)
			} else {
				out = append(out, agentSteps(s, r, g)...)
				if s.nodeSilent(r, g) {
					out = append(out, fenceSteps(s, r, g)...)
				}
			}
		}
	}
	if !s.apiDown {
		out = append(out, controllerSteps(s)...)
	}
	return out
}

// backAfterOutage: the agent or the kubelet of (r, g) reaches the API
// server back (done); the node's silence ends once neither is left.
func backAfterOutage(s state, r, g int, done func(*node), format string) step {
	n := s
	done(&n.nodes[r][g])
	if !n.nodeSilent(r, g) {
		n.nodes[r][g].level = inContact
	}
	return step{label: fmt.Sprintf(format, name(r, g)), next: n}
}

// lastingSilence: a silence of the node that no API server's return ends.
func lastingSilence(nd node) bool { return nd.cut || nd.agentCut || leaseFence && nd.kubeletDown }

func name(r, g int) string { return fmt.Sprintf("pod %d-%d", r, g) }

// agentSteps: an agent in contact sees the JobSet as it is.
func agentSteps(s state, r, g int) []step {
	p := s.pods[r][g]
	n := s
	q := &n.pods[r][g]
	q.seen, q.viewSynced, q.viewDeprecated = true, s.synced, s.deprecated
	q.witnessed, q.vouchers = agent.NotAsked, 0 // in contact: it relies on nobody
	switch agent.Next(int32(p.joined), agent.Epochs{Synced: int32(s.synced), Deprecated: int32(s.deprecated)}) {
	case agent.Join:
		// The admission policy refuses an epoch to a Pod declared lost; a
		// promise holds its joins.
		if p.lost || s.reliedOn(r, g) {
			break
		}
		// A confirmation names the epoch it confirms, which the Pod no
		// longer shows.
		q.joined, q.confirmed = s.synced+1, false
		return []step{{label: fmt.Sprintf("agent of %s joins epoch %d", name(r, g), q.joined), next: n}}
	case agent.Restart:
		if p.worker != 0 && s.sharedOnly {
			n.sharedOnly = false // a group restart, not of the outage's making
		}
		// Through the wrapper, whether its kubelet runs or not; in
		// contact, it confirms the stop on its Pod.
		q.worker, q.agentUp, q.restarting, q.confirmed = 0, false, true, true
		return []step{{label: fmt.Sprintf("agent of %s stops its worker through the wrapper, confirms, and exits with the restart code", name(r, g)), next: n}}
	case agent.Lift:
		if p.lost {
			break // the admission policy refuses the write again
		}
		if p.fenced {
			q.fenced = false
			return []step{{label: fmt.Sprintf("agent of %s writes epoch %d again", name(r, g), p.joined), next: n}}
		}
		if p.worker == 0 && workerCanStart(s, r, g) {
			q.worker = p.joined
			return []step{{label: fmt.Sprintf("agent of %s lifts: worker starts at %d", name(r, g), p.joined), next: n, violation: unsafeStart(n, r, g)}}
		}
	}
	if n != s {
		return []step{{label: fmt.Sprintf("agent of %s reads the JobSet", name(r, g)), next: n}}
	}
	return nil
}

// silentAgentSteps: a silent agent acts on what it saw last, and on its
// fence.
func silentAgentSteps(s state, r, g int) []step {
	p := s.pods[r][g]
	var out []step
	// What it saw before the silence: a synced epoch lifts at once.
	if liftPending(s, r, g) {
		n := s
		n.pods[r][g].worker = p.joined
		out = append(out, step{label: fmt.Sprintf("silent agent of %s lifts on what it saw: worker starts at %d", name(r, g), p.joined),
			next: n, violation: unsafeStart(n, r, g)})
	}
	return append(out, fenceSteps(s, r, g)...)
}

// fenceSteps: the agent of (r, g) acts on the silence its fence counts.
func fenceSteps(s state, r, g int) []step {
	p := s.pods[r][g]
	var out []step
	switch agent.Fence(s.silence(r, g), limits) {
	case agent.HoldBarrier:
		n := s
		n.pods[r][g].fenced = true
		out = append(out, step{label: fmt.Sprintf("agent of %s holds its barrier", name(r, g)), next: n})
	case agent.AskWitnesses:
		out = append(out, ask(s, r, g)...)
	case agent.StopWorker:
		n := s
		q := &n.pods[r][g]
		violation := ""
		if s.sharedOnly {
			violation = fmt.Sprintf("no harm: the agent of %s stops its worker in an API server outage", name(r, g))
		}
		q.worker, q.agentUp, q.restarting, q.vouchers = 0, false, true, 0
		out = append(out, step{label: fmt.Sprintf("agent of %s fences: stops its worker", name(r, g)), next: n, violation: violation})
	case agent.CarryOn:
		if p.witnessed == agent.Vouched {
			// Before its witnesses' promises run out, it asks again.
			out = append(out, ask(s, r, g)...)
		}
	}
	return out
}

// pending: the agent of (r, g) has yet to act on its silence.
func pending(s state, r, g int) bool {
	p := s.pods[r][g]
	if p.restarting {
		// Its worker stopped; the restart waits for a kubelet that runs.
		return !s.nodes[r][g].kubeletDown
	}
	if !p.agentUp || !s.nodeSilent(r, g) {
		return false
	}
	if s.regainPending(r, g) || s.renewalPending(r, g) {
		return true // its next retry, or its kubelet's, within its backoff's cap
	}
	switch agent.Fence(s.silence(r, g), limits) {
	case agent.HoldBarrier, agent.AskWitnesses, agent.StopWorker:
		return true
	}
	return liftPending(s, r, g)
}

// workerCanStart: a lift starts the worker of (r, g) only through its
// kubelet, which starts the worker container once the agent's startup
// probe says the barrier lifted: a kubelet that is down starts nothing, and
// one that runs starts nothing of a Pod declared lost, which it sees
// deleted.
func workerCanStart(s state, r, g int) bool {
	return !s.pods[r][g].lost && !s.nodes[r][g].kubeletDown
}

// liftPending: the agent saw its epoch synced before its silence and has
// yet to lift, which it does at once.
func liftPending(s state, r, g int) bool {
	p := s.pods[r][g]
	return workerCanStart(s, r, g) && p.agentUp && p.seen && p.worker == 0 && !p.fenced && p.joined != 0 &&
		agent.Next(int32(p.joined), agent.Epochs{Synced: int32(p.viewSynced), Deprecated: int32(p.viewDeprecated)}) == agent.Lift
}

// ask is the agent of (r, g) asking every peer on another node: each in
// contact says so, each silent one that joined no later epoch promises.
// Peers answer in an order of the asker's own: enough promises may come
// before a peer in contact is heard, or after.
func ask(s state, r, g int) []step {
	asker := s.pods[r][g]
	var vouchers uint8
	promises, inContact := 0, false
	for pr := range ranks {
		for pg := range gens {
			w := s.pods[pr][pg]
			if !w.exists || !w.agentUp || (pr == r && pg == g) {
				continue
			}
			switch {
			case !s.nodeSilent(pr, pg):
				inContact = true
			case w.joined != 0 && w.joined <= asker.joined && s.level(pr, pg) < pastLimit:
				vouchers |= 1 << index(pr, pg)
				promises++
			}
		}
	}
	var out []step
	if promises >= witnessesNeeded {
		n := s
		n.pods[r][g].witnessed, n.pods[r][g].vouchers = agent.Vouched, vouchers
		out = append(out, step{label: fmt.Sprintf("agent of %s is vouched for by %08b", name(r, g), vouchers), next: n})
	}
	if inContact || promises < witnessesNeeded {
		// The promises it held last still cover its worker's stop.
		n := s
		n.pods[r][g].witnessed = agent.Alone
		out = append(out, step{label: fmt.Sprintf("agent of %s is alone", name(r, g)), next: n})
	}
	return out
}

// controllerSteps: the controller syncs the group, deprecates an epoch a
// member lost, and declares ranks lost by Lost.
func controllerSteps(s state) []step {
	var out []step
	// Declaring lost: the silent nodes that still run a Pod of the group.
	silentNodes := 0
	for r := range ranks {
		for g := range gens {
			nd, p := s.nodes[r][g], s.pods[r][g]
			switch {
			case p.exists && p.lost && !p.promisesOver && countLostWitnesses:
				// Whatever its node does now: its agent may have vouched
				// for a peer while cut off, not knowing it was replaced.
				silentNodes++
			case (nd.cut && nd.level < pastPromises || nd.kubeletDown || nd.renewing) && p.exists && (p.agentUp || p.restarting || p.worker != 0):
				// A node whose kubelet has yet to renew after an
				// outage is as silent to the controller as its agent
				// is to an asker.
				silentNodes++
			}
		}
	}
	bound, deferred := 30*time.Second, limits.DeferLimit+15*time.Second
	for r := range ranks {
		p, nd := s.pods[r][0], s.nodes[r][0]
		// A node whose kubelet alone is down is silent to the
		// controller past any bound while its agent stays in contact.
		fenced := (nd.cut || leaseFence && nd.kubeletDown) && nd.level >= pastFence
		if !p.exists || p.lost || !fenced && (leaseFence || !nd.kubeletDown) {
			continue
		}
		// The bound leaves the agent time to act on its fence time, the
		// deferred bound time to stop its worker whatever.
		silence := bound
		if nd.level == pastPromises {
			silence = deferred
		}
		// Counted whole: Lost counting from a shared silence's end
		// declares only where this does, later (rule_test.go).
		if pending(s, r, 0) || !Lost(silence, silence, bound, deferred, silentNodes, witnessesNeeded) {
			continue
		}
		n := s
		n.pods[r][0].lost = true
		violation := ""
		if s.sharedOnly {
			violation = fmt.Sprintf("no harm: rank %d declared lost in an API server outage", r)
		}
		n.pods[r][1] = pod{exists: true, agentUp: true}
		if s.synced > s.deprecated {
			n.deprecated = s.synced
		}
		out = append(out, step{label: fmt.Sprintf("controller declares rank %d lost (%d silent nodes)", r, silentNodes), next: n, violation: violation})
	}
	// A member's worker stopped in a synced group (its kubelet reports the
	// restart): a group restart.
	if s.synced > s.deprecated {
		for r := range ranks {
			g, ok := s.current(r)
			if p := s.pods[r][g]; ok && !s.leaseSilent(r, g) && (p.restarting || p.agentUp && p.joined != s.synced) {
				n := s
				n.deprecated = s.synced
				out = append(out, step{label: fmt.Sprintf("controller sees %s restart: deprecates epoch %d", name(r, g), s.synced), next: n})
				break
			}
		}
	}
	// Sync: every rank's member joined synced+1, after a deprecation, and
	// no Pod declared lost may still run its worker.
	if s.deprecated == s.synced {
		all := true
		for r := range ranks {
			for g := range gens {
				p := s.pods[r][g]
				all = all && !(holdLostWorkers && p.exists && p.lost && !p.confirmed && !p.boundPassed)
			}
		}
		for r := range ranks {
			g, ok := s.current(r)
			all = all && ok && s.pods[r][g].joined == s.synced+1
		}
		if all {
			n := s
			n.synced++
			out = append(out, step{label: fmt.Sprintf("controller syncs epoch %d", n.synced), next: n})
		}
	}
	return out
}

// unsafeStart: the worker of (r, g) just started.
func unsafeStart(s state, r, g int) string {
	e := s.pods[r][g].worker
	for pr := range ranks {
		for pg := range gens {
			p := s.pods[pr][pg]
			if !p.exists || p.worker == 0 || (pr == r && pg == g) {
				continue
			}
			if pr == r {
				return fmt.Sprintf("safety: rank %d runs twice (%s starts while %s runs at %d)", r, name(r, g), name(pr, pg), p.worker)
			}
			if p.worker != e {
				return fmt.Sprintf("safety: mixed epochs (%s starts at %d while %s runs at %d)", name(r, g), e, name(pr, pg), p.worker)
			}
		}
	}
	return ""
}

// faults are the world's steps.
func faults(s state) []step {
	if s.faults >= maxFaults {
		return nil
	}
	var out []step
	add := func(n state, shared bool, format string, args ...any) {
		n.faults++
		n.sharedOnly = s.sharedOnly && shared
		out = append(out, step{label: fmt.Sprintf(format, args...), next: n})
	}
	startSilence := func(n *state, r, g int) {
		if n.nodes[r][g].level == inContact {
			n.nodes[r][g].level = silent
		}
	}
	endSilence := func(n *state, r, g int) {
		if nd := &n.nodes[r][g]; !n.apiDown && !nd.cut && !nd.agentCut {
			nd.level, nd.reconnecting, nd.renewing = inContact, false, false
		}
	}
	for r := range ranks {
		nd := s.nodes[r][0]
		switch {
		case !nd.cut && !nd.agentCut && !nd.kubeletDown:
			n := s
			n.nodes[r][0].cut = true
			startSilence(&n, r, 0)
			add(n, false, "node %d is cut off", r)
			n = s
			n.nodes[r][0].agentCut = true
			startSilence(&n, r, 0)
			add(n, false, "the agent of node %d loses the API server, its kubelet does not", r)
			if r == 0 {
				// Of one node only: the ranks are alike, and the states
				// of three would not fit in memory.
				n = s
				n.nodes[r][0].kubeletDown = true
				if leaseFence {
					startSilence(&n, r, 0)
				}
				add(n, false, "the kubelet of node %d goes down, its containers and network stay up", r)
			}
			if next := s.nodes[(r+1)%ranks][0]; !next.cut && !next.agentCut {
				n = s
				n.nodes[r][0].cut, n.nodes[(r+1)%ranks][0].cut = true, true
				startSilence(&n, r, 0)
				startSilence(&n, (r+1)%ranks, 0)
				add(n, false, "nodes %d and %d are cut off together", r, (r+1)%ranks)
			}
		default:
			n := s
			n.nodes[r][0].cut, n.nodes[r][0].agentCut, n.nodes[r][0].kubeletDown = false, false, false
			endSilence(&n, r, 0)
			add(n, s.sharedOnly, "node %d is back", r)
		}
	}
	if !s.apiDown && s.reconnecting() {
		// An API server that fails again before every agent reached it
		// is outside the model (docs/controller.md, "Shared silence").
		return out
	}
	n := s
	n.apiDown = !s.apiDown
	for r := range ranks {
		for g := range gens {
			nd := &n.nodes[r][g]
			switch {
			case n.apiDown:
				nd.reconnecting, nd.renewing = false, false
				startSilence(&n, r, g)
			case nd.level != inContact && !nd.cut:
				// Its agent reaches the server on a retry of its own,
				// after some of its peers may have (quiet), and so
				// does its kubelet, whose renewal the agent may see
				// after its own return.
				nd.reconnecting = !nd.agentCut
				nd.renewing = leaseFence && !nd.kubeletDown
			}
		}
	}
	if n.apiDown {
		add(n, true, "the API server goes down")
	} else {
		add(n, true, "the API server is back")
	}
	return out
}

// lostBoundMayPass: the bound from the mark of lost Pod (r, g) leaves its
// agent time to act: one in contact reads the deprecation and stops its
// worker, one silent since before reaches its fence time and acts on it.
func lostBoundMayPass(s state, r, g int) bool {
	p := s.pods[r][g]
	if pending(s, r, g) {
		return false
	}
	if p.agentUp && !s.agentSilent(r, g) &&
		agent.Next(int32(p.joined), agent.Epochs{Synced: int32(s.synced), Deprecated: int32(s.deprecated)}) == agent.Restart {
		return false
	}
	return !(p.agentUp && s.agentSilent(r, g) && p.worker != 0 && s.level(r, g) < pastFence)
}

// settle passes the controller's bounds from the mark of each lost Pod as
// soon as they may: the earliest is the most adversarial, since each only
// releases the controller (the hold of its group's sync, the count of its
// node), and taking them at once spares the states of every later moment.
func settle(s state) state {
	for r := range ranks {
		for g := range gens {
			p := &s.pods[r][g]
			if !p.exists || !p.lost {
				continue
			}
			if !p.boundPassed && lostBoundMayPass(s, r, g) {
				p.boundPassed = true
			}
			if !p.promisesOver && lostPromisesMayPass(s, r, g) {
				p.promisesOver = true
			}
		}
	}
	return s
}

// lostPromisesMayPass: the controller's promise bound from the mark of
// lost Pod (r, g) leaves its agent time to have stopped vouching and every
// promise it made to have run out: it either read the deprecation in
// contact within 2 s of the mark and exited, or, cut off before, passed its
// defer limit; and each agent that relied on it asked again or stopped.
func lostPromisesMayPass(s state, r, g int) bool {
	p := s.pods[r][g]
	return !pending(s, r, g) && !s.reliedOn(r, g) && (!p.agentUp || s.level(r, g) >= pastLimit)
}

// converged: no fault pending, every rank's member runs at the synced epoch.
func converged(s state) bool {
	if s.apiDown {
		return false
	}
	for r := range ranks {
		g, ok := s.current(r)
		if !ok || s.pods[r][g].worker != s.synced || s.pods[r][g].worker == 0 {
			return false
		}
	}
	return true
}

// agentCutOff: an agent is cut off while its kubelet is not; the group may
// wait for it, since nothing is lost (liveness is not asked of it).
func (s *state) agentCutOff() bool {
	for r := range ranks {
		if s.nodes[r][0].agentCut {
			return true
		}
	}
	return false
}

func TestFenceChecker(t *testing.T) {
	found, explored := explore(nil)
	for _, v := range found {
		t.Error(v)
	}
	t.Logf("explored %d states", explored)
}

// TestFenceCheckerNodeLease: agents that fence on their node's Lease need
// no hold of lost Pods: the kubelet down alone is fenced as a node cut off.
func TestFenceCheckerNodeLease(t *testing.T) {
	leaseFence, holdLostWorkers = true, false
	defer func() { leaseFence, holdLostWorkers = false, true }()
	found, explored := explore(nil)
	for _, v := range found {
		t.Error(v)
	}
	t.Logf("explored %d states", explored)
}

// TestFenceCheckerNodeLeaseWithoutRegainingRenewal: without the wait for
// its kubelet's renewal, an agent back from an API server outage whose
// peers' kubelets renewed first is alone with its node's Lease still
// stale, and stops its worker.
func TestFenceCheckerNodeLeaseWithoutRegainingRenewal(t *testing.T) {
	leaseFence, holdLostWorkers, regainRenewal = true, false, false
	defer func() { leaseFence, holdLostWorkers, regainRenewal = false, true, true }()
	expected := func(v string) bool {
		return strings.Contains(v, "no harm") && strings.Contains(v, "renews the node's Lease again")
	}
	found, explored := explore(expected)
	if !slices.ContainsFunc(found, expected) {
		t.Fatalf("no worker stopped in an API server outage (explored %d states); found %q", explored, found)
	}
	t.Logf("explored %d states; found, as expected:\n%s", explored, strings.Join(found, "\n"))
}

// TestFenceCheckerWithoutHold: without the hold of lost Pods, the group
// syncs beside a worker whose kubelet is down before its agent, in
// contact, stopped it.
func TestFenceCheckerWithoutHold(t *testing.T) {
	holdLostWorkers = false
	defer func() { holdLostWorkers = true }()
	expectRunsTwice(t, "the kubelet of node")
}

// TestFenceCheckerWithoutLostWitnesses: without the count of a lost Pod's
// node until its witness bound, its agent, cut off before it read the
// deprecation, vouches for a peer that is then declared lost after the
// ordinary bound while it rides on the promise.
func TestFenceCheckerWithoutLostWitnesses(t *testing.T) {
	countLostWitnesses = false
	defer func() { countLostWitnesses = true }()
	expectRunsTwice(t, "cut off together")
}

// TestFenceCheckerWithoutRegainingContact: without the agent's own try to
// reach the API server, the first agents back after an outage tell the
// others they are alone, and their workers stop.
func TestFenceCheckerWithoutRegainingContact(t *testing.T) {
	regainContact = false
	defer func() { regainContact = true }()
	expected := func(v string) bool { return strings.Contains(v, "no harm") }
	found, explored := explore(expected)
	if !slices.ContainsFunc(found, expected) {
		t.Fatalf("no worker stopped in an API server outage (explored %d states); found %q", explored, found)
	}
	t.Logf("explored %d states; found, as expected:\n%s", explored, strings.Join(found, "\n"))
}

// expectRunsTwice explores until it finds a rank that runs twice with a
// step in its trace that says step.
func expectRunsTwice(t *testing.T, step string) {
	t.Helper()
	expected := func(v string) bool { return strings.Contains(v, "runs twice") && strings.Contains(v, step) }
	found, explored := explore(expected)
	if !slices.ContainsFunc(found, expected) {
		t.Fatalf("no rank runs twice after %q (explored %d states); found %q", step, explored, found)
	}
	t.Logf("explored %d states; found, as expected:\n%s", explored, strings.Join(found, "\n"))
}

// explore walks every reachable state and returns the first violation of
// each kind, with its trace; it stops at the first that satisfies stop
// (nil: none does), and then checks no liveness.
func explore(stop func(violation string) bool) (found []string, explored int) {
	index := map[state]int32{}
	var states []state
	var parent []int32
	var quietEdges [][]int32
	addState := func(s state, from int32) int32 {
		if i, ok := index[s]; ok {
			return i
		}
		i := int32(len(states))
		index[s] = i
		states = append(states, s)
		parent = append(parent, from)
		quietEdges = append(quietEdges, nil)
		return i
	}
	// A trace's labels are found again by the step from each state to
	// the next: kept for millions of states, they would cost gigabytes.
	label := func(from, to state) string {
		for _, st := range append(quiet(from), faults(from)...) {
			if settle(st.next) == to {
				return st.label
			}
		}
		return "?"
	}
	trace := func(i int32, last string) string {
		var lines []string
		if last != "" {
			lines = append(lines, last)
		}
		for ; i > 0; i = parent[i] {
			lines = append(lines, label(states[parent[i]], states[i]))
		}
		for l, r := 0, len(lines)-1; l < r; l, r = l+1, r-1 {
			lines[l], lines[r] = lines[r], lines[l]
		}
		return "  " + strings.Join(lines, "\n  ")
	}
	reported := map[string]bool{}
	stopped := false
	report := func(violation string, at int32, last string) {
		kind, _, _ := strings.Cut(violation, ":")
		if reported[kind] && stop == nil {
			return
		}
		reported[kind] = true
		v := fmt.Sprintf("%s\n%s", violation, trace(at, last))
		if stop == nil || stop(v) {
			found = append(found, v)
			stopped = stop != nil
		}
	}
	addState(settle(initial()), -1)
	for i := int32(0); int(i) < len(states) && !stopped; i++ {
		s := states[i]
		for _, st := range quiet(s) {
			if st.violation != "" {
				report(st.violation, i, st.label)
				continue
			}
			quietEdges[i] = append(quietEdges[i], addState(settle(st.next), i))
		}
		for _, st := range faults(s) {
			if st.violation != "" {
				report(st.violation, i, st.label)
				continue
			}
			addState(settle(st.next), i)
		}
		if len(states) > maxStates {
			found = append(found, fmt.Sprintf("the model outgrew the checker: more than %d states", maxStates))
			return found, len(states)
		}
	}
	if stop != nil {
		return found, len(states)
	}
	// Liveness: quiet steps from every state can reach a converged one,
	// once no node stays cut off forever... or its rank was replaced.
	reverse := make([][]int32, len(states))
	for from, tos := range quietEdges {
		for _, to := range tos {
			reverse[to] = append(reverse[to], int32(from))
		}
	}
	canConverge := make([]bool, len(states))
	var frontier []int32
	for i, s := range states {
		if converged(s) {
			canConverge[i] = true
			frontier = append(frontier, int32(i))
		}
	}
	for len(frontier) > 0 {
		i := frontier[len(frontier)-1]
		frontier = frontier[:len(frontier)-1]
		for _, from := range reverse[i] {
			if !canConverge[from] {
				canConverge[from] = true
				frontier = append(frontier, from)
			}
		}
	}
	for i, s := range states {
		if !canConverge[i] && !s.apiDown && !s.agentCutOff() {
			report("liveness: quiet steps never bring the group back in sync with every rank running", int32(i), "")
			break
		}
	}
	return found, len(states)
}
