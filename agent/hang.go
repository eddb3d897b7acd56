package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/klog/v2"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// A worker that neither exits nor progresses (a deadlocked collective, a
// stuck rendezvous, a hung data loader) is turned into a worker failure:
// the agent stops it through its wrapper and leaves its epoch, exactly as
// on the worker's exit with a code that restarts it in place, and joins
// the next epoch with the record that it hung (agentspec.HungAnnotation),
// from which the controller gives the group restart the reason Hang.

// HangView is what the decision reads: the attempt's start, its last
// progress report, the JobSet's timeouts, and the time now.
type HangView struct {
	// Started is when the running attempt started; zero while none runs.
	Started time.Time
	// Progress is the progress file's modification time; zero when there
	// is none. A time more than fileClockLag before Started belongs to an
	// earlier attempt.
	Progress time.Time
	Timeouts agentspec.HangTimeouts
	Now      time.Time
}

// Hang is the decision: whether the worker is hung, and why.
type Hang struct {
	Hung bool
	Why  string
}

// fileClockLag bounds how far a file's modification time may trail the
// clock the agent reads: the kernel stamps a file it creates, or touches
// to "now", with its coarse clock, up to one scheduler tick (10 ms at the
// lowest common rate) behind. A worker's first report, made within that
// tick of its start, would otherwise count as an earlier attempt's, and a
// worker that hung right after it would wait out the first-progress
// timeout. An earlier attempt's last report comes long before: between
// the two attempts its stop was confirmed and the group re-synced.
const fileClockLag = 20 * time.Millisecond

// DecideHang decides whether the running worker is hung. A worker that
// has reported progress since it started is hung once the progress
// timeout passed since its last report; one that has not, once the
// first-progress timeout passed since its start. A worker that never
// reported progress in the JobSet without a first-progress timeout did
// not opt in, and is never hung.
func DecideHang(v HangView) Hang {
	if v.Started.IsZero() {
		return Hang{}
	}
	if v.Progress.IsZero() || v.Progress.Before(v.Started.Add(-fileClockLag)) {
		if t := v.Timeouts.FirstProgress; t > 0 && v.Now.Sub(v.Started) > t {
			return Hang{true, fmt.Sprintf("the worker reported no progress in the %s since it started (%s)", t, agentspec.FirstProgressTimeoutAnnotation)}
		}
		return Hang{}
	}
	if t := v.Timeouts.Progress; t > 0 && v.Now.Sub(v.Progress) > t {
		return Hang{true, fmt.Sprintf("the worker reported no progress in the %s since its last report (%s)", t, agentspec.ProgressTimeoutAnnotation)}
	}
	return Hang{}
}

// progressFile is where the worker beside this agent reports progress:
// beside the wrapper's control socket, in the volume both mount.
func progressFile(control string) string {
	return filepath.Join(filepath.Dir(control), agentspec.ProgressFileName)
}

// lastProgress is the progress file's modification time, zero without one.
func lastProgress(path string) time.Time {
	info, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return info.ModTime()
}

// watchHangs looks at the running worker's progress every HangTick while
// the JobSet sets a timeout, and ends the watch on a hang, so that the
// agent acts on it at once (follow). One attempt hangs once.
func (a *Agent) watchHangs(ctx context.Context) {
	tick := time.NewTicker(agentspec.HangTick)
	defer tick.Stop()
	path := progressFile(a.worker.control)
	var reported time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		timeouts, _ := agentspec.ParseHangTimeouts(a.tierViewNow().annotations)
		started := a.worker.runningSince()
		if !timeouts.Set() || started.IsZero() || started.Equal(reported) {
			continue
		}
		h := DecideHang(HangView{Started: started, Progress: lastProgress(path), Timeouts: timeouts, Now: time.Now()})
		if !h.Hung {
			continue
		}
		reported = started
		klog.InfoS("The worker is hung", "why", h.Why, "progressFile", path)
		a.setHang(h.Why)
		a.endWatch()
	}
}

func (a *Agent) setHang(why string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hang = why
}

// takeHang returns the hang the agent has yet to act on, "" if none.
func (a *Agent) takeHang() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	why := a.hang
	a.hang = ""
	return why
}

// hangPending: a hang waits for the agent to act on it.
func (a *Agent) hangPending() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.hang != ""
}
