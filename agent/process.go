package agent

import (
	"context"
	"slices"

	"k8s.io/klog/v2"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// The process tier (docs/controller.md, "The process tier"): an agent that
// drives a worker wrapper survives a group restart. On a deprecation of
// its epoch, or its worker's exit with a code that the Pod's rules
// restart in place, it has the wrapper stop the worker, leaves its epoch
// only once the wrapper confirmed that nothing of the worker is left, and
// joins the next epoch as a new agent would: the same ordering as the Pod
// tier's, with the wrapper's confirmation in place of the kubelet's
// restart. When the confirmation does not come, or the JobSet asks for
// the Pod tier, it exits with the restart code as without the wrapper.

// ProcessTier decides whether the agent restarts its worker's process:
// only with a wrapper to drive, and unless the JobSet asks for the Pod
// tier.
func ProcessTier(wrapped bool, jobSetAnnotations map[string]string) bool {
	return wrapped && jobSetAnnotations[agentspec.RestartTierAnnotation] != agentspec.RestartTierPod
}

// restartRule is what the agent reads of a container's restartPolicyRules.
type restartRule struct {
	Action    string `json:"action"`
	ExitCodes *struct {
		Operator string  `json:"operator"`
		Values   []int32 `json:"values"`
	} `json:"exitCodes"`
}

// restartsAllOn reports whether rules restart every container of the Pod
// when their container exits with code: the first rule that matches
// decides.
func restartsAllOn(rules []restartRule, code int) bool {
	for _, r := range rules {
		matches := r.ExitCodes == nil
		if e := r.ExitCodes; e != nil {
			in := slices.Contains(e.Values, int32(code))
			matches = e.Operator == "In" && in || e.Operator == "NotIn" && !in
		}
		if matches {
			return r.Action == "RestartAllContainers"
		}
	}
	return false
}

// ExitRestartsInPlace decides whether a worker's exit with code restarts
// it in place: only when the wrapped worker container of every
// replicatedJob that runs the agent and wraps its worker restarts every
// container on that code, as the kubelet would without the process tier.
// Any other code (0, the podFailurePolicy's FailJob codes) leaves the
// container with it, for the kubelet and the Job to judge. The agent does
// not know which replicatedJob its Pod belongs to, so replicatedJobs that
// disagree make a code leave the container, as without the process tier.
func ExitRestartsInPlace(spec jobSetSpec, code int) bool {
	if code == 0 {
		return false
	}
	wrapped := false
	for _, rj := range spec.ReplicatedJobs {
		if !rj.runsTheAgent() {
			continue
		}
		for _, c := range rj.Template.Spec.Template.Spec.Containers {
			if len(c.Command) == 0 || c.Command[0] != agentspec.WrapperBinary {
				continue
			}
			wrapped = true
			if !restartsAllOn(c.RestartPolicyRules, code) {
				return false
			}
		}
	}
	return wrapped
}

// inProcessTier: the agent restarts its worker's process, as the JobSet
// last read says.
func (a *Agent) inProcessTier() bool {
	return ProcessTier(a.worker != nil, a.tierViewNow().annotations)
}

// leaveEpoch stops the worker through the wrapper and, once the wrapper
// confirmed that nothing of it is left, leaves the agent's epoch: the
// barrier drops and the agent joins the next epoch as a new agent would.
// It returns false when the stop was not confirmed: the agent then exits
// with the restart code (the Pod tier).
func (a *Agent) leaveEpoch(why string) bool {
	e := a.epoch.Load()
	klog.InfoS("Restarting the worker in place: stopping it through its wrapper", "epoch", e, "why", why)
	if !a.stopWorker() {
		klog.InfoS("The worker's stop was not confirmed: restarting the Pod in place instead", "epoch", e)
		return false
	}
	// An exit or a hang of the worker reported meanwhile is part of this
	// restart: nothing of that worker is left.
	select {
	case <-a.worker.exited:
	default:
	}
	a.takeHang()
	a.workerExited.Store(0)
	a.barrier.drop("the worker restarts in place: the agent left epoch %d and joins the next", e)
	a.epoch.Store(0)
	a.left.Store(e)
	a.restarts.restartingProcess()
	restarts := a.workerRestarts.Add(1)
	klog.InfoS("The worker stopped; joining the next epoch", "left", e, "workerRestarts", restarts)
	return true
}

// watchWorkerExits ends the watch when the worker exits with a code that
// restarts it in place, so that the agent acts on it at once (follow).
func (a *Agent) watchWorkerExits(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case code := <-a.worker.exited:
			a.workerExited.Store(int32(code) + 1)
			a.endWatch()
		}
	}
}
