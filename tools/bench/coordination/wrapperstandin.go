package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/fastjobset/jobset/agent/wrapper"
)

// The worker wrapper stand-in: in the process tier, each Pod's worker
// container runs the worker wrapper (agent/wrapper), which the Pod's agent
// drives over a Unix socket. The real wrapper cannot run 10000-fold in one
// process: it makes itself the child subreaper, reaps with wait4(-1) and
// takes SIGTERM and SIGCHLD, all of them process-wide. So each Pod has
// this stand-in instead, listening on a socket of its own and speaking the
// real protocol (wrapper.Message, one JSON line each, as the wrapper
// encodes them) with the real wrapper's state machine (wrapper.go's
// handle), for a worker that starts at once and exits at once on SIGTERM:
// a stop is confirmed as soon as it is asked. B1 measures the real wrapper
// on a real kubelet; what B2 measures is the control plane.

// wrapperHooks tell the harness what a stand-in's agent asked.
type wrapperHooks struct {
	// started: the agent started attempt n (the worker runs again).
	started func(attempt int)
	// stopping: the agent asked for a stop of a running worker (it acts
	// on a deprecated epoch; the stop of a worker that exited on its own
	// is the failed Pod's, which acts on that exit).
	stopping func()
}

// wrapperStandIn is one Pod's worker wrapper.
type wrapperStandIn struct {
	path     string
	listener net.Listener
	hooks    wrapperHooks

	mu      sync.Mutex
	state   wrapper.State
	attempt int
	pid     int // of the attempt while it runs; 0 otherwise
	code    int // how the latest attempt ended, once pid is 0
	// startedAt is when the latest attempt started.
	startedAt time.Time
	conn      net.Conn
	// exitCode: the agent had the wrapper exit, and the container with
	// it (nil: it runs).
	exitCode *int
}

// newWrapperStandIn listens on path for the Pod's agent.
func newWrapperStandIn(path string, hooks wrapperHooks) (*wrapperStandIn, error) {
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("the worker wrapper stand-in: %w", err)
	}
	w := &wrapperStandIn{path: path, listener: l, hooks: hooks, state: wrapper.StateWaiting}
	go w.accept()
	return w, nil
}

func (w *wrapperStandIn) close() {
	_ = w.listener.Close()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn != nil {
		_ = w.conn.Close()
		w.conn = nil
	}
}

func (w *wrapperStandIn) accept() {
	for {
		c, err := w.listener.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		w.mu.Lock()
		// The newest connection wins, as the wrapper's: the agent that made
		// the older one has restarted.
		if w.conn != nil {
			_ = w.conn.Close()
		}
		w.conn = c
		w.sendLocked(w.stateMessageLocked())
		w.mu.Unlock()
		go w.read(c)
	}
}

// maxLine bounds a line, as the wrapper's reader does.
const maxLine = 64 << 10

func (w *wrapperStandIn) read(c net.Conn) {
	lines := bufio.NewScanner(c)
	lines.Buffer(make([]byte, 4096), maxLine)
	for lines.Scan() {
		if len(bytes.TrimSpace(lines.Bytes())) == 0 {
			continue
		}
		m, err := decodeMessage(lines.Bytes())
		w.mu.Lock()
		switch {
		case w.conn != c: // replaced since
			w.mu.Unlock()
			return
		case err != nil:
			w.sendLocked(wrapper.Message{Type: wrapper.TypeError, Reason: err.Error()})
		default:
			w.handleLocked(m)
		}
		w.mu.Unlock()
	}
	w.mu.Lock()
	if w.conn == c {
		_ = c.Close()
		w.conn = nil
	}
	w.mu.Unlock()
}

// decodeMessage reads a line as the wrapper's decode does.
func decodeMessage(line []byte) (wrapper.Message, error) {
	var m wrapper.Message
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(&m); err != nil {
		return wrapper.Message{}, fmt.Errorf("not a message of the wrapper's protocol: %w", err)
	}
	if m.Type == "" {
		return wrapper.Message{}, errors.New(`not a message of the wrapper's protocol: no "type"`)
	}
	return m, nil
}

// sendLocked writes m as the wrapper's encode and send do; a message no
// agent hears is not kept.
func (w *wrapperStandIn) sendLocked(m wrapper.Message) {
	if w.conn == nil {
		return
	}
	line, err := json.Marshal(m)
	if err == nil {
		_ = w.conn.SetWriteDeadline(time.Now().Add(time.Second))
		_, err = w.conn.Write(append(line, '\n'))
	}
	if err != nil {
		_ = w.conn.Close()
		w.conn = nil
	}
}

func (w *wrapperStandIn) stateMessageLocked() wrapper.Message {
	return wrapper.Message{Type: wrapper.TypeState, State: w.state, Attempt: w.attempt, PID: w.pid, Code: w.endCodeLocked()}
}

func (w *wrapperStandIn) endCodeLocked() *int {
	if w.attempt == 0 || w.pid != 0 {
		return nil
	}
	return wrapper.Code(w.code)
}

func (w *wrapperStandIn) refuseLocked(format string, args ...any) {
	w.sendLocked(wrapper.Message{Type: wrapper.TypeError, Reason: fmt.Sprintf(format, args...)})
}

// handleLocked carries out one message of the agent as the wrapper's
// handle does, where a stop ends at once: the worker exits on SIGTERM,
// and nothing of it is left.
func (w *wrapperStandIn) handleLocked(m wrapper.Message) {
	idle := w.state == wrapper.StateWaiting || w.state == wrapper.StateStopped || w.state == wrapper.StateExited
	switch m.Type {
	case wrapper.TypeStart:
		switch {
		case w.exitCode != nil:
			w.refuseLocked("cannot start: the container is shutting down")
		case !idle:
			w.refuseLocked("cannot start while %s", w.state)
		case m.Attempt != w.attempt+1:
			w.refuseLocked("cannot start attempt %d: the next attempt is %d", m.Attempt, w.attempt+1)
		default:
			w.attempt, w.pid, w.state, w.startedAt = m.Attempt, 1000+m.Attempt, wrapper.StateRunning, time.Now()
			w.sendLocked(wrapper.Message{Type: wrapper.TypeStarted, Attempt: w.attempt, PID: w.pid})
			if w.hooks.started != nil {
				w.hooks.started(w.attempt)
			}
		}
	case wrapper.TypeStop:
		switch w.state {
		case wrapper.StateWaiting, wrapper.StateStopped:
		default:
			if w.pid != 0 {
				if w.hooks.stopping != nil {
					w.hooks.stopping()
				}
				w.pid, w.code = 0, 128+int(syscall.SIGTERM)
			}
			w.state = wrapper.StateStopped
		}
		w.sendLocked(wrapper.Message{Type: wrapper.TypeStopped, Attempt: w.attempt, Code: w.endCodeLocked()})
	case wrapper.TypeExit:
		switch {
		case m.Code == nil || *m.Code < 0 || *m.Code > 255:
			w.refuseLocked("exit needs a code from 0 to 255")
		case !idle:
			w.refuseLocked("cannot exit while %s: stop the worker first", w.state)
		default:
			w.exitCode = m.Code
			_ = w.conn.Close()
			w.conn = nil
		}
	default:
		w.refuseLocked("unknown message type %q: the agent sends %s, %s or %s", m.Type, wrapper.TypeStart, wrapper.TypeStop, wrapper.TypeExit)
	}
}

// exit is the worker's own exit with code: the wrapper reports it, and the
// agent decides.
func (w *wrapperStandIn) exit(code int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != wrapper.StateRunning {
		return fmt.Errorf("the worker of %s is %s, not running", w.path, w.state)
	}
	w.state, w.pid, w.code = wrapper.StateExited, 0, code
	w.sendLocked(wrapper.Message{Type: wrapper.TypeExited, Attempt: w.attempt, Code: wrapper.Code(code)})
	return nil
}

// restarted is the container's restart (the Pod tier, which an agent
// falls back to when a stop is not confirmed): a new wrapper, no
// attempt yet, no agent connected.
func (w *wrapperStandIn) restarted() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn != nil {
		_ = w.conn.Close()
		w.conn = nil
	}
	w.state, w.attempt, w.pid, w.code, w.exitCode = wrapper.StateWaiting, 0, 0, 0, nil
}

// runsSince reports whether the worker runs an attempt started at t or
// later.
func (w *wrapperStandIn) runsSince(t time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state == wrapper.StateRunning && !w.startedAt.Before(t)
}
