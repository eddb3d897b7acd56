package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
)

// promises is what this agent, as a witness, promised: to write no epoch
// above epoch before until, to the askers named by their hostnames. An
// asker back in contact with the API server relies on no promise any
// more, so once every asker says so, the promise is released early
// (release). A promise binds the Pod, not the process: the
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
	// askers: the hostnames of the peers promised to; a promise given to
	// an asker that named none (an older agent) runs its full length.
	askers    []string
	anonymous bool
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
	raw, found, err := readStateFile(p.path)
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading the promise an earlier agent of this Pod made: %w", err)
	case !found:
		return p, nil
	}
	fields := strings.Fields(raw)
	errEpoch, errUntil := errors.New("missing"), errors.New("missing")
	var e, u int64
	if len(fields) >= 2 {
		e, errEpoch = strconv.ParseInt(fields[0], 10, 32)
		u, errUntil = strconv.ParseInt(fields[1], 10, 64)
	}
	if errEpoch != nil || errUntil != nil {
		return nil, fmt.Errorf("the promise file %s holds %q, not \"<epoch> <boot clock nanoseconds> [<asker hostname>|- ...]\"", p.path, raw)
	}
	p.epoch, p.until = int32(e), time.Duration(u)
	for _, asker := range fields[2:] {
		if asker == anonymousAsker {
			p.anonymous = true
			continue
		}
		p.askers = append(p.askers, asker)
	}
	if len(fields) == 2 {
		p.anonymous = true // written before askers were recorded
	}
	return p, nil
}

// anonymousAsker stands in the promise file for an asker that named no
// hostname.
const anonymousAsker = "-"

func (p *promises) canPromise() bool { return p.path != "" }

// give promises the asker (its hostname; "" when it named none) to write
// no epoch above epoch for d, and records it before it returns.
func (p *promises) give(epoch int32, d time.Duration, asker string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	until := p.clock() + d
	askers, anonymous := []string(nil), false
	if p.until > p.clock() {
		epoch = min(epoch, p.epoch)
		until = max(until, p.until)
		askers, anonymous = slices.Clone(p.askers), p.anonymous
	}
	switch {
	case asker == "":
		anonymous = true
	case !slices.Contains(askers, asker):
		askers = append(askers, asker)
	}
	if err := p.write(epoch, until, askers, anonymous); err != nil {
		return err
	}
	p.epoch, p.until, p.askers, p.anonymous = epoch, until, askers, anonymous
	return nil
}

// write records a promise in the file, whole or not at all.
func (p *promises) write(epoch int32, until time.Duration, askers []string, anonymous bool) error {
	line := fmt.Sprintf("%d %d", epoch, int64(until))
	for _, asker := range askers {
		line += " " + asker
	}
	if anonymous {
		line += " " + anonymousAsker
	}
	return writeStateFile(p.path, line)
}

// releasable returns the askers of the promise that holds a write of
// epoch e, when every one of them is named (none: nothing holds it, or an
// asker named none and only time releases it).
func (p *promises) releasable(e int32) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e <= p.epoch || p.until <= p.clock() || p.anonymous {
		return nil
	}
	return slices.Clone(p.askers)
}

// release ends the promise early: every asker it was given to is back in
// contact with the API server (askers, as releasable returned them), and
// relies on it no more.
func (p *promises) release(askers []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.anonymous || !slices.Equal(askers, p.askers) || p.until <= p.clock() {
		return nil // promised again meanwhile, or over
	}
	now := p.clock()
	if err := p.write(p.epoch, now, nil, false); err != nil {
		return err
	}
	p.until, p.askers = now, nil
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

// wait returns once epoch e may be written, or ctx ended. Every
// checkEvery meanwhile it asks whether every asker is back in contact
// (backInContact), and releases the promise when they are.
func (p *promises) wait(ctx context.Context, e int32, checkEvery time.Duration, backInContact func(context.Context, []string) bool, waiting func(time.Duration)) error {
	for told := false; ; told = true {
		left := p.holding(e)
		if left == 0 {
			return nil
		}
		if askers := p.releasable(e); len(askers) > 0 && backInContact(ctx, askers) {
			if err := p.release(askers); err != nil {
				klog.ErrorS(err, "Releasing a promise whose askers are back in contact; it runs its full length")
			} else {
				klog.InfoS("Every peer this Pod vouched for is back in contact with the API server: the promise is released", "askers", askers)
				continue
			}
		}
		if !told {
			waiting(left)
		}
		timer := time.NewTimer(min(left, checkEvery))
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
}
