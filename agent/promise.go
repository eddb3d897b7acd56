package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// promises is what this agent, as a witness, promised: to write no epoch
// above epoch before until. A promise binds the Pod, not the process: the
// agent that follows this one in the Pod (after an in-place restart, or a
// fence) keeps it. So it is written to a file of the Pod's state directory
// (an emptyDir) before the answer goes out, on the node's boot clock,
// which every process of the node shares and which runs on through a
// suspend.
type promises struct {
	// path is the promise file; "" when the agent has no state directory
	// and so promises nothing.
	path  string
	clock func() time.Duration

	mu    sync.Mutex
	epoch int32
	until time.Duration
}

const promiseFile = "promise"

// bootClock reads CLOCK_BOOTTIME.
func bootClock() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		panic(fmt.Sprintf("reading CLOCK_BOOTTIME: %v", err))
	}
	return time.Duration(ts.Nano())
}

// loadPromises reads the promise an earlier agent of the Pod left in dir
// ("" : none kept).
func loadPromises(dir string, clock func() time.Duration) (*promises, error) {
	p := &promises{clock: clock}
	if dir == "" {
		return p, nil
	}
	p.path = filepath.Join(dir, promiseFile)
	raw, err := os.ReadFile(p.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return p, nil
	case err != nil:
		return nil, fmt.Errorf("reading the promise an earlier agent of this Pod made: %w", err)
	}
	epoch, until, ok := strings.Cut(strings.TrimSpace(string(raw)), " ")
	e, errEpoch := strconv.ParseInt(epoch, 10, 32)
	u, errUntil := strconv.ParseInt(until, 10, 64)
	if !ok || errEpoch != nil || errUntil != nil {
		return nil, fmt.Errorf("the promise file %s holds %q, not \"<epoch> <boot clock nanoseconds>\"", p.path, raw)
	}
	p.epoch, p.until = int32(e), time.Duration(u)
	return p, nil
}

func (p *promises) canPromise() bool { return p.path != "" }

// give promises to write no epoch above epoch for d, and records it before
// it returns.
func (p *promises) give(epoch int32, d time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	until := p.clock() + d
	if p.until > p.clock() {
		epoch = min(epoch, p.epoch)
		until = max(until, p.until)
	}
	tmp := p.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(fmt.Sprintf("%d %d\n", epoch, int64(until))), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, p.path); err != nil {
		return err
	}
	p.epoch, p.until = epoch, until
	return nil
}

// holding reports how long a write of epoch e must wait (0: it need not).
func (p *promises) holding(e int32) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e <= p.epoch {
		return 0
	}
	return max(0, p.until-p.clock())
}

// wait returns once epoch e may be written, or ctx ended.
func (p *promises) wait(ctx context.Context, e int32, waiting func(time.Duration)) error {
	for {
		left := p.holding(e)
		if left == 0 {
			return nil
		}
		waiting(left)
		timer := time.NewTimer(left)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
}
