package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/klog/v2"

	"github.com/fastjobset/jobset/agent/kubeclient"
	"github.com/fastjobset/jobset/agent/wrapper"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// When the worker container's command runs under the worker wrapper
// (JOBSET_WRAPPER_CONTROL), the agent stops the worker itself before it
// exits to restart the Pod: its exit restarts the Pod only through the
// kubelet, and a kubelet that is down (crash-looping, being upgraded)
// while the node's containers and network stay up would leave the worker
// running the deprecated epoch beside its replacement. The wrapper kills
// the worker's whole tree (its process group, its orphans, the
// container's cgroup) and answers stopped only once nothing of it is
// left. After a deprecation, which it saw in contact with the API server,
// the agent then confirms the stop on its own Pod
// (agentspec.WorkerStoppedAnnotation), and the controller counts the Pod
// stopped as it would a kubelet's report (docs/controller.md, "The kubelet
// down alone").
//
// The agent also starts the worker: the wrapper starts its first attempt
// on the agent's word, which comes once the barrier is lifted; and when
// the worker ends on its own, the agent has the wrapper exit with the
// worker's code, so that the kubelet's restart rules and the Job's
// podFailurePolicy judge it as without the wrapper.

// WorkerAction is what the agent tells its worker's wrapper.
type WorkerAction int

const (
	// WorkerWait: nothing to say until the wrapper or the agent moves.
	WorkerWait WorkerAction = iota
	// WorkerStart: start the first attempt.
	WorkerStart
	// WorkerStop: stop the attempt, whatever it is doing.
	WorkerStop
	// WorkerExit: the worker ended on its own: exit the container with
	// its code.
	WorkerExit
	// WorkerStopped: the wrapper confirmed that nothing of the worker is
	// left.
	WorkerStopped
)

func (a WorkerAction) String() string {
	return [...]string{"Wait", "Start", "Stop", "Exit", "Stopped"}[a]
}

// WorkerView is what the agent knows of its worker.
type WorkerView struct {
	// State is the wrapper's state as it last reported it ("" while not
	// connected).
	State wrapper.State
	// Asked: the agent sent a word that the wrapper has not answered yet.
	Asked bool
	// Lifted: the barrier is lifted, the worker may run. MustStop: the
	// agent is about to exit to restart the Pod (a deprecation or its
	// fence).
	Lifted, MustStop bool
}

// NextWorker decides what the agent tells the wrapper. A worker is
// started only while the barrier is lifted and the agent need not stop
// it; once it must stop, the only word is stop, until the wrapper
// confirms.
func NextWorker(v WorkerView) WorkerAction {
	switch {
	case v.State == "":
		return WorkerWait
	case v.MustStop && v.State == wrapper.StateStopped:
		return WorkerStopped
	case v.Asked:
		return WorkerWait
	case v.MustStop:
		return WorkerStop
	case v.State == wrapper.StateWaiting && v.Lifted:
		return WorkerStart
	case v.State == wrapper.StateExited:
		return WorkerExit
	default:
		return WorkerWait
	}
}

// worker links the agent with its worker's wrapper.
type worker struct {
	control string
	// mustStop is closed when the agent must stop the worker; stopped is
	// closed once the wrapper confirmed the stop; unreachable, when no
	// wrapper listens once the agent must stop it.
	mustStop, stopped, unreachable chan struct{}
}

func newWorker(control string) *worker {
	return &worker{control: control, mustStop: make(chan struct{}), stopped: make(chan struct{}), unreachable: make(chan struct{})}
}

// stopGrace is the grace a stop gives the worker after SIGTERM.
const stopGrace = agentspec.WorkerStopGraceSeconds * time.Second

// redial is how long the agent waits before it connects again to a
// wrapper that does not listen (yet: the worker container starts after
// the agent's).
const redial = 50 * time.Millisecond

// drive follows the wrapper until ctx ends or the stop is confirmed:
// connect (again, after a dropped connection), then act on each message
// as NextWorker decides.
func (w *worker) drive(ctx context.Context, lifted <-chan struct{}) {
	for ctx.Err() == nil {
		conn, err := wrapper.Dial(ctx, w.control)
		if err != nil {
			if closed(w.mustStop) {
				// No wrapper listens: none started yet (the kubelet
				// starts the worker's container after the barrier lifts),
				// or it exited. The agent cannot confirm what it cannot
				// see; it restarts the Pod without.
				close(w.unreachable)
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(redial):
			}
			continue
		}
		done := w.follow(ctx, conn, lifted)
		_ = conn.Close()
		if done {
			return
		}
	}
}

// follow serves one connection; it returns true once the stop is
// confirmed.
func (w *worker) follow(ctx context.Context, conn *wrapper.Conn, lifted <-chan struct{}) bool {
	messages := make(chan wrapper.Message)
	ended := make(chan error, 1)
	go func() {
		for {
			m, err := conn.Receive()
			if err != nil {
				ended <- err
				return
			}
			select {
			case messages <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	view := WorkerView{}
	var exitCode int
	for {
		view.Lifted, view.MustStop = closed(lifted), closed(w.mustStop)
		var err error
		switch NextWorker(view) {
		case WorkerStart:
			err, view.Asked = conn.Start(1), true
		case WorkerStop:
			err, view.Asked = conn.Stop(stopGrace), true
			klog.InfoS("Stopping the worker through its wrapper", "grace", stopGrace)
		case WorkerExit:
			err, view.Asked = conn.Exit(exitCode), true
			klog.InfoS("The worker ended on its own: its container exits with its code", "code", exitCode)
		case WorkerStopped:
			close(w.stopped)
			return true
		}
		if err != nil {
			return false
		}
		var wait <-chan struct{}
		if !view.Lifted {
			wait = lifted
		} else if !view.MustStop {
			wait = w.mustStop
		}
		select {
		case <-ctx.Done():
			return true
		case <-wait:
		case err := <-ended:
			if !errors.Is(err, context.Canceled) {
				klog.V(2).InfoS("The connection to the worker's wrapper ended; connecting again", "err", err)
			}
			return false
		case m := <-messages:
			view.Asked = false
			switch m.Type {
			case wrapper.TypeState:
				view.State = m.State
			case wrapper.TypeStarted:
				view.State = wrapper.StateRunning
			case wrapper.TypeExited:
				view.State = wrapper.StateExited
			case wrapper.TypeStopped:
				view.State = wrapper.StateStopped
			case wrapper.TypeError:
				klog.InfoS("The worker's wrapper refused a word of the agent", "reason", m.Reason)
			}
			if m.Code != nil {
				exitCode = *m.Code
			}
		}
	}
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// stopWorker has the wrapper stop the worker and waits until it confirms,
// at most grace and a few seconds more: a process that cannot be killed
// (uninterruptible sleep) is left to the kubelet's restart of the Pod. It
// returns whether the stop was confirmed.
func (a *Agent) stopWorker() bool {
	if a.worker == nil {
		return false
	}
	close(a.worker.mustStop)
	limit := time.NewTimer(stopGrace + stopWait)
	defer limit.Stop()
	select {
	case <-a.worker.stopped:
		klog.InfoS("The worker's wrapper confirmed that nothing of the worker is left")
		return true
	case <-a.worker.unreachable:
		klog.InfoS("No worker wrapper listens: restarting the Pod in place without confirming a stop", "control", a.worker.control)
		return false
	case <-limit.C:
		klog.InfoS("The worker's wrapper did not confirm the stop in time: restarting the Pod in place without", "waited", stopGrace+stopWait)
		return false
	}
}

// stopWait bounds, beyond the grace, the wait for the wrapper's
// confirmation.
const stopWait = 10 * time.Second

// confirmStopped writes the Pod's WorkerStoppedAnnotation for epoch e,
// retrying for a while: the controller waits for it, or for its bound.
func (a *Agent) confirmStopped(e int32) {
	ctx, cancel := context.WithTimeout(context.Background(), confirmFor)
	defer cancel()
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, agentspec.WorkerStoppedAnnotation, agentspec.FormatEpoch(e))
	for ctx.Err() == nil {
		err := a.api.MergePatch(ctx, pods, a.cfg.Namespace, a.cfg.PodName, patch)
		if err == nil {
			klog.InfoS("Confirmed on the Pod that its worker stopped", "epoch", e, "annotation", agentspec.WorkerStoppedAnnotation)
			return
		}
		if kubeclient.IsDenied(err) {
			klog.InfoS("Confirming the worker's stop on the Pod was denied", "err", err)
			return
		}
		_ = a.backoff.wait(ctx, err)
	}
}

// confirmFor bounds the confirmation's retries.
const confirmFor = 10 * time.Second
