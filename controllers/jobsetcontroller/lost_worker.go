package jobsetcontroller

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// The kubelet down alone. A node whose kubelet is down (crash-looping,
// being upgraded) while its containers and network stay up looks to the
// controller like a lost node: its Lease is not renewed. But its agent is
// in contact with the API server and does not fence, and the deprecation
// that follows the mark makes it exit, which only a live kubelet turns
// into a stop of the worker. With a worker wrapper the agent stops the
// worker itself and confirms it on its Pod (agent/worker.go). So a Pod
// declared lost whose agent drives a wrapper counts as still running,
// keeping its group from syncing, until its kubelet reports every
// container stopped, its agent confirmed that the worker of the Pod's
// epoch stopped, or lostWorkerBound has passed since the mark.
//
// The bound covers an agent that cannot confirm: one that lost contact
// before it read the deprecation (a node cut off, dead or frozen). Its
// contact was lost at some x no later than the deprecation's delivery, at
// the mark and deliverySlack at the latest; counting its silence from x,
// its fence fires by x + F, and its wrapper has nothing of the worker left
// by the kill grace and a poll later. A Pod whose worker runs without a
// wrapper is not held: only the kubelet can stop its worker, and the
// node-loss bound is all the controller can wait (docs/controller.md).
// Nor is a Pod whose agent fences on its node's Lease held: it counts
// from the renewal the controller counts from, in contact or not, and the
// member's bound covers its stop of the worker (bounds).

// deliverySlack bounds how long after the mark the lost Pod's agent, in
// contact, has read its epoch's deprecation: the reconcile after the mark
// deprecates it, and the agent's open watch delivers it. It bounds as well
// how much later than an agent the controller sees a Lease renewed.
const deliverySlack = 2 * time.Second

// lostWorkerBound is how long after the mark the worker of a Pod declared
// lost may run at most, read from the Pod; wrapped is false for a Pod
// whose agent drives no worker wrapper, or that has no agent.
func lostWorkerBound(pod *corev1.Pod) (bound time.Duration, wrapped bool) {
	fence := agentFence(pod)
	if !fence.fences || !fence.wrapped || fence.leaseFence() {
		// An agent that fences on its node's Lease stopped its worker
		// before the mark (bounds).
		return 0, false
	}
	return deliverySlack + fence.after + agentspec.FenceTick + fence.stop, true
}

// lostWorkerMayRun reports whether the worker of a Pod declared lost may
// still run beside its replacement at now, and if so, how long until its
// bound has passed.
func lostWorkerMayRun(pod *corev1.Pod, now time.Time) (mayRun bool, left time.Duration) {
	if !markedLost(pod) || inplace.ContainersStopped(pod) || workerStopConfirmed(pod) {
		return false, 0
	}
	bound, wrapped := lostWorkerBound(pod)
	if !wrapped {
		return false, 0
	}
	left = jobset.ControllerMark(pod).LastTransitionTime.Add(bound).Sub(now)
	return left > 0, max(left, 0)
}

// workerStopConfirmed: the agent confirmed that the worker of the epoch
// the Pod shows stopped, or the Pod never joined an epoch (its worker
// never passed the barrier). An agent that joined again after the
// confirmation shows a later epoch than it confirmed.
func workerStopConfirmed(pod *corev1.Pod) bool {
	epoch, joined := pod.Annotations[jobset.EpochKey]
	if !joined {
		return true
	}
	stopped, ok := pod.Annotations[agentspec.WorkerStoppedAnnotation]
	return ok && stopped == epoch
}

// holdLostWorkers counts as still running every Pod of the snapshot whose
// worker may run beside its replacement (lostWorkerMayRun), and returns
// when to look again: when the first such bound passes.
func holdLostWorkers(s *inplace.Snapshot, pods []corev1.Pod, now time.Time) (lookAgain time.Duration) {
	running := map[string]bool{}
	for i := range pods {
		if mayRun, left := lostWorkerMayRun(&pods[i], now); mayRun {
			running[pods[i].Name] = true
			lookAgain = sooner(lookAgain, left)
		}
	}
	if len(running) == 0 {
		return lookAgain
	}
	for i := range s.Pods {
		if running[s.Pods[i].Name] {
			s.Pods[i].StillRunning = true
		}
	}
	return lookAgain
}
