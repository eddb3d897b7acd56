package wrapper_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fastjobset/jobset/agent/wrapper"
)

// Without an agent the wrapper is transparent: the worker's streams and
// exit code are the container's.
func TestExitCodePassesThrough(t *testing.T) {
	for name, tc := range map[string]struct {
		worker []string
		want   int
	}{
		"success":           {[]string{"exit", "0"}, 0},
		"failure":           {[]string{"exit", "3"}, 3},
		"255":               {[]string{"exit", "255"}, 255},
		"killed by SIGKILL": {[]string{"kill-self", strconv.Itoa(int(syscall.SIGKILL))}, 128 + 9},
		"killed by SIGTERM": {[]string{"kill-self", strconv.Itoa(int(syscall.SIGTERM))}, 128 + 15},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRun(t).start(nil, tc.worker...)
			if got := r.exitCode(); got != tc.want {
				t.Errorf("the wrapper exited %d, want %d", got, tc.want)
			}
		})
	}
}

func TestStreamsPassThroughUnchanged(t *testing.T) {
	r := newRun(t).start(nil, "exit", "0")
	if got := r.exitCode(); got != 0 {
		t.Fatalf("the wrapper exited %d, want 0", got)
	}
	if got, want := r.stdout.String(), "hello from the worker\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if got, want := r.stderr.String(), "worker's stderr\n"; got != want {
		t.Errorf("stderr = %q, want %q: the first attempt is not marked, and a wrapper without agent says nothing", got, want)
	}
}

func TestCommandThatCannotRun(t *testing.T) {
	dir := t.TempDir()
	notExecutable := dir + "/not-executable"
	if err := os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		command string
		want    int
	}{
		"not found":      {dir + "/absent", wrapper.ExitNotFound},
		"not in PATH":    {"jobset-wrapper-no-such-command", wrapper.ExitNotFound},
		"not executable": {notExecutable, wrapper.ExitCannotExecute},
	} {
		t.Run(name, func(t *testing.T) {
			r := newRun(t)
			r.startCommand(roleWrapper, "--", tc.command)
			if got := r.exitCode(); got != tc.want {
				t.Errorf("the wrapper exited %d, want %d", got, tc.want)
			}
			if !strings.Contains(r.stderr.String(), "jobset-wrapper: cannot run "+tc.command) {
				t.Errorf("stderr does not say the command cannot run: %q", r.stderr.String())
			}
		})
	}
}

// Each forwarded signal reaches the whole process group of the worker;
// SIGTERM too, and the wrapper then waits for the worker and exits with
// its code (the worker keeps its grace period).
func TestSignalsReachTheWorkersGroup(t *testing.T) {
	r := newRun(t)
	r.start(nil, "record", r.file("signals"))
	pidsFrom(t, r.file("signals"))
	for _, s := range []syscall.Signal{syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGQUIT, syscall.SIGINT, syscall.SIGTERM} {
		r.signal(s)
		for _, file := range []string{r.file("signals"), r.file("signals.mate")} {
			eventually(t, file+" records "+s.String(), func() bool {
				return slices.Contains(readLines(file), s.String())
			})
		}
	}
	if got := r.exitCode(); got != 42 {
		t.Errorf("the wrapper exited %d, want the worker's 42", got)
	}
}

// The worker ignores SIGTERM and leaves processes inside its group,
// outside it (setpgid), in a session of their own (setsid) and orphaned
// into a session of their own: stopped comes after the grace, and only
// once every one of them is gone.
func TestStopEndsTheWholeTreeAfterGrace(t *testing.T) {
	r := newRun(t)
	r.start([]string{"-control=" + r.sock, "-agent-wait=1m"}, "stubborn", r.file("pids"))
	a := r.connect()
	a.expect(wrapper.TypeState)
	a.send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 1})
	started := a.expect(wrapper.TypeStarted)
	pids := append(pidsFrom(t, r.file("pids")), started.PID)
	for _, pid := range pids {
		if gone(pid) {
			t.Fatalf("process %d is gone before the stop: the test would prove nothing", pid)
		}
	}
	const grace = 500 * time.Millisecond
	stopAt := time.Now()
	a.send(wrapper.Message{Type: wrapper.TypeStop, Grace: wrapper.Duration(grace)})
	stopped := a.expect(wrapper.TypeStopped)
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("process %d of the worker still exists when the wrapper says stopped", pid)
		}
	}
	if elapsed := time.Since(stopAt); elapsed < grace {
		t.Errorf("stopped after %s, before the grace of %s: the worker ignores SIGTERM", elapsed, grace)
	}
	if stopped.Attempt != 1 || stopped.Code == nil || *stopped.Code != 128+int(syscall.SIGKILL) {
		t.Errorf("stopped = %+v, want attempt 1 ended by SIGKILL (137)", stopped)
	}
	if !strings.Contains(r.stderr.String(), "jobset-wrapper: attempt 1 did not end within 500ms of SIGTERM") {
		t.Errorf("stderr does not say the grace ran out: %q", r.stderr.String())
	}
}

// A worker that ends on SIGTERM is stopped without waiting for the grace;
// the next start runs attempt 2, marked in the log; the agent's exit code
// is the wrapper's.
func TestStopThenRestartInPlace(t *testing.T) {
	r := newRun(t)
	r.start([]string{"-control=" + r.sock, "-agent-wait=1m"}, "sleep", r.file("ran"))
	a := r.connect()
	a.expect(wrapper.TypeState)
	a.send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 1})
	first := a.expect(wrapper.TypeStarted)
	eventually(t, "attempt 1 runs", func() bool { return len(readLines(r.file("ran"))) == 1 })

	a.send(wrapper.Message{Type: wrapper.TypeStop, Grace: wrapper.Duration(time.Hour)})
	stopped := a.expect(wrapper.TypeStopped)
	if stopped.Attempt != 1 || stopped.Code == nil || *stopped.Code != 0 {
		t.Errorf("stopped = %+v, want attempt 1 ended with its own code 0", stopped)
	}
	if !gone(first.PID) {
		t.Errorf("attempt 1's process %d still exists when the wrapper says stopped", first.PID)
	}

	a.send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 2})
	second := a.expect(wrapper.TypeStarted)
	if second.Attempt != 2 || second.PID == first.PID {
		t.Errorf("started = %+v after %+v, want attempt 2 in a new process", second, first)
	}
	eventually(t, "attempt 2 runs", func() bool { return len(readLines(r.file("ran"))) == 2 })
	if got := strings.Count(r.stderr.String(), "jobset-wrapper: starting attempt 2 of the worker (restarted in place by the agent)\n"); got != 1 {
		t.Errorf("stderr marks attempt 2 %d times, want once: %q", got, r.stderr.String())
	}

	a.send(wrapper.Message{Type: wrapper.TypeStop})
	a.expect(wrapper.TypeStopped)
	a.send(wrapper.Message{Type: wrapper.TypeExit, Code: wrapper.Code(5)})
	if got := r.exitCode(); got != 5 {
		t.Errorf("the wrapper exited %d, want the agent's 5", got)
	}
}

// A worker that exits on its own is reported at once; the agent restarts
// it in place, and the log shows both attempts' output with one mark; the
// agent's exit ends the container with the worker's code.
func TestExitedThenRestartedThenExit(t *testing.T) {
	r := newRun(t)
	r.start([]string{"-control=" + r.sock, "-agent-wait=1m"}, "exit", "3")
	a := r.connect()
	a.expect(wrapper.TypeState)
	for attempt := 1; attempt <= 2; attempt++ {
		a.send(wrapper.Message{Type: wrapper.TypeStart, Attempt: attempt})
		a.expect(wrapper.TypeStarted)
		exited := a.expect(wrapper.TypeExited)
		if exited.Attempt != attempt || exited.Code == nil || *exited.Code != 3 {
			t.Errorf("exited = %+v, want attempt %d with code 3", exited, attempt)
		}
	}
	a.send(wrapper.Message{Type: wrapper.TypeExit, Code: wrapper.Code(3)})
	if got := r.exitCode(); got != 3 {
		t.Errorf("the wrapper exited %d, want 3", got)
	}
	if got, want := r.stdout.String(), strings.Repeat("hello from the worker\n", 2); got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	want := "worker's stderr\n" +
		"jobset-wrapper: starting attempt 2 of the worker (restarted in place by the agent)\n" +
		"worker's stderr\n"
	if got := r.stderr.String(); got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}

// What an attempt that exited left behind is gone before the next one
// starts.
func TestStartAfterExitEndsWhatTheAttemptLeft(t *testing.T) {
	r := newRun(t)
	r.start([]string{"-control=" + r.sock, "-agent-wait=1m"}, "leave", r.file("left"), "1")
	a := r.connect()
	a.expect(wrapper.TypeState)
	a.send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 1})
	a.expect(wrapper.TypeStarted)
	a.expect(wrapper.TypeExited)
	var left int
	eventually(t, "attempt 1 says what it left", func() bool {
		lines := readLines(r.file("left"))
		if len(lines) > 0 {
			left = atoi(lines[0])
		}
		return left != 0
	})
	if gone(left) {
		t.Fatalf("process %d that attempt 1 left is gone already: the test would prove nothing", left)
	}
	a.send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 2})
	a.expect(wrapper.TypeStarted)
	if !gone(left) {
		t.Errorf("process %d that attempt 1 left still exists when attempt 2 starts", left)
	}
}

// Orphans re-parent to the wrapper, which reaps them: none stays a
// zombie, and the main process's status is still the wrapper's code.
func TestOrphansAreReaped(t *testing.T) {
	r := newRun(t)
	r.start(nil, "orphans", r.file("orphans"), "3", "hold")
	var lines []string
	eventually(t, "three orphans re-parented and ended", func() bool {
		lines = slices.DeleteFunc(readLines(r.file("orphans")), func(l string) bool { return l == "ready" })
		return len(lines) == 3
	})
	for _, line := range lines {
		pid, parent, _ := strings.Cut(line, " ")
		if atoi(parent) != r.pid() {
			t.Errorf("orphan %s re-parented to %s, not to the wrapper %d (its child subreaper)", pid, parent, r.pid())
		}
		eventually(t, "orphan "+pid+" is reaped", func() bool { return gone(atoi(pid)) })
	}
	r.signal(syscall.SIGTERM)
	if got := r.exitCode(); got != 7 {
		t.Errorf("the wrapper exited %d, want the worker's 7", got)
	}
}

// Orphans ending as the main process does never take its status.
func TestMainStatusSurvivesOrphansEndingWithIt(t *testing.T) {
	for i := range 2 {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			r := newRun(t)
			r.start(nil, "orphans", r.file("orphans"), "5", "exit")
			if got := r.exitCode(); got != 7 {
				t.Errorf("the wrapper exited %d, want the worker's 7", got)
			}
		})
	}
}

// The agent's connection drops: the worker runs on, and the next agent
// learns where it is; a newer connection replaces an older one.
func TestReconnectedAgentLearnsTheState(t *testing.T) {
	r := newRun(t)
	r.start([]string{"-control=" + r.sock, "-agent-wait=1m"}, "sleep", r.file("ran"))
	first := r.connect()
	first.expect(wrapper.TypeState)
	first.send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 1})
	started := first.expect(wrapper.TypeStarted)
	if err := first.conn.Close(); err != nil {
		t.Fatal(err)
	}

	second := r.connect()
	state := second.expect(wrapper.TypeState)
	if state.State != wrapper.StateRunning || state.Attempt != 1 || state.PID != started.PID || state.Code != nil {
		t.Errorf("state = %+v, want attempt 1 running as %d", state, started.PID)
	}

	third := r.connect()
	third.expect(wrapper.TypeState)
	second.expectEnd()

	if err := syscall.Kill(started.PID, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := third.expect(wrapper.TypeExited)
	if err := third.conn.Close(); err != nil {
		t.Fatal(err)
	}
	fourth := r.connect()
	state = fourth.expect(wrapper.TypeState)
	if state.State != wrapper.StateExited || state.Attempt != 1 || state.PID != 0 || state.Code == nil || *state.Code != *exited.Code {
		t.Errorf("state = %+v, want attempt 1 exited with %d", state, *exited.Code)
	}
	if r.exited() {
		t.Errorf("the wrapper exited while an agent was away for less than -agent-wait")
	}
}

// Without an agent when the worker exits, the worker's code is the
// wrapper's: the Pod-level behaviour.
func TestNoAgentExitsWithTheWorkersCode(t *testing.T) {
	t.Run("never connected", func(t *testing.T) {
		r := newRun(t)
		r.start([]string{"-control=" + r.sock, "-agent-wait=0"}, "exit", "5")
		if got := r.exitCode(); got != 5 {
			t.Errorf("the wrapper exited %d, want the worker's 5", got)
		}
		if !strings.Contains(r.stderr.String(), "jobset-wrapper: no agent connected within 0s: exiting with the worker's code 5") {
			t.Errorf("stderr does not say why the wrapper exited: %q", r.stderr.String())
		}
	})
	t.Run("gone after the exit", func(t *testing.T) {
		r := newRun(t)
		r.start([]string{"-control=" + r.sock, "-agent-wait=200ms"}, "exit", "5")
		a := r.connect()
		a.expect(wrapper.TypeState)
		a.send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 1})
		a.expect(wrapper.TypeStarted)
		a.expect(wrapper.TypeExited)
		if err := a.conn.Close(); err != nil {
			t.Fatal(err)
		}
		if got := r.exitCode(); got != 5 {
			t.Errorf("the wrapper exited %d, want the worker's 5", got)
		}
	})
}

// The first attempt waits for the agent's start, like every other.
func TestFirstAttemptWaitsForStart(t *testing.T) {
	r := newRun(t)
	r.start([]string{"-control=" + r.sock, "-agent-wait=200ms"}, "sleep", r.file("ran"))
	a := r.connect()
	if state := a.expect(wrapper.TypeState); state.State != wrapper.StateWaiting || state.Attempt != 0 || state.PID != 0 {
		t.Errorf("state = %+v, want waiting before attempt 1", state)
	}
	// A connected agent holds the worker past -agent-wait: only an absent
	// one lets the wrapper start without its word.
	for deadline := time.Now().Add(3 * 200 * time.Millisecond); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if readLines(r.file("ran")) != nil {
			t.Fatal("the worker ran before the agent's start")
		}
	}
	a.send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 2})
	if refused := a.expect(wrapper.TypeError); !strings.Contains(refused.Reason, "the next attempt is 1") {
		t.Errorf("start of attempt 2 refused with %q, want it to name attempt 1", refused.Reason)
	}
	a.send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 1})
	if started := a.expect(wrapper.TypeStarted); started.Attempt != 1 {
		t.Errorf("started = %+v, want attempt 1", started)
	}
	eventually(t, "the worker runs", func() bool { return len(readLines(r.file("ran"))) == 1 })
}

// No agent within -agent-wait: the first attempt starts without its word.
func TestFirstAttemptStartsWithoutAnAgent(t *testing.T) {
	r := newRun(t)
	const wait = 300 * time.Millisecond
	begun := time.Now()
	r.start([]string{"-control=" + r.sock, "-agent-wait=" + wait.String()}, "sleep", r.file("ran"))
	eventually(t, "the worker runs", func() bool { return len(readLines(r.file("ran"))) == 1 })
	if elapsed := time.Since(begun); elapsed < wait {
		t.Errorf("the worker ran %s after the wrapper started, before -agent-wait=%s", elapsed, wait)
	}
	if !strings.Contains(r.stderr.String(), "jobset-wrapper: no agent connected within 300ms: starting the worker without its word") {
		t.Errorf("stderr does not say why the worker started: %q", r.stderr.String())
	}
	a := r.connect()
	if state := a.expect(wrapper.TypeState); state.State != wrapper.StateRunning || state.Attempt != 1 {
		t.Errorf("state = %+v, want attempt 1 running", state)
	}
}

// SIGTERM ends the container: the worker's exit ends the wrapper without
// asking the connected agent, and no further attempt starts.
func TestSigtermEndsWithoutAskingTheAgent(t *testing.T) {
	r := newRun(t)
	r.start([]string{"-control=" + r.sock, "-agent-wait=1h"}, "record", r.file("signals"))
	a := r.connect()
	a.expect(wrapper.TypeState)
	a.send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 1})
	a.expect(wrapper.TypeStarted)
	pidsFrom(t, r.file("signals"))
	r.signal(syscall.SIGTERM)
	if exited := a.expect(wrapper.TypeExited); exited.Code == nil || *exited.Code != 42 {
		t.Errorf("exited = %+v, want code 42", exited)
	}
	if got := r.exitCode(); got != 42 {
		t.Errorf("the wrapper exited %d, want the worker's 42", got)
	}
}

// SIGTERM before any attempt: nothing to wait for.
func TestSigtermWhileWaiting(t *testing.T) {
	r := newRun(t)
	r.start([]string{"-control=" + r.sock, "-agent-wait=1h"}, "sleep", r.file("ran"))
	a := r.connect()
	a.expect(wrapper.TypeState)
	r.signal(syscall.SIGTERM)
	if got := r.exitCode(); got != 128+int(syscall.SIGTERM) {
		t.Errorf("the wrapper exited %d, want 143", got)
	}
	if readLines(r.file("ran")) != nil {
		t.Error("the worker ran")
	}
}

// The worker ends on SIGTERM but left a process outside its group, which
// had no SIGTERM: the stop kills it without waiting out the grace.
func TestStopKillsWhatLeftTheGroupOnceTheGroupEnded(t *testing.T) {
	r := newRun(t)
	r.start([]string{"-control=" + r.sock, "-agent-wait=1m"}, "sleep-leaving", r.file("pids"))
	a := r.connect()
	a.expect(wrapper.TypeState)
	a.send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 1})
	a.expect(wrapper.TypeStarted)
	left := pidsFrom(t, r.file("pids"))
	a.send(wrapper.Message{Type: wrapper.TypeStop, Grace: wrapper.Duration(time.Hour)})
	if stopped := a.expect(wrapper.TypeStopped); stopped.Code == nil || *stopped.Code != 0 {
		t.Errorf("stopped = %+v, want attempt 1 ended with its own code 0", stopped)
	}
	if !gone(left[0]) {
		t.Errorf("process %d, outside the group, still exists when the wrapper says stopped", left[0])
	}
	if strings.Contains(r.stderr.String(), "did not end within") {
		t.Errorf("the wrapper says the grace ran out: %q", r.stderr.String())
	}
}

// A later stop with a shorter grace shortens the stop under way.
func TestSecondStopShortensTheGrace(t *testing.T) {
	r := newRun(t)
	r.start([]string{"-control=" + r.sock, "-agent-wait=1m"}, "stubborn", r.file("pids"))
	a := r.connect()
	a.expect(wrapper.TypeState)
	a.send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 1})
	a.expect(wrapper.TypeStarted)
	pidsFrom(t, r.file("pids"))
	a.send(wrapper.Message{Type: wrapper.TypeStop, Grace: wrapper.Duration(time.Hour)})
	a.send(wrapper.Message{Type: wrapper.TypeStop, Grace: wrapper.Duration(100 * time.Millisecond)})
	a.expect(wrapper.TypeStopped)
}

// The wrapper refuses what its state does not allow, and says why.
func TestRefusedMessages(t *testing.T) {
	r := newRun(t)
	r.start([]string{"-control=" + r.sock, "-agent-wait=1m"}, "sleep", r.file("ran"))
	a := r.connect()
	a.expect(wrapper.TypeState)
	for name, tc := range map[string]struct {
		send   wrapper.Message
		reason string
	}{
		"exit without code": {wrapper.Message{Type: wrapper.TypeExit}, "exit needs a code"},
		"exit code 256":     {wrapper.Message{Type: wrapper.TypeExit, Code: wrapper.Code(256)}, "exit needs a code"},
		"a wrapper's type":  {wrapper.Message{Type: wrapper.TypeStarted}, `unknown message type "started"`},
	} {
		a.send(tc.send)
		if got := a.expect(wrapper.TypeError); !strings.Contains(got.Reason, tc.reason) {
			t.Errorf("%s: refused with %q, want %q", name, got.Reason, tc.reason)
		}
	}
	a.send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 1})
	a.expect(wrapper.TypeStarted)
	for name, tc := range map[string]struct {
		send   wrapper.Message
		reason string
	}{
		"start while running": {wrapper.Message{Type: wrapper.TypeStart, Attempt: 2}, "cannot start while running"},
		"exit while running":  {wrapper.Message{Type: wrapper.TypeExit, Code: wrapper.Code(0)}, "cannot exit while running"},
	} {
		a.send(tc.send)
		if got := a.expect(wrapper.TypeError); !strings.Contains(got.Reason, tc.reason) {
			t.Errorf("%s: refused with %q, want %q", name, got.Reason, tc.reason)
		}
	}
}

// A line that is no message is refused, and the connection goes on.
func TestMalformedLines(t *testing.T) {
	r := newRun(t)
	r.start([]string{"-control=" + r.sock, "-agent-wait=1m"}, "sleep", r.file("ran"))
	var conn net.Conn
	eventually(t, "the wrapper accepts a connection", func() bool {
		var err error
		conn, err = net.Dial("unix", r.address())
		return err == nil
	})
	t.Cleanup(func() { _ = conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(patience)); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewReader(conn)
	receive := func() string {
		t.Helper()
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the wrapper: %v", err)
		}
		return line
	}
	if got, want := receive(), `{"type":"state","state":"waiting"}`+"\n"; got != want {
		t.Errorf("first line %q, want %q", got, want)
	}
	for _, line := range []string{"not json", `{"attempt":1}`, `{"type":"start","attempt":1,"extra":true}`, `{"type":"stop","grace":"-1s"}`} {
		if _, err := conn.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
		if got := receive(); !strings.HasPrefix(got, `{"type":"error","reason":"not a message of the wrapper's protocol`) {
			t.Errorf("%s: answered %q, want an error", line, got)
		}
	}
	if _, err := conn.Write([]byte("\n" + `{"type":"start","attempt":1}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if got := receive(); !strings.HasPrefix(got, `{"type":"started","attempt":1,"pid":`) {
		t.Errorf("start answered %q, want started", got)
	}
}

// A process of the container outside the worker's tree (an exec session)
// is listed by the cgroup, or by the proc filesystem of the container's
// PID namespace (cgroup v1): the stop ends it too before it confirms.
func TestStopEndsTheContainersOtherProcesses(t *testing.T) {
	t.Run("listed by the cgroup", func(t *testing.T) {
		testStopEndsAnOutsider(t, func(r *run, pid int) string {
			cgroupProcs := r.file("cgroup.procs")
			if err := os.WriteFile(cgroupProcs, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return "-cgroup=" + cgroupProcs
		})
	})
	t.Run("listed by the PID namespace", func(t *testing.T) {
		testStopEndsAnOutsider(t, func(r *run, pid int) string {
			// The namespace's /proc, as PID 1 would see it, cut down to
			// the exec session: this test's own process is no worker's.
			dir := r.file(filepath.Join("proc", strconv.Itoa(pid)))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			stat := fmt.Sprintf("%d (sleeper) S 0 %d %d 0 -1", pid, pid, pid)
			if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
				t.Fatal(err)
			}
			return "-pid-namespace=" + r.file("proc")
		})
	})
}

// testStopEndsAnOutsider starts a process outside the worker's tree, and a
// wrapper with the flag that lists it, and stops the worker.
func testStopEndsAnOutsider(t *testing.T, listed func(r *run, pid int) string) {
	r := newRun(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	outsider := exec.Command(self, roleWorker, "sleeper")
	if err := outsider.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { _ = outsider.Wait(); close(ended) }()
	t.Cleanup(func() { _ = outsider.Process.Kill(); <-ended })
	r.start([]string{"-control=" + r.sock, "-agent-wait=1m", listed(r, outsider.Process.Pid)}, "sleep", r.file("ran"))
	a := r.connect()
	a.expect(wrapper.TypeState)
	a.send(wrapper.Message{Type: wrapper.TypeStart, Attempt: 1})
	a.expect(wrapper.TypeStarted)
	a.send(wrapper.Message{Type: wrapper.TypeStop, Grace: wrapper.Duration(200 * time.Millisecond)})
	a.expect(wrapper.TypeStopped)
	select {
	case <-ended:
	default:
		// Killed but not reaped yet by this test is as good as gone.
		if stat, err := os.ReadFile("/proc/" + strconv.Itoa(outsider.Process.Pid) + "/stat"); err == nil && !strings.Contains(string(stat), ") Z ") {
			t.Errorf("the container's other process %d still runs when the wrapper says stopped", outsider.Process.Pid)
		}
	}
}
