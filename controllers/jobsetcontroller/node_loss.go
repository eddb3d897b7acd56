package jobsetcontroller

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
	"github.com/fastjobset/jobset/controllers/nodeloss"
)

// A node that dies, hangs or is cut off from the API server keeps its Node
// object: its Pods stay Running in the API, and Kubernetes evicts them only
// after the 300 s unreachable toleration, gracefully, which a dead kubelet
// never completes. A member of an in-place group on such a node would keep
// the whole group waiting. So the controller declares a member lost once
// its node's kubelet has been silent (its Lease not renewed, as the
// controller saw it: nodeloss.Tracker) for the member's bound, and marks it
// Failed with a DisruptionTarget condition, as the Pod garbage collector
// does: its Job replaces it, the finalizer lets it go, the group restarts
// in place around the replacement, counted once.
//
// Why the bound is safe when the node is not dead but cut off: the node's
// agent stopped its worker once it had been out of contact with the API
// server for its fence time F (the agent's fence, which looks every tick),
// and the worker was gone within K (workerStop, read from the Pod). The
// link went down at c; the kubelet last renewed at c - R at the earliest
// (R its renew interval, stretched by the Lease controller's jitter), so
// the controller saw that renewal no earlier, and declares no earlier than
// c - R + bound. With bound >= F + tick + R + K the worker stopped first.
// Each side measures its own durations; no clock is compared with another.
//
// A frozen node (a hung VM) runs nothing, its worker neither; when it
// thaws, its agent finds it stalled past its fence and stops the worker at
// once, within K. A Pod whose agent does not fence (FENCE_AFTER_SECONDS=0)
// is never declared lost: only an administrator can (the out-of-service
// taint, or deleting the Node).
//
// Shared silence. An agent whose peers on other nodes are out of contact
// too keeps its worker running past F (agent/witness.go): an API server
// outage that every node shares stops nothing. Its witnesses promised to
// join no later epoch meanwhile, so the group cannot move on without them
// unless they are declared lost as well. So a member is declared lost after
// the bound above only while few enough nodes of the JobSet are silent:
// at most w, the least FENCE_WITNESSES of the group's agents, counting
// every suspect node that still runs a Pod of the JobSet, including Pods
// already declared lost whose kubelet has not reported them stopped, and
// those of the current attempt whose agent may have vouched for a peer
// unseen (mayVouchUnseen); their finalizer keeps them readable meanwhile
// (releasable). An agent and its
// w witnesses are w+1 silent nodes, so the last of them could not have been
// declared lost while the others still ran. Past that count, a member is
// declared lost only after its agent's defer limit (FENCE_DEFER_LIMIT_SECONDS)
// plus R and K: by then its agent stopped its worker whatever its peers
// said (docs/controller.md, "Shared silence").
//
// A full restart deletes the earlier attempt's Jobs in the foreground: each
// goes once its Pods are gone, and the new attempt's Job of the same name
// waits for it. A Pod deleted on a silent node stays Terminating for ever
// (its kubelet never confirms the end), and the restart with it. Such a Pod
// whose agent fences is declared lost past its deferred bound: its
// witnesses, of the earlier attempt, hold no group of the new one, so only
// the defer limit, after which its agent stopped its worker whatever they
// said, makes removing it safe (an agent that asks no witness: its bound).
// Its worker can start again only through an epoch written to a Pod that
// is gone. Removed, it frees its Job. A Pod of
// an earlier attempt whose agent does not fence, or that has none (a
// replicatedJob outside the in-place group), is left to Kubernetes, as
// community JobSet leaves it: nothing says its worker stopped, and removing
// it would let the new attempt start its rank beside a worker that may still
// run on a node cut off, not dead. The restart waits for an administrator
// there (the out-of-service taint, or deleting the Node).

// NodeSilence reports how long a node's kubelet has been silent as the
// controller saw it, and its renew interval; known is false for a node it
// knows nothing of (nodeloss.Tracker.Silence).
type NodeSilence func(node string) (silence, renewInterval time.Duration, known bool)

// DefaultNodeLossThreshold is the least bound of a member that the
// administrator asks for. The bound the controller keeps is longer
// wherever the Pod's agent or its node's kubelet needs it (bounds): with
// the default fence and a kubelet's default Lease, 28.65 s; with a Lease
// renewed every 5 s (nodeLeaseDurationSeconds: 20), 23.45 s.
const DefaultNodeLossThreshold = 20 * time.Second

// renewJitter is how much later than its renew interval a kubelet may
// renew its Lease: the Lease controller's jitter of the interval.
const renewJitter = 0.04

// The kubelet's share of K for a worker without the wrapper: it notices the
// agent's exit at its next relist, then kills the Pod's running regular
// containers one after another before the sidecars, each with at least
// its 2 s grace (RestartAllContainers asks for none), and removes them.
const (
	kubeletNotice      = time.Second
	kubeletKillGrace   = 2 * time.Second
	kubeletRemoveSlack = time.Second
)

// workerStop is K above for the Pod: how long after its agent's fence
// fired its worker may still run. An agent that drives a worker wrapper
// has it stop the worker's whole tree itself: the wrapper's grace and
// slack. Without one, the kubelet stops it, the worker possibly last of
// the Pod's regular containers.
func workerStop(pod *corev1.Pod, wrapped bool) time.Duration {
	if wrapped {
		return (agentspec.WorkerStopGraceSeconds + agentspec.WorkerStopSlackSeconds) * time.Second
	}
	return kubeletNotice + time.Duration(len(pod.Spec.Containers))*kubeletKillGrace + kubeletRemoveSlack
}

// nodeLoss is how the reconciler tells lost members: silence nil or
// threshold 0 turns it off.
type nodeLoss struct {
	silence NodeSilence
	// ended tells a node's last spell of silence that ended (nil: none
	// is known), so that a member's silence counts from when it stopped
	// being shared (nodeloss.Alone).
	ended     func(node string) (nodeloss.Spell, bool)
	threshold time.Duration
}

// alone is how long the node has been silent since its silence was last
// shared with another of the group's nodes (nodeloss.Alone).
// With no witnesses asked for, no agent rides out a shared silence, and the
// silence counts whole.
func (l nodeLoss) alone(node string, silence, interval time.Duration, groupNodes map[string]bool, witnesses int, now time.Time) time.Duration {
	if l.ended == nil || witnesses == 0 {
		return silence
	}
	var spells []nodeloss.Spell
	for other := range groupNodes {
		if spell, ok := l.ended(other); ok && other != node {
			spells = append(spells, spell)
		}
	}
	return nodeloss.Alone(now, silence, interval, spells)
}

// groupNodes are the nodes of the Pods of the JobSet's group, of any
// restart attempt.
func groupNodes(js *jobset.JobSet, pods []corev1.Pod) map[string]bool {
	_, group := inplace.Group(js)
	nodes := map[string]bool{}
	for i := range pods {
		pod := &pods[i]
		if pod.Spec.NodeName != "" && pod.Labels[jobset.JobSetUIDKey] == string(js.UID) && group.Has(pod.Labels[jobset.ReplicatedJobNameKey]) {
			nodes[pod.Spec.NodeName] = true
		}
	}
	return nodes
}

// lostMember is a member to mark Failed, and why.
type lostMember struct {
	pod  *corev1.Pod
	node string
	why  string
	// lastHeard is when the controller last saw the node renew its Lease,
	// by its own clock: since then the Pod was not known to be ready.
	lastHeard time.Time
	// again: the Pod carries the mark already; its kubelet came back, wrote
	// its phase over the mark and was lost again before it stopped the Pod.
	// Its Job replaced it the first time.
	again bool
	// earlier: a Pod of an earlier restart attempt that a full restart
	// deletes; its Job is being deleted and replaces nothing.
	earlier bool
}

// lostMembers picks the members of the JobSet's in-place group whose node
// has been silent past their bound at now, and the Pods of its earlier
// restart attempts being deleted on such a node, and when to look again
// for one whose node is silent but not yet past it (0: none is). That
// includes a Pod marked lost and going: its group counts its worker
// stopped only once the rule declares it lost (fenced), and a node's
// silence is counted afresh by a new leadership term, or after the
// controller's own quiet spell, with no event when it reaches the bound.
func lostMembers(js *jobset.JobSet, pods []corev1.Pod, loss nodeLoss, now time.Time) (members []lostMember, lookAgain time.Duration) {
	if loss.silence == nil || loss.threshold <= 0 || !keepsMembers(js) {
		return nil, 0
	}
	_, group := inplace.Group(js)
	silent, witnesses := loss.sharedSilence(js, pods, now)
	nodes := groupNodes(js, pods)
	for i := range pods {
		if !markedLost(&pods[i]) {
			continue
		}
		// Its node stops counting then: a member past its bound may be
		// lost, and the Pod is released.
		if until, counts := loss.vouchesUnseenUntil(js, &pods[i], agentFence(&pods[i])); counts && now.Before(until) {
			lookAgain = sooner(lookAgain, until.Sub(now))
		}
	}
	for i := range pods {
		pod := &pods[i]
		node := pod.Spec.NodeName
		if node == "" || pod.Labels[jobset.JobSetUIDKey] != string(js.UID) {
			continue
		}
		earlier, again := !inplace.OfCurrentAttempt(js, pod), markedLost(pod)
		switch {
		case going(pod) && (earlier || !again):
			continue // no group waits for it to be declared lost
		case earlier:
			if pod.DeletionTimestamp == nil || !inplace.Stopping(pod) {
				continue // not deleted yet, or ended: its kubelet's last word removes it
			}
		case !group.Has(pod.Labels[jobset.ReplicatedJobNameKey]) || (!inplace.Live(pod) && !inplace.Stopping(pod)):
			continue
		case again && pod.DeletionTimestamp == nil:
			continue // deleted again whatever its node (lostUndeleted)
		}
		fence := agentFence(pod)
		if !fence.fences {
			continue
		}
		silence, interval, known := loss.silence(node)
		if !known {
			continue
		}
		bound, deferred := loss.bounds(fence, interval)
		alone := loss.alone(node, silence, interval, nodes, witnesses, now)
		lost := nodeloss.Lost(silence, alone, bound, deferred, silent, witnesses)
		why := fmt.Sprintf("the bound is %s: the agent's fence of %s, a renew interval of %s and the kubelet's restart of the Pod", bound, fence.after, interval)
		if fence.leaseFence() {
			why = fmt.Sprintf("the bound is %s: the agent's fence on its node's Lease unrenewed for %s, and its stop of the worker", bound, agentspec.NodeLeaseFenceAfter(fence.after, interval))
		}
		if alone < silence {
			why += fmt.Sprintf(", counted from when the silence stopped being shared with another node of the group %s ago", alone.Round(time.Second))
		}
		switch {
		case earlier:
			// The earlier attempt's witnesses hold no group of this one.
			bound, lost = deferred, silence >= deferred
			why = fmt.Sprintf("a Pod of an earlier restart attempt: the bound is the agent's defer limit of %s, a renew interval of %s, the kubelet's restart of the Pod and a witness's promise",
				fence.deferLimit, interval)
		case witnesses > 0 && silent > witnesses:
			bound = deferred
			why = fmt.Sprintf("%d nodes of the JobSet are silent at once, more than the %d its agents' witnesses allow: the bound is the agent's defer limit of %s, a renew interval of %s, the kubelet's restart of the Pod and a witness's promise",
				silent, witnesses, fence.deferLimit, interval)
		}
		switch {
		case lost && going(pod):
			// Nothing to mark: the API server removes it once its
			// finalizers are off. Its group counts its worker stopped
			// from now (fenced).
		case lost:
			members = append(members, lostMember{pod: pod, node: node, lastHeard: now.Add(-silence), again: again, earlier: earlier, why: fmt.Sprintf(
				"node %s has not renewed its Lease for %s (%s)", node, silence.Round(time.Second), why)})
		case nodeloss.Suspect(silence, interval):
			lookAgain = sooner(lookAgain, min(bound-alone, deferred-silence))
		}
	}
	return members, lookAgain
}

// fenced returns whether a Pod marked lost had its worker stopped by its
// agent's fence: its node is still silent past the bound at which the rule
// would declare it lost now (nil: no node is watched). A node that renews
// again has a kubelet that will report the Pod stopped; one the controller
// knows nothing of leaves the Pod to go from the API (releasable).
func (l nodeLoss) fenced(js *jobset.JobSet, pods []corev1.Pod, now time.Time) func(*corev1.Pod) bool {
	if l.silence == nil || l.threshold <= 0 || !keepsMembers(js) {
		return nil
	}
	// Counted on first use: most reconciles have no marked Pod to ask
	// about, and counting walks every Pod of the JobSet.
	silent, witnesses, counted := 0, 0, false
	var nodes map[string]bool
	return func(pod *corev1.Pod) bool {
		if !markedLost(pod) || pod.Spec.NodeName == "" {
			return false
		}
		fence := agentFence(pod)
		if !fence.fences {
			return false
		}
		silence, interval, known := l.silence(pod.Spec.NodeName)
		if !known {
			return false
		}
		if !counted {
			silent, witnesses = l.sharedSilence(js, pods, now)
			nodes = groupNodes(js, pods)
			counted = true
		}
		bound, deferred := l.bounds(fence, interval)
		return nodeloss.Lost(silence, l.alone(pod.Spec.NodeName, silence, interval, nodes, witnesses, now), bound, deferred, silent, witnesses)
	}
}

// bounds are a member's bound while its group's silence is not shared,
// and once it may be. Besides what keeps a replacement safe (the agent's
// fence, a renew interval and the worker's stop: see above), the bound
// covers the controller's own quiet spell and a renew interval: a spell
// shorter than nodeloss.QuietGap with no Lease renewed at all still
// counts as the nodes' silence (the controller cannot tell it from theirs
// until it lasts that long), so a healthy node seen renewing again after
// it must still be within its bound.
//
// An agent that stops a wrapped worker itself and fences on its node's
// Lease counts from the same renewal as the controller (agent/node_lease.go),
// so its bound needs no renew interval of slack: its fence on the Lease, a
// tick, the worker's stop, and deliverySlack for a renewal the agent saw
// before the controller did.
func (l nodeLoss) bounds(f agentFenceSettings, renewInterval time.Duration) (bound, deferred time.Duration) {
	renew := renewInterval + time.Duration(float64(renewInterval)*renewJitter)
	fenced := f.after + agentspec.FenceTick + renew + f.stop
	if f.leaseFence() {
		fenced = agentspec.NodeLeaseFenceAfter(f.after, renewInterval) + agentspec.FenceTick + f.stop + deliverySlack
	}
	bound = max(l.threshold, nodeloss.QuietGap+renew, fenced)
	deferred = bound
	if f.witnesses > 0 {
		// Past its defer limit, the agent stops its worker and vouches for
		// no one; every promise it made before runs out within a promise's
		// length, and the agents that relied on one have asked again and
		// stopped their own workers.
		deferred = max(bound, f.deferLimit+agentspec.FenceTick+renew+f.stop+agentspec.WitnessPromiseSeconds*time.Second)
	}
	return bound, deferred
}

// sharedSilence counts the silent nodes that may still run a Pod of the
// JobSet's group, of any restart attempt (mayRunUnheard), with the nodes of
// the Pods it marked lost whose promises may still bind a peer
// (mayVouchUnseen), and tells the least number of witnesses the group's
// agents ask for (0: none asks, and every agent fences alone).
func (l nodeLoss) sharedSilence(js *jobset.JobSet, pods []corev1.Pod, now time.Time) (silent, witnesses int) {
	_, group := inplace.Group(js)
	nodes := map[string]bool{}
	for i := range pods {
		pod := &pods[i]
		if pod.Labels[jobset.JobSetUIDKey] != string(js.UID) || !group.Has(pod.Labels[jobset.ReplicatedJobNameKey]) {
			continue
		}
		fence := agentFence(pod)
		unheard := l.mayRunUnheard(pod, fence) || l.mayVouchUnseen(js, pod, fence, now)
		if !unheard && !inplace.Live(pod) {
			continue
		}
		if w := fence.witnesses; w > 0 && (witnesses == 0 || w < witnesses) {
			witnesses = w
		}
		if unheard {
			nodes[pod.Spec.NodeName] = true
		}
	}
	return len(nodes), witnesses
}

// mayRunUnheard reports whether the Pod's containers may run on a node the
// controller does not hear from (a suspect): it is a member, or leaving
// (being deleted, or marked and not reported stopped by its kubelet); and
// its node has been silent for less than the longest its agent may ride
// out (past that, its agent stopped its worker whatever its peers said).
// Once the node renews again, its kubelet stops a Pod marked lost.
// fence is the Pod's agentFence.
func (l nodeLoss) mayRunUnheard(pod *corev1.Pod, fence agentFenceSettings) bool {
	if l.silence == nil || pod.Spec.NodeName == "" {
		return false
	}
	if !inplace.Live(pod) && !inplace.Stopping(pod) && !(markedLost(pod) && !inplace.ContainersStopped(pod)) {
		return false
	}
	silence, interval, known := l.silence(pod.Spec.NodeName)
	if !known || !nodeloss.Suspect(silence, interval) {
		return false
	}
	if !fence.fences {
		return true
	}
	_, deferred := l.bounds(fence, interval)
	return silence < deferred
}

// mayVouchUnseen reports whether the agent of a Pod the controller marked
// lost may have promised a peer, silent too, to join no later epoch, or
// whether such a promise may still bind: until lostWitnessBound after the
// mark, whatever its node does since. Its node counts among the silent
// ones meanwhile (sharedSilence), so that the peer it vouched for is
// declared lost only at the deferred bound.
//
// Why its node's silence alone does not tell. An agent vouches while it is
// out of contact, and the mark does not reach an agent that lost contact
// before it read the deprecation that follows. Its kubelet may have been
// down alone, its node silent, long before its agent lost contact: the
// node's silence then says nothing of the agent's. Its replacement joins
// in its stead, so its promise holds no epoch back; and once its node
// renews again, or its kubelet reports it stopped, nothing counted it. The
// agent lost contact by the mark and deliverySlack at the latest, vouches
// for no one past its defer limit, and its last promise runs out a
// promise's length later. Only Pods of the current restart attempt count:
// agents vouch only for peers of their own attempt.
func (l nodeLoss) mayVouchUnseen(js *jobset.JobSet, pod *corev1.Pod, fence agentFenceSettings, now time.Time) bool {
	until, counts := l.vouchesUnseenUntil(js, pod, fence)
	return counts && now.Before(until)
}

// vouchesUnseenUntil is when a Pod the controller marked lost stops
// counting (mayVouchUnseen): its mark, deliverySlack, its agent's defer
// limit and a promise's length. counts is false for a Pod that never
// does.
func (l nodeLoss) vouchesUnseenUntil(js *jobset.JobSet, pod *corev1.Pod, fence agentFenceSettings) (until time.Time, counts bool) {
	if l.silence == nil || pod.Spec.NodeName == "" || !fence.fences || !markedLost(pod) || !inplace.OfCurrentAttempt(js, pod) {
		return time.Time{}, false
	}
	bound := deliverySlack + fence.deferLimit + agentspec.WitnessPromiseSeconds*time.Second
	return jobset.ControllerMark(pod).LastTransitionTime.Add(bound), true
}

// markedLost: the controller marked the Pod Failed because its node was
// lost (a DisruptionTarget condition of reason jobset.PodReasonNodeLost).
func markedLost(pod *corev1.Pod) bool {
	mark := jobset.ControllerMark(pod)
	return mark != nil && mark.Type == corev1.DisruptionTarget
}

// going: the Pod is being deleted with no grace period left; the API
// server removes it once its finalizers are off, whatever its kubelet.
func going(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp != nil && ptr.Deref(pod.DeletionGracePeriodSeconds, -1) == 0
}

// lostUndeleted lists the Pods marked lost that are not being deleted: the
// deletion that follows the mark failed, or the leader stopped between the
// two writes. Each is deleted again. A Failed one goes at once. One whose
// kubelet came back and wrote its phase over the mark (phaseWrittenBack)
// is deleted before it is marked Failed again, so gracefully: it stays,
// and holds its group's sync (inplace.Stopping), until its kubelet has
// stopped it, and its agent can write no epoch meanwhile.
func lostUndeleted(pods []corev1.Pod) []*corev1.Pod {
	var undeleted []*corev1.Pod
	for i := range pods {
		if pod := &pods[i]; markedLost(pod) && pod.DeletionTimestamp == nil {
			undeleted = append(undeleted, pod)
		}
	}
	return undeleted
}

// agentFenceSettings is what the Pod's agent does about a silence, read
// from its spec.
type agentFenceSettings struct {
	// fences: the agent stops its worker after a silence of after; it does
	// not (FENCE_AFTER_SECONDS=0), or the value cannot be read from the
	// spec (a value from a ConfigMap, say).
	fences bool
	after  time.Duration
	// witnesses and deferLimit: FENCE_WITNESSES and
	// FENCE_DEFER_LIMIT_SECONDS; a value the spec does not give is taken
	// at its most cautious (one witness, the longest limit).
	witnesses  int
	deferLimit time.Duration
	// wrapped: the agent is given a worker wrapper's control socket, and
	// stops the worker itself.
	wrapped bool
	// stop is how long the worker may run once the fence fired
	// (workerStop).
	stop time.Duration
	// onNodeLease: the agent fences on its node's Lease too
	// (agentspec.EnvFenceNodeLease).
	onNodeLease bool
}

// leaseFence: the agent stops its worker itself on its node's Lease, from
// the renewal the controller counts from: whether its kubelet runs or not,
// and whether its agent is in contact or not (agent/node_lease.go).
func (f agentFenceSettings) leaseFence() bool { return f.onNodeLease && f.wrapped }

func agentFence(pod *corev1.Pod) agentFenceSettings {
	i := sidecar.Index(pod.Spec)
	if i < 0 {
		return agentFenceSettings{}
	}
	f := agentFenceSettings{fences: true, after: agentspec.DefaultFenceAfterSeconds * time.Second,
		witnesses: agentspec.DefaultFenceWitnesses, deferLimit: agentspec.DefaultFenceDeferLimitSeconds * time.Second}
	for _, env := range pod.Spec.InitContainers[i].Env {
		value, err := strconv.Atoi(env.Value)
		known := env.ValueFrom == nil && err == nil && value >= 0
		switch env.Name {
		case agentspec.EnvFenceAfterSeconds:
			f.fences, f.after = known && value > 0, time.Duration(value)*time.Second
		case agentspec.EnvFenceWitnesses:
			f.witnesses = value
			if !known {
				f.witnesses = 1
			}
		case agentspec.EnvFenceDeferLimitSeconds:
			f.deferLimit = time.Duration(value) * time.Second
			if !known {
				f.deferLimit = agentspec.MaxFenceDeferLimitSeconds * time.Second
			}
		case agentspec.EnvWrapperControl:
			f.wrapped = env.Value != "" && env.ValueFrom == nil
		case agentspec.EnvFenceNodeLease:
			f.onNodeLease = env.Value == "true" && env.ValueFrom == nil
		}
	}
	if !f.fences {
		return agentFenceSettings{}
	}
	f.stop = workerStop(pod, f.wrapped)
	return f
}
