package wrapper_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/fastjobset/jobset/agent/wrapper"
	"github.com/fastjobset/jobset/tools/testing/syncbuffer"
)

// patience bounds every wait of the tests: generous, since a race-enabled
// binary on a loaded machine starts slowly, and a test only waits it out
// when it fails.
const patience = 30 * time.Second

// run is one wrapper process under test.
type run struct {
	t    *testing.T
	dir  string
	sock string
	cmd  *exec.Cmd
	// stdout and stderr are the wrapper's, and so the worker's.
	stdout, stderr syncbuffer.Buffer
	done           chan struct{}
	code           int
}

// newRun prepares a directory for a wrapper's socket and the worker's
// files.
func newRun(t *testing.T) *run {
	return &run{t: t, dir: t.TempDir(), sock: "wrapper.sock", done: make(chan struct{})}
}

// address is where the test dials the wrapper's socket. The wrapper runs
// in the run's directory and listens on a relative path, and the test
// reaches it through the wrapper's working directory: a socket's address
// must fit in 108 bytes, and Bazel's temporary directories are deeper.
func (r *run) address() string {
	return "/proc/" + strconv.Itoa(r.pid()) + "/cwd/" + r.sock
}

// file names a file of the run's directory.
func (r *run) file(name string) string { return filepath.Join(r.dir, name) }

// start runs the wrapper with flags and the worker mode and arguments.
func (r *run) start(flags []string, worker ...string) *run {
	r.t.Helper()
	self, err := os.Executable()
	if err != nil {
		r.t.Fatal(err)
	}
	args := append([]string{roleWrapper}, flags...)
	args = append(args, "--", self, roleWorker)
	r.startCommand(append(args, worker...)...)
	return r
}

// startCommand runs the wrapper with args as they are.
func (r *run) startCommand(args ...string) {
	r.t.Helper()
	self, err := os.Executable()
	if err != nil {
		r.t.Fatal(err)
	}
	r.cmd = exec.Command(self, args...)
	r.cmd.Dir = r.dir
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	// A process the wrapper failed to end would hold the output pipes
	// open; the test then fails on what it checks, not by hanging.
	r.cmd.WaitDelay = 5 * time.Second
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	wrapperPID := r.cmd.Process.Pid
	go func() {
		err := r.cmd.Wait()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			ws := exit.Sys().(syscall.WaitStatus)
			r.code = ws.ExitStatus()
			if ws.Signaled() {
				r.code = 128 + int(ws.Signal())
			}
		case err != nil:
			r.code = -1
		}
		close(r.done)
	}()
	r.t.Cleanup(func() {
		// Whatever the test left: the wrapper and all below it.
		for _, pid := range descendantsOf(wrapperPID) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = syscall.Kill(wrapperPID, syscall.SIGKILL)
		<-r.done
		if r.t.Failed() {
			r.t.Logf("wrapper's stdout:\n%s\nwrapper's stderr:\n%s", r.stdout.String(), r.stderr.String())
		}
	})
}

func (r *run) pid() int { return r.cmd.Process.Pid }

// exitCode waits for the wrapper to exit and returns its code.
func (r *run) exitCode() int {
	r.t.Helper()
	select {
	case <-r.done:
		return r.code
	case <-time.After(patience):
		r.t.Fatalf("the wrapper did not exit within %s", patience)
		return 0
	}
}

// exited reports whether the wrapper has exited.
func (r *run) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

func (r *run) signal(s syscall.Signal) {
	r.t.Helper()
	if err := r.cmd.Process.Signal(s); err != nil {
		r.t.Fatalf("signalling the wrapper: %v", err)
	}
}

// agent is the test's end of the control channel.
type agent struct {
	t        *testing.T
	conn     *wrapper.Conn
	received chan wrapper.Message
	ended    chan error
}

// connect dials the wrapper's socket until it answers.
func (r *run) connect() *agent {
	r.t.Helper()
	var conn *wrapper.Conn
	eventually(r.t, "the wrapper accepts a connection", func() bool {
		var err error
		conn, err = wrapper.Dial(context.Background(), r.address())
		return err == nil
	})
	a := &agent{t: r.t, conn: conn, received: make(chan wrapper.Message, 64), ended: make(chan error, 1)}
	go func() {
		for {
			m, err := conn.Receive()
			if err != nil {
				a.ended <- err
				return
			}
			a.received <- m
		}
	}()
	r.t.Cleanup(func() { _ = conn.Close() })
	return a
}

// expect returns the next message, which must be of type want.
func (a *agent) expect(want wrapper.Type) wrapper.Message {
	a.t.Helper()
	select {
	case m := <-a.received:
		if m.Type != want {
			a.t.Fatalf("received %+v, want a %s message", m, want)
		}
		return m
	case err := <-a.ended:
		a.t.Fatalf("the connection ended (%v) before a %s message", err, want)
	case <-time.After(patience):
		a.t.Fatalf("no %s message within %s", want, patience)
	}
	return wrapper.Message{}
}

// expectEnd waits until the wrapper closes the connection.
func (a *agent) expectEnd() {
	a.t.Helper()
	select {
	case m := <-a.received:
		a.t.Fatalf("received %+v, want the connection to end", m)
	case err := <-a.ended:
		if !errors.Is(err, io.EOF) {
			a.t.Fatalf("the connection ended with %v, want the wrapper to close it (EOF)", err)
		}
	case <-time.After(patience):
		a.t.Fatalf("the connection did not end within %s", patience)
	}
}

func (a *agent) send(m wrapper.Message) {
	a.t.Helper()
	if err := a.conn.Send(m); err != nil {
		a.t.Fatalf("sending %+v: %v", m, err)
	}
}

// eventually polls cond until it holds, and fails the test at patience.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(patience); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", patience, what)
		}
	}
}

// gone reports whether no process has pid, not even a zombie.
func gone(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return errors.Is(err, fs.ErrNotExist)
}

// descendantsOf lists the processes below pid, from /proc.
func descendantsOf(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		fields := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
		if parent, err := strconv.Atoi(string(fields[1])); err == nil {
			children[parent] = append(children[parent], child)
		}
	}
	var found []int
	for queue := slices.Clone(children[pid]); len(queue) > 0; queue = queue[1:] {
		found = append(found, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return found
}

// pidsFrom waits for the "ready" line of a worker's file and returns the
// PIDs listed before it.
func pidsFrom(t *testing.T, path string) []int {
	t.Helper()
	var lines []string
	eventually(t, path+" says ready", func() bool {
		lines = readLines(path)
		return len(lines) > 0 && lines[len(lines)-1] == "ready"
	})
	var pids []int
	for _, l := range lines[:len(lines)-1] {
		pids = append(pids, atoi(l))
	}
	return pids
}
