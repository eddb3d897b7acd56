package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fastjobset/jobset/agent/wrapper"
)

// The test binary plays the real wrapper and its worker when run with a
// role as its first argument: the wrapper takes signals and children
// process-wide, so it runs in a process of its own.
const (
	roleWrapper = "bench-coordination-role=wrapper"
	roleWorker  = "bench-coordination-role=worker"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case roleWrapper:
			os.Exit(wrapper.Main(os.Args[2:], os.Getenv, os.Stderr))
		case roleWorker:
			runWorker(os.Args[2])
		}
	}
	os.Exit(m.Run())
}

// runWorker is a worker that exits at once on SIGTERM, as the stand-in's
// does, and on its own with code 1 once the file exit exists, which it
// removes so that the next attempt runs.
func runWorker(exit string) {
	terms := make(chan os.Signal, 1)
	signal.Notify(terms, syscall.SIGTERM)
	for {
		select {
		case <-terms:
			os.Exit(128 + int(syscall.SIGTERM))
		case <-time.After(5 * time.Millisecond):
			if os.Remove(exit) == nil {
				os.Exit(1)
			}
		}
	}
}

// peer is a worker wrapper the test drives as an agent does, which
// reaches it through dial.
type peer struct {
	dial func(ctx context.Context) (*wrapper.Conn, error)
	// workerExits has the worker exit on its own with code 1.
	workerExits func(t *testing.T)
	// started is told the attempts started; stops counts the stops of a
	// running worker.
	started []int
	stops   int
}

const patience = 30 * time.Second

// socketDir is a directory for a socket: its path must fit in 108 bytes.
func socketDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "b2w")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func standInPeer(t *testing.T) *peer {
	p := &peer{}
	s := newWrapperStandIn("/b2/test/0/control", wrapperHooks{
		started:  func(n int) { p.started = append(p.started, n) },
		stopping: func() { p.stops++ },
	})
	t.Cleanup(s.close)
	p.dial = func(ctx context.Context) (*wrapper.Conn, error) {
		c, err := s.dial(ctx, s.control)
		if err != nil {
			return nil, err
		}
		return wrapper.NewConn(c), nil
	}
	p.workerExits = func(t *testing.T) {
		if err := s.exit(1); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func realPeer(t *testing.T) *peer {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := socketDir(t)
	control, exit := filepath.Join(dir, "0"), filepath.Join(dir, "exit")
	p := &peer{dial: func(ctx context.Context) (*wrapper.Conn, error) { return wrapper.Dial(ctx, control) }}
	cmd := exec.Command(self, roleWrapper, "-control="+control, "-cgroup=off", "-pid-namespace=off", "-agent-wait=10m",
		"--", self, roleWorker, exit)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
			if t.Failed() {
				t.Logf("the wrapper's stderr:\n%s", stderr.String())
			}
		case <-time.After(patience):
			_ = cmd.Process.Kill()
		}
	})
	p.workerExits = func(t *testing.T) {
		if err := os.WriteFile(exit, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// dial connects as the agent does, retrying while nothing listens yet.
func dial(t *testing.T, p *peer) *wrapper.Conn {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		c, err := p.dial(context.Background())
		if err == nil {
			t.Cleanup(func() { _ = c.Close() })
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("dialing the wrapper: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// receive is the wrapper's next message, its PID marked as 1 when there
// is one (PIDs are the real wrapper's own); an error when the connection
// ended.
func receive(t *testing.T, c *wrapper.Conn) (wrapper.Message, error) {
	t.Helper()
	type got struct {
		m   wrapper.Message
		err error
	}
	ch := make(chan got, 1)
	go func() {
		m, err := c.Receive()
		ch <- got{m, err}
	}()
	select {
	case g := <-ch:
		if g.m.PID != 0 {
			g.m.PID = 1
		}
		return g.m, g.err
	case <-time.After(patience):
		t.Fatal("no message from the wrapper")
		return wrapper.Message{}, nil
	}
}

// The stand-in answers an agent's words as the real wrapper does for a
// worker that exits at once on SIGTERM: the same conversation, line for
// line, against both (the agent's side: wrapper.Dial, or the stand-in's
// dial, and Conn).
func TestWrapperStandInSpeaksAsTheWrapper(t *testing.T) {
	type step struct {
		do   func(t *testing.T, p *peer, c *wrapper.Conn) *wrapper.Conn
		want wrapper.Message
	}
	send := func(m wrapper.Message) func(*testing.T, *peer, *wrapper.Conn) *wrapper.Conn {
		return func(t *testing.T, _ *peer, c *wrapper.Conn) *wrapper.Conn {
			if err := c.Send(m); err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	exits := func(t *testing.T, p *peer, c *wrapper.Conn) *wrapper.Conn { p.workerExits(t); return c }
	// reconnects as a restarted agent does: the older connection ends.
	reconnects := func(t *testing.T, p *peer, old *wrapper.Conn) *wrapper.Conn {
		c := dial(t, p)
		if _, err := receive(t, old); err == nil {
			t.Error("the older connection still receives")
		}
		return c
	}
	steps := []step{
		{send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 1}), wrapper.Message{Type: wrapper.TypeStarted, Attempt: 1, PID: 1}},
		{send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 2}), wrapper.Message{Type: wrapper.TypeError, Reason: "cannot start while running"}},
		{exits, wrapper.Message{Type: wrapper.TypeExited, Attempt: 1, Code: wrapper.Code(1)}},
		{send(wrapper.Message{Type: wrapper.TypeStop, Grace: wrapper.Duration(30 * time.Second)}),
			wrapper.Message{Type: wrapper.TypeStopped, Attempt: 1, Code: wrapper.Code(1)}},
		{send(wrapper.Message{Type: wrapper.TypeStop}), wrapper.Message{Type: wrapper.TypeStopped, Attempt: 1, Code: wrapper.Code(1)}},
		{send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 3}),
			wrapper.Message{Type: wrapper.TypeError, Reason: "cannot start attempt 3: the next attempt is 2"}},
		{send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 2}), wrapper.Message{Type: wrapper.TypeStarted, Attempt: 2, PID: 1}},
		{reconnects, wrapper.Message{Type: wrapper.TypeState, State: wrapper.StateRunning, Attempt: 2, PID: 1}},
		{send(wrapper.Message{Type: wrapper.TypeExit, Code: wrapper.Code(0)}),
			wrapper.Message{Type: wrapper.TypeError, Reason: "cannot exit while running: stop the worker first"}},
		{send(wrapper.Message{Type: "restart"}),
			wrapper.Message{Type: wrapper.TypeError, Reason: `unknown message type "restart": the agent sends start, stop or exit`}},
		{send(wrapper.Message{Type: wrapper.TypeStop, Grace: wrapper.Duration(30 * time.Second)}),
			wrapper.Message{Type: wrapper.TypeStopped, Attempt: 2, Code: wrapper.Code(143)}},
		{reconnects, wrapper.Message{Type: wrapper.TypeState, State: wrapper.StateStopped, Attempt: 2, Code: wrapper.Code(143)}},
		{send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 3}), wrapper.Message{Type: wrapper.TypeStarted, Attempt: 3, PID: 1}},
	}
	for name, newPeer := range map[string]func(*testing.T) *peer{"stand-in": standInPeer, "wrapper": realPeer} {
		t.Run(name, func(t *testing.T) {
			p := newPeer(t)
			c := dial(t, p)
			if got, err := receive(t, c); err != nil || !cmp.Equal(got, wrapper.Message{Type: wrapper.TypeState, State: wrapper.StateWaiting}) {
				t.Fatalf("first message %+v (%v), want the state: waiting", got, err)
			}
			for i, s := range steps {
				c = s.do(t, p, c)
				got, err := receive(t, c)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if diff := cmp.Diff(s.want, got); diff != "" {
					t.Fatalf("step %d (-want +got):\n%s", i, diff)
				}
			}
			// Stopped, the worker may end the container: the wrapper exits,
			// and with it the connection.
			send(wrapper.Message{Type: wrapper.TypeStop})(t, p, c)
			if _, err := receive(t, c); err != nil {
				t.Fatal(err)
			}
			send(wrapper.Message{Type: wrapper.TypeExit, Code: wrapper.Code(0)})(t, p, c)
			if m, err := receive(t, c); err == nil {
				t.Errorf("after exit, the wrapper sent %+v", m)
			}
			if name == "stand-in" {
				if diff := cmp.Diff([]int{1, 2, 3}, p.started); diff != "" {
					t.Errorf("attempts started (-want +got):\n%s", diff)
				}
				// A running worker's, twice; not the exited one's.
				if p.stops != 2 {
					t.Errorf("%d stops of a running worker, want 2", p.stops)
				}
			}
		})
	}
}

// The stand-in's worker exits only while it runs: the trigger of a group
// restart needs a worker that the agent started.
func TestWrapperStandInExitNeedsARunningWorker(t *testing.T) {
	s := newWrapperStandIn("/b2/test/0/control", wrapperHooks{})
	defer s.close()
	if s.exit(1) == nil {
		t.Error("a worker that never started exited")
	}
}
