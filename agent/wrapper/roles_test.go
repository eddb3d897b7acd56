package wrapper_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fastjobset/jobset/agent/wrapper"
)

// The test binary plays every process of the tests: the wrapper (its real
// Main), the worker it runs and the processes the worker spawns, each
// chosen by its first argument.
const (
	roleWrapper = "jobset-wrapper-test-wrapper"
	roleWorker  = "jobset-wrapper-test-worker"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case roleWrapper:
			os.Exit(wrapper.Main(os.Args[2:], os.Getenv, os.Stderr))
		case roleWorker:
			os.Exit(worker(os.Args[2], os.Args[3:]))
		}
	}
	os.Exit(m.Run())
}

// worker plays one process of a test. A worker reports what the test must
// know (PIDs, signals) by appending lines to a file the test names.
func worker(mode string, args []string) int {
	switch mode {
	case "exit": // exit CODE: a line on each stream, then CODE
		fmt.Println("hello from the worker")
		fmt.Fprintln(os.Stderr, "worker's stderr")
		return atoi(args[0])
	case "kill-self": // kill-self SIGNAL: die of SIGNAL
		_ = syscall.Kill(os.Getpid(), syscall.Signal(atoi(args[0])))
		sleepForever()
	case "sleep": // sleep FILE: note that it ran; on SIGTERM exit 0
		terms := make(chan os.Signal, 1)
		signal.Notify(terms, syscall.SIGTERM)
		appendLine(args[0], "ran")
		<-terms
		return 0
	case "record": // record FILE: write every forwarded signal, a groupmate too; SIGTERM: exit 42
		received := make(chan os.Signal, 16)
		signal.Notify(received, wrapper.Forwarded...)
		mate := spawn(nil, "record-mate", args[0]+".mate")
		waitForLine(args[0]+".mate", "ready")
		appendLine(args[0], "ready")
		for s := range received {
			appendLine(args[0], s.String())
			if s == syscall.SIGTERM {
				_ = mate.Wait()
				return 42
			}
		}
	case "record-mate":
		received := make(chan os.Signal, 16)
		signal.Notify(received, wrapper.Forwarded...)
		appendLine(args[0], "ready")
		for s := range received {
			appendLine(args[0], s.String())
			if s == syscall.SIGTERM {
				return 0
			}
		}
	case "stubborn": // stubborn FILE: ignore SIGTERM, and leave processes in and out of the group
		signal.Ignore(syscall.SIGTERM)
		pids := []int{
			spawn(nil, "sleeper").Process.Pid,
			spawn(&syscall.SysProcAttr{Setsid: true}, "sleeper").Process.Pid,
			spawn(&syscall.SysProcAttr{Setpgid: true}, "sleeper").Process.Pid,
			orphan("sleeper"),
		}
		for _, pid := range pids {
			appendLine(args[0], strconv.Itoa(pid))
		}
		appendLine(args[0], "ready")
		sleepForever()
	case "sleeper": // a process that ignores SIGTERM and waits to be killed
		signal.Ignore(syscall.SIGTERM)
		sleepForever()
	case "orphaner": // orphaner MODE ARGS...: start MODE in a session of its own, print its PID and exit
		fmt.Println(spawn(&syscall.SysProcAttr{Setsid: true}, args[0], args[1:]...).Process.Pid)
		return 0
	case "orphans": // orphans FILE N hold|exit: N orphans that end once re-parented; then wait for SIGTERM, or exit, with 7
		terms := make(chan os.Signal, 1)
		signal.Notify(terms, syscall.SIGTERM)
		for range atoi(args[1]) {
			orphan("short", args[0])
		}
		if args[2] == "hold" {
			appendLine(args[0], "ready")
			<-terms
		}
		return 7
	case "short": // short FILE: wait to be re-parented, write "PID PARENT", exit
		parent := atoi(os.Getenv(envSpawner))
		for os.Getppid() == parent {
			time.Sleep(time.Millisecond)
		}
		appendLine(args[0], fmt.Sprintf("%d %d", os.Getpid(), os.Getppid()))
		return 0
	case "sleep-leaving": // sleep-leaving FILE: leave a sleeper in a session of its own; on SIGTERM exit 0
		terms := make(chan os.Signal, 1)
		signal.Notify(terms, syscall.SIGTERM)
		appendLine(args[0], strconv.Itoa(orphan("sleeper")))
		appendLine(args[0], "ready")
		<-terms
		return 0
	case "leave": // leave FILE CODE: leave a sleeper in a session of its own, exit CODE
		appendLine(args[0], strconv.Itoa(orphan("sleeper")))
		return atoi(args[1])
	}
	fmt.Fprintln(os.Stderr, "unknown worker mode", mode)
	return 100
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// envSpawner tells a spawned role its parent's PID, which it may outlive
// before it could read it.
const envSpawner = "JOBSET_WRAPPER_TEST_SPAWNER"

// spawn starts another role of the test binary, with no standard streams.
func spawn(attr *syscall.SysProcAttr, mode string, args ...string) *exec.Cmd {
	self, err := os.Executable()
	if err != nil {
		panic(err)
	}
	cmd := exec.Command(self, append([]string{roleWorker, mode}, args...)...)
	cmd.SysProcAttr = attr
	cmd.Env = append(os.Environ(), envSpawner+"="+strconv.Itoa(os.Getpid()))
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	return cmd
}

// orphan starts mode through an orphaner, which exits at once: the process
// re-parents to the nearest reaper, the wrapper.
func orphan(mode string, args ...string) int {
	self, err := os.Executable()
	if err != nil {
		panic(err)
	}
	out, err := exec.Command(self, append([]string{roleWorker, "orphaner", mode}, args...)...).Output()
	if err != nil {
		panic(err)
	}
	return atoi(strings.TrimSpace(string(out)))
}

func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		panic(err)
	}
}

// readLines returns the lines of path so far; none while it is absent.
func readLines(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var lines []string
	for s := bufio.NewScanner(f); s.Scan(); {
		lines = append(lines, s.Text())
	}
	return lines
}

// waitForLine is the workers' own wait; tests use eventually.
func waitForLine(path, line string) {
	for deadline := time.Now().Add(patience); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		for _, l := range readLines(path) {
			if l == line {
				return
			}
		}
	}
	panic("no line " + line + " in " + path)
}
