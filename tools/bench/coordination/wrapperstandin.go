package main

import (
	"bufio"
	"bytes"
	"context"
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
//
// The agent reaches its stand-in over an in-memory connection
// (agent.WithWrapperDialer), not a Unix socket: a socket takes three of
// this process's open files a Pod, and with the agents' connections to the
// API server the process tier would pass this machine's hard limit of
// 20000 above about 3000 Pods.

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
	// control names its control socket, which its agent is configured
	// with; dial reaches it.
	control string
	hooks   wrapperHooks

	mu sync.Mutex
	// closed: the stand-in is gone, and refuses every dial.
	closed  bool
	state   wrapper.State
	attempt int
	pid     int // of the attempt while it runs; 0 otherwise
	code    int // how the latest attempt ended, once pid is 0
	// startedAt is when the latest attempt started.
	startedAt time.Time
	conn      *standInConn
	// exitCode: the agent had the wrapper exit, and the container with
	// it (nil: it runs).
	exitCode *int
}

// newWrapperStandIn is the wrapper of a Pod whose agent dials control.
func newWrapperStandIn(control string, hooks wrapperHooks) *wrapperStandIn {
	return &wrapperStandIn{control: control, hooks: hooks, state: wrapper.StateWaiting}
}

// dial is the agent's connection to the stand-in's control socket. The
// newest connection wins, as the wrapper's: the agent that made the older
// one has restarted.
func (w *wrapperStandIn) dial(context.Context, string) (net.Conn, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, fmt.Errorf("dial %s: the wrapper stand-in is closed", w.control)
	}
	agentEnd, wrapperEnd := net.Pipe()
	w.dropConnLocked()
	w.conn = newStandInConn(wrapperEnd)
	w.sendLocked(w.stateMessageLocked())
	go w.read(w.conn)
	return agentEnd, nil
}

func (w *wrapperStandIn) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	w.dropConnLocked()
}

// maxLine bounds a line, as the wrapper's reader does.
const maxLine = 64 << 10

func (w *wrapperStandIn) read(c *standInConn) {
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
		w.dropConnLocked()
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
	if err != nil || !w.conn.queue(append(line, '\n')) {
		w.dropConnLocked()
	}
}

// dropConnLocked ends the agent's connection, if any.
func (w *wrapperStandIn) dropConnLocked() {
	if w.conn != nil {
		w.conn.close()
		w.conn = nil
	}
}

// standInConn is the stand-in's end of its agent's connection. Its lines
// go out through a queue that a goroutine of its own writes, as a Unix
// socket's buffer lets the wrapper send without waiting for the agent to
// read: an in-memory connection holds nothing.
type standInConn struct {
	net.Conn
	out chan []byte
}

// outQueue is the lines a connection holds for an agent that does not
// read; one more, and the agent is taken for gone.
const outQueue = 64

func newStandInConn(c net.Conn) *standInConn {
	s := &standInConn{Conn: c, out: make(chan []byte, outQueue)}
	go func() {
		failed := false
		for line := range s.out {
			if failed {
				continue
			}
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := c.Write(line); err != nil {
				failed = true
				_ = c.Close()
			}
		}
		_ = c.Close()
	}()
	return s
}

// queue hands line to the writer; false when the queue is full.
func (s *standInConn) queue(line []byte) bool {
	select {
	case s.out <- line:
		return true
	default:
		return false
	}
}

// close ends the connection once the lines queued before are written, as
// a closed socket delivers what it holds before its end.
func (s *standInConn) close() { close(s.out) }

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
			w.dropConnLocked()
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
		return fmt.Errorf("the worker of %s is %s, not running", w.control, w.state)
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
	w.dropConnLocked()
	w.state, w.attempt, w.pid, w.code, w.exitCode = wrapper.StateWaiting, 0, 0, 0, nil
}

// runsSince reports whether the worker runs an attempt started at t or
// later.
func (w *wrapperStandIn) runsSince(t time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state == wrapper.StateRunning && !w.startedAt.Before(t)
}
