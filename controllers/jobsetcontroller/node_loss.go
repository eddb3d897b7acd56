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
// server for its fence time F (the agent's fence), and the kubelet, alive,
// killed the worker within K. The link went down at c; the kubelet last
// renewed at c - R at the earliest (R its renew interval), so the
// controller saw that renewal no earlier, and declares no earlier than
// c - R + bound. With bound >= F + R + K the worker stopped first. Each side
// measures its own durations; no clock is compared with another.
//
// A frozen node (a hung VM) runs nothing, its worker neither; when it
// thaws, its agent finds it stalled past its fence and stops the worker at
// once, within K. A Pod whose agent does not fence (FENCE_AFTER_SECONDS=0)
// is never declared lost: only an administrator can (the out-of-service
// taint, or deleting the Node).
//
// A full restart deletes the earlier attempt's Jobs in the foreground: each
// goes once its Pods are gone, and the new attempt's Job of the same name
// waits for it. A Pod deleted on a silent node stays Terminating for ever
// (its kubelet never confirms the end), and the restart with it. Such a Pod
// whose agent fences is declared lost past the same bound, for the same
// reason: its worker stopped before, and can start again only through an
// epoch written to a Pod that is gone. Removed, it frees its Job. A Pod of
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

// DefaultNodeLossThreshold is the least bound of a member: the default
// fence (15 s), a renew interval (10 s) and the kubelet's restart of the
// Pod's containers.
const DefaultNodeLossThreshold = 30 * time.Second

// fenceRestart is K above: the kubelet sees the agent exit and kills every
// container, the worker with a 2 s grace.
const fenceRestart = 5 * time.Second

// nodeLoss is how the reconciler tells lost members: silence nil or
// threshold 0 turns it off.
type nodeLoss struct {
	silence   NodeSilence
	threshold time.Duration
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
// for one whose node is silent but not yet past it (0: none is).
func lostMembers(js *jobset.JobSet, pods []corev1.Pod, loss nodeLoss, now time.Time) (lost []lostMember, lookAgain time.Duration) {
	if loss.silence == nil || loss.threshold <= 0 || !keepsMembers(js) {
		return nil, 0
	}
	_, group := inPlaceGroup(js)
	for i := range pods {
		pod := &pods[i]
		node := pod.Spec.NodeName
		if node == "" || pod.Labels[jobset.JobSetUIDKey] != string(js.UID) || going(pod) {
			continue
		}
		earlier, again := !ofCurrentAttempt(js, pod), markedLost(pod)
		switch {
		case earlier:
			if pod.DeletionTimestamp == nil || !inplace.Stopping(pod) {
				continue // not deleted yet, or ended: its kubelet's last word removes it
			}
		case !group.Has(pod.Labels[jobset.ReplicatedJobNameKey]) || (!inplace.Live(pod) && !inplace.Stopping(pod)):
			continue
		case again && pod.DeletionTimestamp == nil:
			continue // deleted again whatever its node (lostUndeleted)
		}
		fence, fences := agentFence(pod)
		if !fences {
			continue
		}
		silence, interval, known := loss.silence(node)
		if !known {
			continue
		}
		bound := max(loss.threshold, fence+interval+fenceRestart)
		switch {
		case silence >= bound:
			lost = append(lost, lostMember{pod: pod, node: node, lastHeard: now.Add(-silence), again: again, earlier: earlier, why: fmt.Sprintf(
				"node %s has not renewed its Lease for %s (the bound is %s: the agent's fence of %s, a renew interval of %s and the kubelet's restart of the Pod)",
				node, silence.Round(time.Second), bound, fence, interval)})
		case suspect(silence, interval):
			if wait := bound - silence; lookAgain == 0 || wait < lookAgain {
				lookAgain = wait
			}
		}
	}
	return lost, lookAgain
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

// agentFence is the fence time of the Pod's agent, and false when it does
// not fence (or its value cannot be read from its spec: a value from a
// ConfigMap, say).
func agentFence(pod *corev1.Pod) (time.Duration, bool) {
	i := sidecar.Index(pod.Spec)
	if i < 0 {
		return 0, false
	}
	for _, env := range pod.Spec.InitContainers[i].Env {
		if env.Name != agentspec.EnvFenceAfterSeconds {
			continue
		}
		seconds, err := strconv.Atoi(env.Value)
		if env.ValueFrom != nil || err != nil || seconds <= 0 {
			return 0, false
		}
		return time.Duration(seconds) * time.Second, true
	}
	return agentspec.DefaultFenceAfterSeconds * time.Second, true
}

// suspect: a node silent for more than a renew interval and a half missed
// a renewal; it may be lost.
func suspect(silence, renewInterval time.Duration) bool {
	return silence > renewInterval+renewInterval/2
}
