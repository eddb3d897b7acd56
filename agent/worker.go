package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
	// WorkerStart: start the next attempt.
	WorkerStart
	// WorkerStop: stop the attempt, whatever it is doing.
	WorkerStop
	// WorkerExit: the worker ended on its own: exit the container with
	// its code.
	WorkerExit
	// WorkerStopped: the wrapper confirmed that nothing of the worker is
	// left.
	WorkerStopped
	// WorkerRestart: the worker ended on its own with a code that the
	// Pod's rules restart in place, in the process tier: the agent stops
	// what it left and restarts it in place (process.go).
	WorkerRestart
)

func (a WorkerAction) String() string {
	return [...]string{"Wait", "Start", "Stop", "Exit", "Stopped", "Restart"}[a]
}

// WorkerView is what the agent knows of its worker.
type WorkerView struct {
	// State is the wrapper's state as it last reported it ("" while not
	// connected).
	State wrapper.State
	// Asked: the agent sent a word that the wrapper has not answered yet.
	Asked bool
	// Lifted: the barrier of the agent's epoch is lifted, the worker may
	// run. MustStop: the agent must stop the worker (a deprecation, its
	// fence, a worker's exit in the process tier).
	Lifted, MustStop bool
	// RestartsInPlace: the worker's last exit code is one the agent
	// restarts in place (the process tier; ExitRestartsInPlace).
	RestartsInPlace bool
	// Reported: the agent was told of the worker's exit already.
	Reported bool
}

// NextWorker decides what the agent tells the wrapper. A worker is
// started only while the barrier of the agent's epoch is lifted and the
// agent need not stop it; once it must stop, the only word is stop, until
// the wrapper confirms. A stopped worker starts again only in the
// process tier, whose agent lifts a barrier again after it joined the
// next epoch.
func NextWorker(v WorkerView) WorkerAction {
	switch {
	case v.State == "":
		return WorkerWait
	case v.MustStop && v.State == wrapper.StateStopped && !v.Asked:
		return WorkerStopped
	case v.Asked:
		return WorkerWait
	case v.MustStop:
		return WorkerStop
	case (v.State == wrapper.StateWaiting || v.State == wrapper.StateStopped) && v.Lifted:
		return WorkerStart
	case v.State == wrapper.StateExited && v.RestartsInPlace:
		if v.Reported {
			return WorkerWait
		}
		return WorkerRestart
	case v.State == wrapper.StateExited:
		return WorkerExit
	default:
		return WorkerWait
	}
}

// worker links the agent with its worker's wrapper. The agent says what
// it wants (want); the goroutine that drives the wrapper (drive) tells
// the agent what became of it.
type worker struct {
	control string
	// dial connects to the wrapper's control socket at control.
	dial func(ctx context.Context, control string) (*wrapper.Conn, error)
	// restartsInPlace reads whether an exit code restarts the worker in
	// place; nil: none does (the Pod tier).
	restartsInPlace func(code int) bool

	mu   sync.Mutex
	want workerWant
	// stop receives how the pending stop ended; nil when none is pending.
	stop chan stopResult
	// changed wakes drive when want changed.
	changed chan struct{}
	// exited receives the code of a worker that ended on its own with a
	// code that restarts it in place.
	exited chan int
	// started is when the running attempt started, as the agent learnt
	// it; zero while none runs (hang.go).
	started time.Time
}

// workerWant is what the agent wants of its worker.
type workerWant struct {
	// lifted: the barrier of the agent's epoch is lifted. stopping: the
	// agent waits for a stop.
	lifted, stopping bool
}

type stopResult int

const (
	stopConfirmed stopResult = iota
	// stopUnreachable: no wrapper listens.
	stopUnreachable
)

func newWorker(control string, restartsInPlace func(int) bool) *worker {
	return &worker{control: control, dial: wrapper.Dial, restartsInPlace: restartsInPlace,
		changed: make(chan struct{}, 1), exited: make(chan int, 1)}
}

func (w *worker) update(change func(*workerWant)) {
	w.mu.Lock()
	change(&w.want)
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// lift lets the worker start (again).
func (w *worker) lift() { w.update(func(v *workerWant) { v.lifted = true }) }

// requestStop asks drive to stop the worker, and returns where the
// outcome comes.
func (w *worker) requestStop() <-chan stopResult {
	result := make(chan stopResult, 1)
	w.mu.Lock()
	w.stop = result
	w.mu.Unlock()
	w.update(func(v *workerWant) { v.lifted, v.stopping = false, true })
	return result
}

// stopDone ends the pending stop with r, and lets the agent start the
// worker again once it lifts its barrier.
func (w *worker) stopDone(r stopResult) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stop != nil {
		w.stop <- r
		w.stop = nil
		w.want.stopping = false
	}
}

// setStarted records when the running attempt started; zero: none runs.
func (w *worker) setStarted(at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.started = at
}

// runningSince is when the running attempt started; zero while none runs.
func (w *worker) runningSince() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.started
}

func (w *worker) wanted() workerWant {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.want
}

// stopGrace is the grace a stop gives the worker after SIGTERM.
const stopGrace = agentspec.WorkerStopGraceSeconds * time.Second

// redial is how long the agent waits before it connects again to a
// wrapper that does not listen (yet: the worker container starts after
// the agent's).
const redial = 50 * time.Millisecond

// drive follows the wrapper until ctx ends: connect (again, after a
// dropped connection), then act on each message as NextWorker decides.
func (w *worker) drive(ctx context.Context) {
	for ctx.Err() == nil {
		conn, err := w.dial(ctx, w.control)
		if err != nil {
			if w.wanted().stopping {
				// No wrapper listens: none started yet (the kubelet
				// starts the worker's container after the barrier lifts),
				// or it exited. The agent cannot confirm what it cannot
				// see; it restarts the Pod without.
				w.stopDone(stopUnreachable)
			}
			select {
			case <-ctx.Done():
			case <-time.After(redial):
			}
			continue
		}
		w.follow(ctx, conn)
		_ = conn.Close()
	}
}

// follow serves one connection until it ends or ctx does.
func (w *worker) follow(ctx context.Context, conn *wrapper.Conn) {
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
	var exitCode, attempt int
	var startSent time.Time
	for {
		want := w.wanted()
		view.Lifted, view.MustStop = want.lifted, want.stopping
		view.RestartsInPlace = w.restartsInPlace != nil && w.restartsInPlace(exitCode)
		var err error
		switch NextWorker(view) {
		case WorkerStart:
			startSent = time.Now()
			err, view.Asked = conn.Start(attempt+1), true
			if attempt > 0 {
				klog.InfoS("Starting the worker again in place", "attempt", attempt+1)
			}
		case WorkerStop:
			err, view.Asked = conn.Stop(stopGrace), true
			klog.InfoS("Stopping the worker through its wrapper", "grace", stopGrace)
		case WorkerExit:
			err, view.Asked = conn.Exit(exitCode), true
			klog.InfoS("The worker ended on its own: its container exits with its code", "code", exitCode)
		case WorkerRestart:
			view.Reported = true
			klog.InfoS("The worker ended on its own with a code that restarts it in place", "code", exitCode, "attempt", attempt)
			select {
			case w.exited <- exitCode:
			default:
			}
		case WorkerStopped:
			w.stopDone(stopConfirmed)
			view.State = wrapper.StateStopped
			continue
		}
		if err != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-w.changed:
		case err := <-ended:
			if !errors.Is(err, context.Canceled) {
				klog.V(2).InfoS("The connection to the worker's wrapper ended; connecting again", "err", err)
			}
			return
		case m := <-messages:
			view.Asked = false
			switch m.Type {
			case wrapper.TypeState:
				view.State = m.State
			case wrapper.TypeStarted:
				view.State, view.Reported = wrapper.StateRunning, false
			case wrapper.TypeExited:
				view.State = wrapper.StateExited
			case wrapper.TypeStopped:
				view.State = wrapper.StateStopped
			case wrapper.TypeError:
				klog.InfoS("The worker's wrapper refused a word of the agent", "reason", m.Reason)
			}
			if m.Attempt != 0 || m.Type == wrapper.TypeState {
				attempt = m.Attempt
			}
			if m.Code != nil {
				exitCode = *m.Code
			}
			// An attempt starts no later than the agent's word: a
			// progress report after that word is the attempt's own.
			switch {
			case m.Type == wrapper.TypeStarted && !startSent.IsZero():
				w.setStarted(startSent)
			case m.Type == wrapper.TypeError:
			case view.State != wrapper.StateRunning:
				w.setStarted(time.Time{})
			case w.runningSince().IsZero():
				w.setStarted(time.Now())
			}
		}
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
	result := a.worker.requestStop()
	limit := time.NewTimer(stopGrace + stopWait)
	defer limit.Stop()
	select {
	case r := <-result:
		if r == stopUnreachable {
			klog.InfoS("No worker wrapper listens: the stop cannot be confirmed", "control", a.worker.control)
			return false
		}
		klog.InfoS("The worker's wrapper confirmed that nothing of the worker is left")
		return true
	case <-limit.C:
		klog.InfoS("The worker's wrapper did not confirm the stop in time", "waited", stopGrace+stopWait)
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
