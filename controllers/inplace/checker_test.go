package inplace

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/fastjobset/jobset/agent"
)

// The checker explores every interleaving, up to a bound, of a small
// InPlaceRestart JobSet: three worker Pods (slots) over two replicated Jobs,
// the real agent (agent.Next) in each Pod, a kubelet, a Job controller, and
// our controller running the real Decide on an informer cache that may lag
// behind the API server per object.
//
// The controller holds each live Pod its cache shows with the group-member
// finalizer (adoptions), and tells Decide which live Pods are not held yet
// (Pod.Unheld). The Job controller creates Pods without the finalizer; the
// first Pods start held (see initial). The kubelet ends a deleted Pod
// Failed unless its worker runs and exits 0 on the SIGTERM: then Succeeded,
// and its Job counts the index complete. Held, the Pod stays, and the
// controller sees that it left while running (Pod.Left, LostIndex); unheld,
// it goes once its Job counted it, and nothing shows that the index was
// lost.
//
// The world may fail workers, evict, delete and garbage-collect Pods, delete
// a Job by hand, and let workers finish, within a budget of faults; and, in
// a run without faults, Kueue may suspend the JobSet, which stops every Pod
// (each running worker exiting 0 or 1), and resume it. A lost index ends a
// run with a full restart, after which the new Pods start over as from the
// initial state.
//
// In every reachable state it checks:
//
//   - safety: no worker starts at epoch e unless its group synced e, which
//     it may only once every slot of it that still has work has a Pod whose
//     agent joined e; no two workers of a group run at different epochs,
//     and no rank runs twice;
//   - budget exactness: group restarts counted never exceed the disruptions
//     of a synced group that happened, and equal them once the group is quiet;
//   - liveness: with no more faults, fair quiet steps reach a synced group
//     of every slot that still has work, with every worker running: no
//     index counts complete whose worker did not finish;
//   - the Pod tally: an informer event after which Decide's output on the
//     cache differs is one the tally calls news.
//
// A violation prints the shortest trace that reaches it.
//
// In the process tier (processTier, TestProtocolCheckerProcessTier) every
// Pod's worker runs under the worker wrapper and its agent survives a
// group restart: on a deprecation, or its worker's exit, it tells the
// wrapper to stop the worker and leaves its epoch only once the wrapper
// confirmed that nothing of it is left (stopping until then); it then
// joins again as a new agent would. The wrapper's kill-and-confirm is a
// step of its own; while the agent waits for it, it may escalate at any
// time (the bound passed, or the wrapper's socket died): it exits with the
// restart code and the kubelet restarts every container, as in the Pod
// tier. A wrapper that dies ends its container, and the kubelet's rule
// restarts every container of the Pod.
//
// In the groups mode (scopedGroups, TestProtocolCheckerScopedGroups) the
// JobSet declares two in-place groups: Job a's slots are group a, Job b's
// slot group b. Each group has epochs of its own in the status, which are
// all its Pods' agents follow, and the controller decides each on its own
// Pods, the groups one after the other in a reconcile. The budget is the
// JobSet's, small enough here for two faults to spend it: each decision
// reads the restarts counted so far, those of the decisions before it in
// the same reconcile included. Escalation is the JobSet's too: a lost
// index in either group restarts every Job, one recovery of both groups:
// it answers each disruption that no restart answered yet, and counts
// not at all while either group's restart is under way, which it
// escalates; a spent budget in either fails the JobSet.
// The controller does not pace the Pod events of a JobSet of several
// groups, so its tally keeps no failure sign, and the tally is not
// checked. Kueue does not suspend the JobSet in this mode, and a node is
// cut off only once both groups synced (see faults and cutOff). Safety,
// liveness and the budget are checked per group, the budget's total as
// well (never past the budget, which fails the JobSet only when a
// disruption is left unanswered), and:
//
//   - isolation: a group that nothing touched in the run (a fault of one
//     of its Pods, its node cut off, a fault of every running worker that
//     hit one of its, a full restart) keeps its epochs once it synced, and
//     every worker of it runs on: no fault of the other group, and no
//     decision on it, reaches the group.

const (
	slots       = 3
	maxObjects  = 5 // three Pods and two replacements
	maxFailures = 2 // faults injected per run: one failure during a gather
	maxRestarts = 10
	// groupsMaxRestarts is the budget of the groups mode, which two
	// faults can spend: the decision of one group must read the restart
	// another started in the same reconcile.
	groupsMaxRestarts = 2
)

// restartLimit is the JobSet's failurePolicy.maxRestarts.
func restartLimit() int32 {
	if scopedGroups {
		return groupsMaxRestarts
	}
	return maxRestarts
}

// cutOff: a node may be cut off (the run's first fault) in state s. In
// the groups mode only once every group synced: a cut while a group
// gathers for the first time is the one group's case, which the other
// searches check, and would double this search; what only this one
// checks, a cut node's Pod, its fence and its loss beside another group,
// starts there.
func cutOff(s state) bool {
	if !scopedGroups {
		return true
	}
	for k := range groupCount() {
		if s.groups[k].synced < 1 {
			return false
		}
	}
	return true
}

// jobOf maps a slot to its replicated Job: slots 0 and 1 are the two
// indexes of Job "a", slot 2 the only index of Job "b".
var jobOf = [slots]int{0, 0, 1}

type phase uint8

const (
	running phase = iota
	failed
	succeeded
)

// pod is one Pod object as the kubelet and the API server know it.
type pod struct {
	exists   bool
	slot     int8
	gen      int8 // replacement number within the slot
	phase    phase
	deleting bool
	// annotation is the epoch annotation in the API (0: none). The agent
	// writes it directly, so it is never stale.
	annotation int8
	agentUp    bool
	joined     int8 // the running agent's epoch (0: not joined)
	restarting bool // the kubelet is restarting every container
	worker     int8 // the epoch the running worker started at (0: not running)
	// signal: the Pod's status in the API shows a failure since its agent
	// joined (a worker terminated non-zero, every container restarting
	// in place), until the kubelet has the agent running again.
	signal bool
	// counted: the Job controller accounted for the terminated Pod (its
	// tracking finalizer holds the Pod until then).
	counted bool
	// orphan: its Job was deleted by hand (in the background) and
	// recreated: the new Job neither counts nor replaces it, and made a
	// replacement at once.
	orphan bool
	// held: the Pod carries the group-member finalizer. The Job controller
	// creates Pods without it; the controller adds it to the live Pods its
	// cache shows, and releases a Pod as soon as it sees it end, which the
	// model folds into the ending, but for a Pod that left while running
	// (left): that one it holds until its Job accounted for it.
	held bool
	// cut: the Pod's node is cut off from the API server: its kubelet and
	// containers go on, but nothing of the node reaches the API server or
	// hears from it. viewSynced and viewDeprecated are the epochs its agent
	// saw last, before the cut.
	cut                        bool
	viewSynced, viewDeprecated int8
	// lost: the controller marked the Pod Failed and deleted it (its node
	// was lost), but the kubelet has not stopped its containers: while the
	// node is cut off it cannot know, and once back it has not acted yet.
	lost bool
	// fenced: the running agent fenced while its worker waited at the
	// barrier: it keeps its epoch but lifts only after writing it again.
	// It belongs to the running agent, and goes with it.
	fenced bool
	// stopping (the process tier): the agent told the wrapper to stop the
	// worker and waits for its confirmation; until then the worker, or
	// what its exit left behind, may still run at its epoch.
	stopping bool
	// fenceKept: an agent of the Pod stopped its running worker by its
	// fence at the epoch the Pod shows (it had joined it), recorded in the
	// Pod's state directory until the next join, which writes the record
	// (the annotation jobset.sigs.k8s.io/fenced) when it joins the epoch
	// after it. fenceRecorded: the Pod's record names the epoch before the
	// one it shows (a later join leaves an older record, which names none
	// Decide reads).
	fenceKept, fenceRecorded bool
}

// processTier: every Pod's agent drives a worker wrapper and restarts
// its worker's process (docs/controller.md, "The process tier"); false:
// the Pod tier, every restart through the agent's exit.
var processTier bool

// joinBeforeStopped is a deliberate fault of the process tier's agent, to
// show that the checker finds it: the agent leaves its epoch (and may
// join the next) as soon as it tells the wrapper to stop, not once the
// wrapper confirmed.
var joinBeforeStopped bool

// beginStop: the agent of q tells the wrapper to stop the worker.
func beginStop(q *pod) {
	q.stopping = true
	if joinBeforeStopped {
		q.joined = 0
	}
}

// restartAll: the agent exits (the restart code, a crash) or the worker
// container ends, and the kubelet restarts every container of the Pod.
func restartAll(q *pod) {
	q.worker, q.restarting, q.agentUp, q.joined, q.fenced, q.stopping = 0, true, false, 0, false, false
}

// left: the Pod was deleted while its worker ran, the worker exited 0 on
// the SIGTERM, and the group-member finalizer still holds the Pod
// (leftWhileRunning).
func (p pod) left() bool { return p.phase == succeeded && p.deleting && p.held }

// cached is what the controller's informer holds of one Pod.
type cached struct {
	exists     bool
	slot, gen  int8
	phase      phase
	deleting   bool
	annotation int8
	signal     bool
	held       bool
	fenced     bool
}

func (p pod) view() cached {
	if !p.exists {
		return cached{}
	}
	return cached{exists: true, slot: p.slot, gen: p.gen, phase: p.phase, deleting: p.deleting, annotation: p.annotation, signal: p.signal, held: p.held,
		fenced: p.fenceRecorded}
}

func (c cached) live() bool { return c.exists && c.phase == running && !c.deleting }

func (c cached) left() bool { return c.phase == succeeded && c.deleting && c.held }

type state struct {
	pods  [maxObjects]pod
	cache [maxObjects]cached
	// completed: the Job counts the slot's index complete; completedCache
	// is the controller's informer copy of the Jobs' status.
	completed, completedCache [slots]bool
	// made counts the Pods the Job controller created per slot.
	made [slots]int8
	// finished: the slot's worker finished its work on its own (ground
	// truth: the slot has no work left).
	finished [slots]bool
	// signs are the controller's tally's kept failure signals, per Pod
	// object: the epoch the Pod showed when the informer delivered a sign
	// of it in sync (0: none).
	signs [maxObjects]int8

	// groups are the in-place groups' epochs and accounting: one group
	// of every slot, or in the groups mode one a replicated Job (groupOf).
	groups       [maxGroups]group
	jobSetFailed bool
	// fullRestart: the controller recreated every Job for a lost index;
	// fullRestarts counts those that counted toward the budget.
	fullRestart  bool
	fullRestarts int8

	// suspended is the JobSet's spec.suspend, which Kueue sets to preempt
	// it (once a run: preempted) and clears to resume it. jobsSuspended:
	// the controller suspended the Jobs and recorded the suspension in the
	// status, with each group that had synced regathering: the Pods after
	// the resume gather at S+1 without a group restart
	// (Snapshot.Regathering).
	suspended, jobsSuspended, preempted bool

	failures int8 // faults injected so far
}

// group is one in-place group's part of the status and of the ground
// truth the checker keeps on it.
type group struct {
	synced, deprecated int8
	// restarts are the group's restarts in place that counted toward the
	// budget; the JobSet's count, which every group's decision reads, is
	// their sum.
	restarts    int8
	regathering bool
	// disruptions counts the synced groups that lost a member to a fault
	// of the group's own, before a group restart started; disrupted says
	// the current synced group did already. A fence that stops a worker
	// owes no restart: it is the platform's doing. fencedOut lists (one
	// bit a Pod object) the members the current synced group lost to a
	// fence: a fault of such a Pod afterwards (deleted, evicted, its node
	// declared lost) is still one of the group's own.
	disruptions int8
	disrupted   bool
	fencedOut   uint8
	// faulted is the Pod object (+1) whose fault disrupted the current
	// synced group; forgiven counts the disruptions a restart that fences
	// started absorbed because the API showed nothing of them when it
	// started (a worker's exit the kubelet had not reported, the Pod not
	// rejoined yet): outside what the controller can count.
	faulted  int8
	forgiven int8
	// absorbed (the groups mode): the group's disruption that a full
	// restart answered without counting for it: another group's lost
	// index, or its own while another group's restart was under way.
	absorbed int8
	// touched (the groups mode): something that may stop the group's
	// workers happened to it in this run: a fault of one of its own Pods
	// (its node cut off among them), a fault of every running worker that
	// hit one of its, a suspension or a full restart. Only then may its
	// epochs move past a synced one, or a worker of it stop (isolated).
	touched bool
}

// maxGroups: the groups mode has two in-place groups.
const maxGroups = 2

// scopedGroups: the groups mode (TestProtocolCheckerScopedGroups): each
// replicated Job is an in-place group of its own, with its own epochs,
// decided on its own Pods; the restart budget is the JobSet's.
var scopedGroups bool

// sharedEpochs is a deliberate fault of the groups mode, to show that the
// checker finds it: every agent follows group a's epochs, as one that
// read the JobSet's default group would.
var sharedEpochs bool

// groupOf maps a slot to its in-place group.
func groupOf(slot int8) int {
	if scopedGroups {
		return jobOf[slot]
	}
	return 0
}

// groupCount is the number of in-place groups the mode has.
func groupCount() int {
	if scopedGroups {
		return maxGroups
	}
	return 1
}

// readsGroup is the group whose epochs the agent of p follows.
func readsGroup(p pod) int {
	if sharedEpochs {
		return 0
	}
	return groupOf(p.slot)
}

// inPlaceRestarts is the JobSet's count of group restarts in place that
// counted toward the budget.
func (s *state) inPlaceRestarts() int8 {
	var n int8
	for _, g := range s.groups {
		n += g.restarts
	}
	return n
}

// touch records, in the groups mode, that a fault hit the slot's group.
func (s *state) touch(slot int8) {
	if scopedGroups {
		s.groups[groupOf(slot)].touched = true
	}
}

// initial is the first Pods, held, as if the controller's first reconcile
// held them before their agents joined. Their unheld start would multiply
// the states of every run; each replacement starts unheld, and the gather
// waits for its hold as it would for a first Pod's.
func initial() state {
	var s state
	for i := range slots {
		s.pods[i] = pod{exists: true, slot: int8(i), agentUp: true, held: true}
		s.made[i] = 1
	}
	return s
}

// live: a Pod of the slot that can still work (not terminal, not deleting).
func (p pod) live() bool { return p.exists && p.phase == running && !p.deleting }

// runsOnNode: the kubelet runs the Pod's containers as it would a live
// Pod's. A cut-off kubelet has not heard of a deletion, and one back has
// not yet stopped a Pod marked lost meanwhile. (A kubelet that knows of a
// deletion terminates the Pod in one step.)
func (p pod) runsOnNode() bool {
	return p.live() || p.exists && p.cut && p.phase == running || p.lost
}

func (p pod) name() string { return podName(p.slot, p.gen) }

// podNames are precomputed: names are needed for every Decide.
var podNames = func() (names [slots][maxObjects]string) {
	for slot := range slots {
		for gen := range maxObjects {
			names[slot][gen] = fmt.Sprintf("w%d-%d", slot, gen)
		}
	}
	return names
}()

func podName(slot, gen int8) string { return podNames[slot][gen] }

// member: the Pod belongs to its group's synced group.
func (s *state) member(p pod) bool {
	g := &s.groups[groupOf(p.slot)]
	return p.live() && g.synced >= 1 && p.joined == g.synced && !p.restarting
}

// disrupt records the ground truth of a fault on Pod i: the first loss of a
// member since its group synced is one group restart owed. Once the
// JobSet restarted fully, the run is over: the new Pods start over as
// from initial(), and a fault of the old ones owes nothing.
func (s *state) disrupt(i int) {
	if s.fullRestart {
		return
	}
	g := &s.groups[groupOf(s.pods[i].slot)]
	if (s.member(s.pods[i]) || g.fencedOut&(1<<i) != 0) && !g.disrupted && !RestartInProgress(int32(g.synced), int32(g.deprecated)) {
		g.disruptions++
		g.disrupted = true
		g.faulted = int8(i + 1)
	}
}

// fence records that Pod i's agent stopped its running worker by its
// fence: the member leaves the group, and no restart is owed for it.
func (s *state) fence(i int) {
	if s.member(s.pods[i]) {
		s.groups[groupOf(s.pods[i].slot)].fencedOut |= 1 << i
	}
	s.pods[i].fenceKept = true
}

// describing turns on step labels, which only traces need: formatting them
// for each of millions of steps would dominate the run.
var describing bool

func describe(format string, args ...any) string {
	if !describing {
		return ""
	}
	return fmt.Sprintf(format, args...)
}

type step struct {
	label string
	next  state
	// violation, when set, is a safety or budget failure of this step.
	violation *violation
}

// violation is a broken property; kind groups violations so that each kind
// is reported once, with its shortest trace.
type violation struct {
	kind, message string
}

func violated(kind, format string, args ...any) *violation {
	return &violation{kind: kind, message: fmt.Sprintf(format, args...)}
}

// faults are the world's steps: each costs one of maxFailures, except the
// Pod garbage collector, which is free.
func faults(s state) []step {
	out := make([]step, 0, 8)
	add := func(n state, format string, args ...any) {
		out = append(out, step{label: describe(format, args...), next: n})
	}
	for i, p := range s.pods {
		if !p.exists {
			continue
		}
		// The Pod GC collects terminated Pods the Job controller counted.
		if p.phase != running && !p.deleting && p.counted {
			n := s
			n.pods[i] = pod{}
			add(n, "PodGC removes %s", p.name())
		}
		// The node comes back: the world's choice, at no cost, so that
		// liveness is also checked for a node that never does.
		if p.cut {
			n := s
			q := &n.pods[i]
			q.cut, q.viewSynced, q.viewDeprecated = false, 0, 0
			add(n, "the node of %s comes back", p.name())
		}
		if s.failures >= maxFailures || !p.live() {
			continue
		}
		// The node is cut off, as a run's first fault (which keeps the
		// states few enough): it runs on, unheard.
		if s.failures == 0 && cutOff(s) {
			n := s
			n.failures++
			n.touch(p.slot)
			q := &n.pods[i]
			g := s.groups[readsGroup(p)]
			q.cut, q.viewSynced, q.viewDeprecated = true, g.synced, g.deprecated
			add(n, "the node of %s is cut off", p.name())
		}
		// Deleted: the kubelet stops it (a quiet step), and how it ends
		// depends on its worker; a cut-off node's kubelet learns of it
		// when the node comes back.
		n := s
		n.failures++
		n.touch(p.slot)
		n.disrupt(i)
		n.pods[i].deleting = true
		add(n, "%s is deleted", p.name())
		if p.cut {
			continue // what its kubelet reports would not reach the API
		}
		if p.worker != 0 {
			for _, reported := range []bool{true, false} {
				n := s
				n.failures++
				n.touch(p.slot)
				n.disrupt(i)
				q := &n.pods[i]
				restartAll(q)
				q.signal = reported
				if processTier {
					add(n, "the wrapper of %s dies: its container ends, every container restarts (status reported: %v)", p.name(), reported)
				} else {
					add(n, "worker of %s exits 1 (status reported: %v)", p.name(), reported)
				}
			}
			if processTier && !p.stopping {
				// The wrapper reports the exit to the agent, which has it
				// stop what the worker left behind; the container stays.
				n := s
				n.failures++
				n.touch(p.slot)
				n.disrupt(i)
				beginStop(&n.pods[i])
				add(n, "worker of %s exits 1: its wrapper tells the agent, which asks it to stop what is left", p.name())
			}
			// A worker that the agent is stopping ends as its wrapper
			// reports (stopped), which ends no container.
			if !p.stopping {
				n := s
				n.failures++
				n.touch(p.slot)
				q := &n.pods[i]
				q.phase, q.worker, q.agentUp, q.held, q.fenced = succeeded, 0, false, false, false
				n.finished[p.slot] = true
				add(n, "worker of %s finishes its work (exit 0)", p.name())
			}
		}
		n = s
		n.failures++
		n.touch(p.slot)
		n.disrupt(i)
		q := &n.pods[i]
		q.phase, q.worker, q.agentUp, q.restarting, q.held, q.fenced, q.stopping = failed, 0, false, false, false, false, false
		add(n, "%s is evicted (Failed, object kept)", p.name())
	}
	// kubectl delete job, of Job "b" (slot 2): the Job goes at once, its
	// Pod gets SIGTERM and stops over its grace period, and the
	// controller recreates the Job, which makes a new Pod for the slot
	// without waiting for the old one.
	if s.failures < maxFailures && !s.completed[2] {
		n, deleted := s, false
		for i, p := range s.pods {
			if p.live() && p.slot == 2 && !p.orphan {
				n.touch(p.slot)
				n.disrupt(i)
				q := &n.pods[i]
				q.deleting, q.orphan, q.counted = true, true, true
				deleted = true
			}
		}
		if deleted {
			n.failures++
			add(n, "the Job of slot 2 is deleted by hand (its worker exits 1 on SIGTERM)")
		}
	}
	// Kueue preempts the JobSet: it sets spec.suspend, the controller
	// suspends the Jobs, and the Job controller deletes their Pods. Only
	// in a run without faults, and none after it: a fault besides would
	// multiply the states past what a run can explore. Not in the groups
	// mode, whose search it would double: what it does to a group (one
	// that had synced regathers) is the one group's case, which the other
	// searches check.
	if !s.preempted && s.failures == 0 && !s.jobSetFailed && !scopedGroups {
		n := s
		n.failures = maxFailures
		n.suspended, n.preempted = true, true
		for slot := range int8(slots) {
			n.touch(slot)
		}
		add(n, "Kueue suspends the JobSet")
	}
	// The NCCL pattern: one fault makes every running worker exit at once,
	// and the controller sees none of the exits.
	if s.failures < maxFailures {
		n, any := s, false
		for i, p := range s.pods {
			if p.live() && p.worker != 0 && !(processTier && p.stopping) {
				n.touch(p.slot)
				n.disrupt(i)
				q := &n.pods[i]
				if processTier {
					beginStop(q)
				} else {
					restartAll(q)
					q.signal = false
				}
				any = true
			}
		}
		if any {
			n.failures++
			add(n, "every running worker exits 1")
		}
	}
	return checkIsolation(s, out)
}

// quiet are the steps that happen without faults: kubelet, agents, Job
// controller, informers and our controller. They are listed in a fixed
// order so that running them round-robin is fair.
func quiet(s state) []step {
	out := make([]step, 0, 8)
	add := func(n state, format string, args ...any) {
		out = append(out, step{label: describe(format, args...), next: n})
	}
	for i, p := range s.pods {
		if !p.exists {
			continue
		}
		if p.cut && fenceDue(p) {
			// The agent's fence: out of contact for its fence time, it
			// stops a running worker: it exits with the restart code, and
			// the kubelet, alive, restarts every container; the new agent
			// cannot join while cut off. A worker that waits at the
			// barrier goes on waiting, and the agent must write its epoch
			// again before it lifts.
			n := s
			q := &n.pods[i]
			if p.worker != 0 {
				n.fence(i)
				restartAll(q)
				add(n, "agent of %s fences: it exits, every container restarts", p.name())
			} else {
				q.fenced = true
				add(n, "agent of %s fences: its worker waits at the barrier until it writes its epoch again", p.name())
			}
		}
		if p.lost && !p.cut {
			// Back, the kubelet finds the Pod Failed and deleted, and
			// stops its containers; until then they act as before.
			n := s
			q := &n.pods[i]
			q.lost, q.worker, q.agentUp, q.restarting, q.joined, q.fenced, q.stopping = false, 0, false, false, 0, false, false
			add(n, "kubelet stops the containers of the lost %s", p.name())
		}
		switch {
		case p.deleting && p.phase == running && !p.cut:
			// A Pod whose worker is not running (it never started, or
			// waits at the barrier after a restart in place) ends
			// Failed: the kubelet starts no container in a Pod being
			// deleted. A running worker exits 1 on the SIGTERM, or 0, as
			// many trainers do after a checkpoint: then the Pod ends
			// Succeeded, its Job counts the index complete and never
			// replaces it, and only the group-member finalizer keeps a
			// trace of it. (The worker of a Job deleted by hand exits 1.)
			n := s
			q := &n.pods[i]
			q.phase, q.worker, q.agentUp, q.restarting, q.held, q.fenced, q.stopping = failed, 0, false, false, false, false, false
			add(n, "kubelet terminates %s (Failed)", p.name())
			if p.worker != 0 && !p.orphan {
				n := s
				q := &n.pods[i]
				q.phase, q.worker, q.agentUp, q.restarting, q.fenced, q.stopping = succeeded, 0, false, false, false, false
				add(n, "kubelet terminates %s: its worker exits 0 on the SIGTERM (Succeeded, held: %v)", p.name(), p.held)
			}
		case p.deleting && p.counted && !p.held && !p.cut && !p.lost:
			n := s
			n.pods[i] = pod{}
			add(n, "the deleted %s goes away", p.name())
		case p.restarting && p.runsOnNode():
			// A cut-off kubelet restarts them too, but its status
			// does not reach the API.
			n := s
			q := &n.pods[i]
			q.restarting, q.agentUp, q.joined, q.fenced = false, true, 0, false
			if !p.cut {
				q.signal = false
			}
			add(n, "kubelet restarts the containers of %s", p.name())
		case p.agentUp && p.runsOnNode():
			if p.stopping {
				out = append(out, wrapperSteps(s, i)...)
			}
			if st, ok := agentStep(s, i); ok {
				out = append(out, st)
			}
		}
	}
	if n, ok := jobController(s); ok {
		add(n, "Job controller")
	}
	for i := range s.pods {
		if s.cache[i] != s.pods[i].view() {
			n := s
			n.cache[i] = s.pods[i].view()
			n.signs[i] = keptSign(s, s.signs[i], n.cache[i])
			st := step{label: describe("informer delivers Pod object %d", i), next: n}
			if !scopedGroups {
				st.violation = quietButDecisive(s, i, n)
			}
			out = append(out, st)
		}
	}
	if s.completedCache != s.completed {
		n := s
		n.completedCache = s.completed
		add(n, "informer delivers the Jobs")
	}
	if s.fullRestart {
		return nil // the new attempt's Pods start over, as from initial()
	}
	if !s.jobSetFailed {
		if st, ok := reconcile(s); ok {
			out = append(out, st)
		}
		for i, p := range s.pods {
			if p.cut && p.phase == running && !fenceDue(p) && !liftPending(p) {
				out = append(out, markLost(s, i))
			}
		}
	}
	// Kueue admits the JobSet again, once the controller suspended it.
	if s.suspended && s.jobsSuspended {
		n := s
		n.suspended = false
		add(n, "Kueue resumes the JobSet")
	}
	return checkIsolation(s, out)
}

// keptSign is what the tally keeps of a Pod's failure signal once the
// informer delivered c (Tally.Observe): a sign seen in sync, with the epoch
// the Pod showed, until the Pod shows another epoch or goes.
func keptSign(s state, kept int8, c cached) int8 {
	switch {
	case !c.exists:
		return 0
	case c.signal && readsSignals(s):
		return c.annotation
	case kept != c.annotation:
		return 0
	}
	return kept
}

// readsSignals: the last decision left the group in sync (Tally.ReadsSignals).
// The controller does not pace the Pod events of a JobSet of several
// groups: its tally knows no decision, and keeps no sign.
func readsSignals(s state) bool {
	g := s.groups[0]
	return !scopedGroups && !s.suspended && !s.jobsSuspended && !Gathering(int32(g.synced), int32(g.deprecated), g.regathering)
}

// agentStep runs the real agent's decision in Pod i, on the epochs it saw
// last.
func agentStep(s state, i int) (step, bool) {
	p := s.pods[i]
	if p.stopping && !joinBeforeStopped {
		return step{}, false // it waits for the wrapper (wrapperSteps)
	}
	n := s
	q := &n.pods[i]
	switch agent.Next(int32(p.joined), seen(s, p)) {
	case agent.Join:
		// A cut-off agent cannot write; the admission policy refuses an
		// epoch to a Pod that ended or is being deleted (a lost Pod's
		// agent, its node back).
		if p.cut || !p.live() {
			return step{}, false
		}
		synced := s.groups[readsGroup(p)].synced
		q.joined, q.annotation = synced+1, synced+1
		// The fence record goes with the join of the epoch after the
		// fenced one, which the Pod shows (the admission policy admits
		// it only so); any join clears it from the state directory.
		q.fenceRecorded = p.fenceKept && p.annotation == synced || p.fenceRecorded && p.annotation == q.annotation
		q.fenceKept = false
		return step{label: describe("agent of %s joins epoch %d (fence record: %v)", p.name(), q.joined, q.fenceRecorded), next: n}, true
	case agent.Restart:
		if processTier {
			if p.stopping {
				return step{}, false
			}
			beginStop(q)
			return step{label: describe("agent of %s sees epoch %d deprecated: it tells the wrapper to stop the worker", p.name(), p.joined), next: n}, true
		}
		restartAll(q)
		return step{label: describe("agent of %s exits with the restart code", p.name()), next: n}, true
	case agent.Lift:
		if p.worker != 0 {
			return step{}, false
		}
		if p.fenced {
			// A write, which the admission policy refuses to a Pod that
			// ended or is being deleted: a lost Pod's agent, its node
			// back, never lifts.
			if p.cut || !p.live() {
				return step{}, false
			}
			q.fenced = false
			return step{label: describe("agent of %s writes its epoch %d again", p.name(), p.joined), next: n}, true
		}
		q.worker = p.joined
		st := step{label: describe("agent of %s lifts its barrier: worker starts at epoch %d", p.name(), p.joined), next: n}
		st.violation = unsafeStart(n, i)
		return st, true
	}
	return step{}, false
}

// wrapperSteps are what can end a stop in the process tier: the wrapper
// kills the worker's tree and confirms, and the agent leaves its epoch
// (it joins the next as a new agent would); or the agent escalates to the
// Pod tier (the confirmation did not come within its bound, or the
// wrapper's socket died): it exits with the restart code.
func wrapperSteps(s state, i int) []step {
	p := s.pods[i]
	n := s
	q := &n.pods[i]
	q.worker, q.stopping = 0, false
	if !joinBeforeStopped {
		q.joined, q.fenced = 0, false
	}
	confirm := step{label: describe("the wrapper of %s confirms nothing of the worker is left; its agent leaves epoch %d", p.name(), p.joined), next: n}
	n = s
	restartAll(&n.pods[i])
	escalate := step{label: describe("agent of %s gets no confirmation in time: it exits with the restart code, every container restarts", p.name()), next: n}
	return []step{confirm, escalate}
}

// seen is what the Pod's agent knows of its group's epochs.
func seen(s state, p pod) agent.Epochs {
	if p.cut {
		return agent.Epochs{Synced: int32(p.viewSynced), Deprecated: int32(p.viewDeprecated)}
	}
	g := s.groups[readsGroup(p)]
	return agent.Epochs{Synced: int32(g.synced), Deprecated: int32(g.deprecated)}
}

// fenceDue: the agent, out of contact for its fence time, fences. It does
// so once it joined an epoch, running its worker or not: an agent that
// kept an epoch it joined before the cut would lift its barrier when the
// node came back and saw that epoch synced, after its rank was replaced.
func fenceDue(p pod) bool { return p.agentUp && (p.joined != 0 && !p.fenced || p.worker != 0) }

// liftPending: the agent has yet to act on an epoch it saw synced before
// the cut, which it does at once, long before its fence time.
func liftPending(p pod) bool {
	return p.agentUp && p.worker == 0 && p.joined != 0 && p.joined == p.viewSynced && !p.fenced
}

// lostAtSync: a live Pod of group k shows its synced epoch, but its agent
// left it.
func (s *state) lostAtSync(k int) bool {
	synced := s.groups[k].synced
	for _, p := range s.pods {
		if p.live() && groupOf(p.slot) == k && p.annotation == synced && (p.joined != synced || p.restarting) {
			return true
		}
	}
	return false
}

// markLost is the controller declaring a member of a cut-off node lost,
// once the node was silent past the member's bound, which the fence's
// time and the kubelet's restart fit in (fenceDue is false by then): it
// marks the Pod Failed and deletes it, and the finalizer lets it go. Its
// containers run on until the kubelet hears of it. A node that came back
// renews its Lease before the bound runs out, so only a cut-off node's Pod
// is marked.
func markLost(s state, i int) step {
	n := s
	n.disrupt(i)
	q := &n.pods[i]
	q.phase, q.deleting, q.held = failed, true, false
	q.lost = q.agentUp || q.restarting || q.worker != 0
	return step{label: describe("controller marks %s Failed and deletes it: its node is lost", q.name()), next: n}
}

// unsafeStart checks, when the worker of Pod i starts, that its group
// synced its epoch (incompleteSync checked that group), that no worker of
// its group runs at another epoch, and none of its rank at all.
func unsafeStart(s state, i int) *violation {
	e := s.pods[i].worker
	if k := groupOf(s.pods[i].slot); e > s.groups[k].synced {
		return violated("safety: unsynced start", "the worker of %s starts at epoch %d, which its group%s never synced (synced: %d)", s.pods[i].name(), e, groupName(k), s.groups[k].synced)
	}
	for j, p := range s.pods {
		if j != i && p.exists && p.worker != 0 && p.slot == s.pods[i].slot {
			return violated("safety: rank runs twice", "the worker of %s starts while the worker of %s, of the same rank, runs at epoch %d", s.pods[i].name(), p.name(), p.worker)
		}
		if p.exists && p.worker != 0 && p.worker != e && groupOf(p.slot) == groupOf(s.pods[i].slot) {
			return violated("safety: mixed epochs", "the worker of %s starts at epoch %d while the worker of %s runs at epoch %d", s.pods[i].name(), e, p.name(), p.worker)
		}
	}
	return nil
}

// incompleteSync checks that group k syncing at epoch e has every slot of
// it with work left: some Pod of the slot joined e (it may have failed
// since, which is a new failure, not a smaller group).
func incompleteSync(s state, k int, e int8) *violation {
	for slot := range int8(slots) {
		if s.finished[slot] || groupOf(slot) != k {
			continue
		}
		joined := false
		for _, p := range s.pods {
			joined = joined || (p.exists && p.slot == slot && p.annotation == e)
		}
		if !joined {
			return violated("safety: incomplete group", "the group%s syncs at epoch %d without slot %d: no Pod of it joined", groupName(k), e, slot)
		}
	}
	return nil
}

// jobController counts completed indexes and replaces Pods that failed or
// went away (podReplacementPolicy: Failed: only once they are terminal);
// of suspended Jobs, it deletes the Pods and replaces none, one Job a
// step: a resume may come after it stopped one Job's Pods and before the
// other's, and the Pods still at S then regather with the new ones.
func jobController(s state) (state, bool) {
	n, changed := s, false
	stopping := -1 // the suspended Job whose Pods this step deletes
	if s.jobsSuspended {
		for i, p := range s.pods {
			if p.exists && !p.orphan && p.live() {
				stopping = jobOf[s.pods[i].slot]
				break
			}
		}
	}
	for slot := range slots {
		hasLive, hasSucceeded := false, false
		for i, p := range s.pods {
			if !p.exists || int(p.slot) != slot || p.orphan {
				continue
			}
			if p.phase != running && !p.counted {
				n.pods[i].counted, changed = true, true
			}
			if s.jobsSuspended && p.live() && jobOf[slot] == stopping {
				n.pods[i].deleting, changed = true, true
			}
			hasLive = hasLive || p.phase == running
			hasSucceeded = hasSucceeded || p.phase == succeeded
		}
		if hasSucceeded && !n.completed[slot] {
			n.completed[slot], changed = true, true
		}
		if hasLive || n.completed[slot] || s.jobsSuspended {
			continue
		}
		free := -1
		for i, p := range n.pods {
			if !p.exists && n.cache[i] == (cached{}) {
				free = i
				break
			}
		}
		if free < 0 {
			continue // the model's bound; faults are limited so this is rare
		}
		n.pods[free] = pod{exists: true, slot: int8(slot), gen: n.made[slot], agentUp: true}
		n.made[slot]++
		changed = true
	}
	return n, changed
}

// snapshot reads the protocol's inputs of group k from Pods and Jobs as
// the reconciler does: the current attempt's Pods of the group, the
// expected count from its Jobs' completed indexes, and used, the
// JobSet's restarts as the decisions before it left them.
func snapshot(s state, k int, used int8, pods [maxObjects]cached, completed [slots]bool) Snapshot {
	g := s.groups[k]
	snap := Snapshot{
		Synced: int32(g.synced), Deprecated: int32(g.deprecated),
		Regathering: g.regathering,
		MaxRestarts: restartLimit(), RestartsUsed: int32(used),
		Pods: make([]Pod, 0, maxObjects),
	}
	for slot, done := range completed {
		if !done && groupOf(int8(slot)) == k {
			snap.ExpectedPods++
		}
	}
	for i, c := range pods {
		if !c.exists || groupOf(c.slot) != k {
			continue
		}
		p := Pod{
			Name:  podName(c.slot, c.gen),
			Index: podNames[c.slot][0],
			// The Job's completed indexes, read with the Pods.
			IndexComplete: completed[c.slot],
			Succeeded:     c.phase == succeeded,
			Failed:        c.phase == failed,
			Deleting:      c.deleting,
			Left:          c.left(),
			Unheld:        !c.held,
		}
		if c.annotation != 0 {
			p.Epoch = strconv.Itoa(int(c.annotation))
		}
		if c.fenced {
			p.Fenced = strconv.Itoa(int(c.annotation) - 1)
		}
		if c.signal {
			p.FailureSignal = "a container terminated with exit code 1"
		}
		if kept := s.signs[i]; kept != 0 && kept == c.annotation && p.FailureSignal == "" {
			p.FailureSignal = "an earlier status showed a failure"
		}
		snap.Pods = append(snap.Pods, p)
	}
	return snap
}

// reconcile runs the real Decide on the controller's cache, once a group,
// the groups in a fixed order, each on its own Pods and reading the
// JobSet's restarts as the decisions before it left them. A decision
// that writes is made again on a fresh read of the Pods and Jobs (the
// cache may be behind), and that one is applied, as the reconciler does.
// A lost index in any group restarts the JobSet fully. A suspended
// JobSet's reconcile decides no epoch; it still looks for a lost index.
func reconcile(s state) (step, bool) {
	var fresh [maxObjects]cached
	for i, p := range s.pods {
		fresh[i] = p.view()
	}
	n := s
	var labels []string
	// The Jobs follow spec.suspend. Suspending them records that the Pods
	// after the resume regather.
	if s.suspended != s.jobsSuspended {
		n.jobsSuspended = s.suspended
		if s.suspended {
			for k := range n.groups {
				n.groups[k].regathering = s.groups[k].synced >= 1
			}
			labels = append(labels, describe("suspends the Jobs"))
		} else {
			labels = append(labels, describe("resumes the Jobs"))
		}
	}
	var decisions [maxGroups]Decision
	used := s.inPlaceRestarts()
	for k := range groupCount() {
		g := s.groups[k]
		d := decideEpochs(s, k, used, s.cache, s.completedCache)
		if d.Synced != int32(g.synced) || d.Deprecated != int32(g.deprecated) || d.BudgetExceeded || d.LostIndex != "" {
			d = decideEpochs(s, k, used, fresh, s.completed)
		}
		if d.LostIndex != "" {
			return restartFully(s, n, k, d)
		}
		if d.RestartStarted && !d.Fenced {
			used++
		}
		decisions[k] = d
	}
	// Held: the live Pods the cache shows unheld (adoptions), before the
	// status is written. A Pod deleted since refuses the finalizer, one
	// gone is not found.
	for i, c := range s.cache {
		if p := s.pods[i]; c.live() && !c.held && p.live() && p.slot == c.slot && p.gen == c.gen {
			n.pods[i].held = true
			labels = append(labels, describe("holds %s", p.name()))
		}
	}
	// Released: a Pod that left, once its Job accounted for it without
	// counting its index complete (on a fresh read of the Job).
	for i, p := range s.pods {
		if p.left() && p.counted && !s.completed[p.slot] {
			n.pods[i].held = false
			labels = append(labels, describe("releases %s", p.name()))
		}
	}
	for k, d := range decisions[:groupCount()] {
		g, ng := s.groups[k], &n.groups[k]
		if d.BudgetExceeded {
			n.jobSetFailed = true
			labels = append(labels, describe("fails the JobSet: %s%s", groupLabel(k), d.Message))
			break
		}
		if d.Synced == int32(g.synced) && d.Deprecated == int32(g.deprecated) {
			continue
		}
		ng.synced, ng.deprecated = int8(d.Synced), int8(d.Deprecated)
		if d.RestartStarted && !d.Fenced {
			ng.restarts++
		}
		if d.RestartStarted && d.Fenced && g.disrupted {
			// A fault of the group's own came first: the restart counts,
			// unless the API shows nothing of it yet.
			if v := visibleFault(s, k, fresh); v != nil {
				return step{label: describe("controller starts a group restart, uncounted, as for fences only (%s%s)", groupLabel(k), d.Trigger), next: n, violation: v}, true
			}
			ng.forgiven++
		}
		if ng.synced != g.synced {
			ng.disrupted, ng.regathering, ng.fencedOut, ng.faulted = false, false, 0, 0
			// A Pod of a cut-off node may show the epoch it joined
			// while its agent, fenced, left it: the group syncs without
			// the worker, disrupted from the start.
			if n.lostAtSync(k) {
				ng.disruptions++
				ng.disrupted = true
			}
		}
		label := describe("%ssynced %d->%d, deprecated %d->%d", groupLabel(k), g.synced, ng.synced, g.deprecated, ng.deprecated)
		if d.RestartStarted {
			label += describe(", group restart %d starts (%s)", n.inPlaceRestarts(), d.Trigger)
		}
		labels = append(labels, label)
	}
	if n == s {
		return step{}, false
	}
	// The decision is published: a group left gathering drops the signs.
	if g := n.groups[0]; !scopedGroups && Gathering(int32(g.synced), int32(g.deprecated), g.regathering) {
		n.signs = [maxObjects]int8{}
	}
	st := step{label: describe("controller %s", strings.Join(labels, "; ")), next: n}
	for k := range groupCount() {
		if e := n.groups[k].synced; e != s.groups[k].synced && st.violation == nil {
			st.violation = incompleteSync(s, k, e)
		}
	}
	if st.violation == nil {
		st.violation = overCounted(n)
	}
	return st, true
}

// restartFully is the controller's answer to a lost index in group k: it
// recreates every Job, a full restart, which counts when the group, synced,
// lost a member, unless it escalates a group restart in progress (of any
// group: that one counted already), or the JobSet is suspended (a
// preemption stopped the worker), or the group had not synced since Pods
// were recreated. One that counts with the budget spent fails the JobSet
// instead.
func restartFully(s, n state, k int, d Decision) (step, bool) {
	inProgress := false
	for j := range groupCount() {
		inProgress = inProgress || RestartInProgress(int32(s.groups[j].synced), int32(s.groups[j].deprecated))
	}
	counts := false
	if g := s.groups[k]; !s.suspended && g.synced >= 1 && !g.regathering && !inProgress {
		if int32(s.inPlaceRestarts()) >= restartLimit() {
			n.jobSetFailed = true
			return step{label: describe("controller fails the JobSet: %s, and the budget is spent", d.LostIndex), next: n}, true
		}
		n.fullRestarts++
		counts = true
	}
	n.fullRestart = true
	for slot := range int8(slots) {
		n.touch(slot)
	}
	// It is one recovery of every group: a disruption that no restart
	// answered yet, but the one it counts for, it answers without
	// counting again, as a group restart answers every loss of its synced
	// group. So two groups' faults cost the same whichever the controller
	// saw first.
	for j := range groupCount() {
		if o := &n.groups[j]; o.disrupted && !RestartInProgress(int32(o.synced), int32(o.deprecated)) && !(counts && j == k) {
			o.absorbed++
		}
	}
	st := step{label: describe("controller restarts fully: %s", d.LostIndex), next: n}
	st.violation = overCounted(n)
	return st, true
}

// decideEpochs is group k's epoch decision on the given Pods and Jobs:
// Decide's, but of a suspended JobSet only whether an index was lost.
func decideEpochs(s state, k int, used int8, pods [maxObjects]cached, completed [slots]bool) Decision {
	snap := snapshot(s, k, used, pods, completed)
	if s.suspended {
		return Decision{Synced: snap.Synced, Deprecated: snap.Deprecated, LostIndex: LostIndex(snap.Pods)}
	}
	return Decide(snap)
}

// quietButDecisive holds the Pod tally to Decide: when the informer
// delivers a change of Pod object i after which Decide's output on the
// cache differs, the tally, weighing the event against what the last
// decision left (the status), must call it news. A Pod created or gone is
// always news; only an update of the same Pod can be quiet.
func quietButDecisive(s state, i int, delivered state) *violation {
	before, after := s.cache[i], delivered.cache[i]
	if s.suspended || s.jobsSuspended {
		return nil // no epoch is decided, and the tally knows no decision
	}
	if !before.exists || !after.exists || before.slot != after.slot || before.gen != after.gen {
		return nil
	}
	used := s.inPlaceRestarts()
	was, is := Decide(snapshot(s, 0, used, s.cache, s.completedCache)), Decide(snapshot(delivered, 0, used, delivered.cache, s.completedCache))
	if outcome(was) == outcome(is) {
		return nil
	}
	t := NewTally()
	t.Publish(gatherOf(s))
	for _, c := range s.cache {
		if c.exists {
			t.Observe(podName(c.slot, c.gen), markOf(c, t.ReadsSignals()))
		}
	}
	if t.Observe(podName(after.slot, after.gen), markOf(after, t.ReadsSignals())) {
		return nil
	}
	return violated("tally: decisive event quiet", "the tally calls the change of %s quiet, but Decide's output changes from %+v to %+v",
		podName(after.slot, after.gen), outcome(was), outcome(is))
}

// decisionOutcome is what a decision does, without its wording.
type decisionOutcome struct {
	synced, deprecated                        int32
	started, completed, overBudget, lostIndex bool
}

func outcome(d Decision) decisionOutcome {
	return decisionOutcome{d.Synced, d.Deprecated, d.RestartStarted, d.RestartCompleted, d.BudgetExceeded, d.LostIndex != ""}
}

// markOf is what the tally keeps of a cached Pod, as the controller reads
// it (every Pod of the model is of the same attempt).
func markOf(c cached, withSignal bool) *Mark {
	m := &Mark{Attempt: "0", Member: jobNames[jobOf[c.slot]], Succeeded: c.phase == succeeded, Failed: c.phase == failed,
		Deleting: c.deleting, Left: c.left(), Unheld: !c.held, FailureSignal: withSignal && c.signal}
	if c.annotation != 0 {
		m.Epoch = strconv.Itoa(int(c.annotation))
	}
	return m
}

// gatherOf is what the last decision left the group gathering at, as the
// controller publishes it from the status.
func gatherOf(s state) *Gather {
	g := s.groups[0]
	if !Gathering(int32(g.synced), int32(g.deprecated), g.regathering) {
		return nil
	}
	return &Gather{Attempt: "0", Group: sets.New(jobNames[:]...), Epoch: int32(g.synced) + 1}
}

var jobNames = [...]string{"a", "b"}

// groupLabel names group k in a trace, in the groups mode.
func groupLabel(k int) string {
	if !scopedGroups {
		return ""
	}
	return "group " + jobNames[k] + ": "
}

// groupName names group k in a message, in the groups mode.
func groupName(k int) string {
	if !scopedGroups {
		return ""
	}
	return " " + jobNames[k]
}

// visibleFault: the Pod whose fault disrupted group k's synced group shows
// it in the API (fresh) when a group restart that only fences caused
// starts: it ended or is being deleted, shows a failure signal, or joined
// the next epoch without a fence record of the synced one. Such a fault
// must count.
func visibleFault(s state, k int, fresh [maxObjects]cached) *violation {
	g := s.groups[k]
	if g.faulted == 0 {
		return nil
	}
	i := g.faulted - 1
	c := fresh[i]
	switch {
	case !c.exists:
	case c.phase != running || c.deleting || c.signal || c.annotation == g.synced+1 && !c.fenced:
	default:
		return nil
	}
	return violated("budget: a fence hid a failure", "a group restart starts uncounted, as if only fences caused it, but Pod object %d shows the fault of its own that disrupted the synced group (or is gone)", i)
}

// disruptions are the disruptions of every group.
func (s *state) disruptions() int8 {
	var n int8
	for _, g := range s.groups {
		n += g.disruptions
	}
	return n
}

// overCounted: the JobSet counted more restarts than its groups were
// disrupted, or a group more restarts in place than it was.
func overCounted(s state) *violation {
	counted := s.inPlaceRestarts() + s.fullRestarts
	if int32(counted) > restartLimit() {
		return violated("budget: exceeded", "budget: %d restarts counted (%d in place, %d full), more than the %d the budget allows",
			counted, s.inPlaceRestarts(), s.fullRestarts, restartLimit())
	}
	if counted > s.disruptions() {
		return violated("budget: over-counted", "budget: %d restarts counted (%d in place, %d full), but the synced group was disrupted %d times",
			counted, s.inPlaceRestarts(), s.fullRestarts, s.disruptions())
	}
	for k, g := range s.groups {
		if g.restarts > g.disruptions {
			return violated("budget: over-counted", "budget: group%s counted %d restarts in place, but was disrupted %d times", groupName(k), g.restarts, g.disruptions)
		}
	}
	return nil
}

// converged checks a quiet state: every slot with work left runs its worker
// in its group's synced group, and every disruption was counted once.
func converged(s state) *violation {
	if s.jobSetFailed {
		// Only a spent budget fails it, and only when it leaves a
		// disruption unanswered.
		var forgiven int8
		for _, g := range s.groups {
			forgiven += g.forgiven
		}
		if counted := s.inPlaceRestarts() + s.fullRestarts; int32(counted) < restartLimit() || s.disruptions() <= counted+forgiven {
			return violated("liveness: JobSet failed", "liveness: the JobSet failed with %d restarts counted of the %d the budget allows, for %d disruptions (%d forgiven)",
				counted, restartLimit(), s.disruptions(), forgiven)
		}
		return nil
	}
	if s.fullRestart {
		var uncounted int8
		for _, g := range s.groups {
			uncounted += g.forgiven + g.absorbed
		}
		if counted := s.inPlaceRestarts() + s.fullRestarts + uncounted; counted != s.disruptions() {
			return violated("budget: miscounted", "budget: %d restarts counted (%d in place, %d full) for %d disruptions of a synced group",
				counted, s.inPlaceRestarts(), s.fullRestarts, s.disruptions())
		}
		return nil
	}
	for slot := range int8(slots) {
		if s.finished[slot] {
			continue
		}
		if s.completed[slot] {
			return violated("liveness: group shrank", "liveness: with no more faults, slot %d's index counts complete but its worker never finished: the group shrank", slot)
		}
		synced := s.groups[groupOf(slot)].synced
		ok := false
		for _, p := range s.pods {
			ok = ok || (p.live() && p.slot == slot && p.joined == synced && p.worker == synced && synced >= 1)
		}
		if !ok {
			return violated("liveness: stalled", "liveness: with no more faults, slot %d has no Pod running its worker at the synced epoch %d", slot, synced)
		}
	}
	for k, g := range s.groups {
		if g.restarts+g.forgiven != g.disruptions {
			return violated("budget: miscounted", "budget: %d group restarts counted (and %d absorbed unseen by a restart fences started) for %d disruptions of a synced group%s",
				g.restarts, g.forgiven, g.disruptions, groupName(k))
		}
	}
	return nil
}
