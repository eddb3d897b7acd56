package wrapper

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// DefaultAgentWait is how long the wrapper waits for an agent to connect
// when it needs one's word: long enough for the agent container to
// restart, short enough that a Pod without an agent is barely slowed.
const DefaultAgentWait = 10 * time.Second

// ExitUsage: the wrapper's own flags are wrong (as a shell's usage error).
const ExitUsage = 2

// Forwarded are the signals the wrapper passes on to the worker's process
// group. SIGTERM and SIGINT also end the wrapper once nothing runs.
var Forwarded = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

const (
	// pollInterval: how often a stop looks whether anything is left. A
	// process that leaves the tree sends no signal the wrapper could wait
	// on (a non-child's end, a cgroup's member).
	pollInterval = 10 * time.Millisecond
	// writeTimeout bounds a write to an agent that stopped reading; the
	// wrapper drops that agent rather than stall the worker's control.
	writeTimeout = time.Second
)

// Config configures Run.
type Config struct {
	// Command is the worker's argv; Command[0] is looked up in PATH.
	Command []string
	// Control is the Unix socket the agent connects to. Empty: no agent;
	// the wrapper runs the command once, forwards signals and reaps.
	Control string
	// AgentWait is how long the wrapper waits for an agent to connect when
	// it needs one's word and none is connected.
	AgentWait time.Duration
	// CgroupProcs lists the container's processes (cgroup v2's
	// cgroup.procs); empty: the wrapper knows the worker's processes from
	// its process group and its children only.
	CgroupProcs string
	// PIDNamespace is a proc filesystem that lists the container's
	// processes alone (/proc, when the wrapper is PID 1 of the container's
	// PID namespace); empty: unknown.
	PIDNamespace string
	// Log receives the wrapper's own lines; the worker writes to the
	// wrapper's standard streams directly.
	Log io.Writer
	// Install, when set, is where the wrapper copies its own binary
	// instead of running a command (Install).
	Install string
}

// ParseArgs reads the wrapper's command line: flags, then the worker's
// command (after "--" when it starts with a dash).
func ParseArgs(args []string, getenv func(string) string, output io.Writer) (Config, error) {
	flags := flag.NewFlagSet("jobset-wrapper", flag.ContinueOnError)
	flags.SetOutput(output)
	flags.Usage = func() {
		fmt.Fprintln(output, "usage: jobset-wrapper [flags] -- command [arg ...]")
		flags.PrintDefaults()
	}
	cfg := Config{Log: output}
	flags.StringVar(&cfg.Control, "control", getenv(agentspec.EnvWrapperControl),
		"Unix socket the agent connects to (default $"+agentspec.EnvWrapperControl+"); empty: run the command once, without an agent")
	flags.DurationVar(&cfg.AgentWait, "agent-wait", DefaultAgentWait,
		"how long to wait for an agent to connect when the wrapper needs its word")
	cgroup := flags.String("cgroup", "auto",
		`the container's cgroup.procs, to confirm a stop: "auto" (cgroup v2 when the wrapper is PID 1), "off", or a path`)
	pidNamespace := flags.String("pid-namespace", "auto",
		`a proc filesystem listing the container's processes alone, to confirm a stop: "auto" (/proc when the wrapper is PID 1), "off", or a path`)
	flags.StringVar(&cfg.Install, "install", "",
		"copy this binary to the given path, executable by all, and exit (an init container installs the wrapper so)")
	if err := flags.Parse(args); err != nil {
		return Config{}, err
	}
	cfg.Command = flags.Args()
	switch {
	case cfg.Install != "" && len(cfg.Command) > 0:
		return Config{}, fmt.Errorf("-install=%s copies the wrapper and runs nothing: remove the command %q", cfg.Install, cfg.Command)
	case cfg.Install != "":
		return Config{Install: cfg.Install, Log: output}, nil
	case len(cfg.Command) == 0:
		flags.Usage()
		return Config{}, errors.New("no command to run")
	case cfg.AgentWait < 0:
		return Config{}, fmt.Errorf("-agent-wait=%s is negative", cfg.AgentWait)
	}
	switch *cgroup {
	case "auto":
		cfg.CgroupProcs = detectCgroupProcs(os.Getpid(), os.ReadFile)
	case "off", "":
	default:
		cfg.CgroupProcs = *cgroup
	}
	switch *pidNamespace {
	case "auto":
		cfg.PIDNamespace = detectPIDNamespace(os.Getpid())
	case "off", "":
	default:
		cfg.PIDNamespace = *pidNamespace
	}
	return cfg, nil
}

// Main runs the wrapper binary and returns its exit code.
func Main(args []string, getenv func(string) string, stderr io.Writer) int {
	cfg, err := ParseArgs(args, getenv, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintln(stderr, "jobset-wrapper:", err)
		return ExitUsage
	case cfg.Install != "":
		if err := Install(cfg.Install); err != nil {
			fmt.Fprintf(stderr, "jobset-wrapper: installing into %s: %v\n", cfg.Install, err)
			return 1
		}
		return 0
	}
	return Run(cfg)
}

// then is what a stop leads to once nothing of the worker is left.
type then int

const (
	thenReport then = iota // stopped, to the agent
	thenStart              // the next attempt (a start after an exit)
	thenExit               // the wrapper's exit
)

type stopping struct {
	grace    time.Duration
	deadline time.Time
	killed   bool // SIGKILL sent
	then     then
	// arg is the attempt to start, or the code to exit with.
	arg    int
	ticker *time.Ticker
}

// agent is one connection of an agent.
type agent struct{ conn net.Conn }

// event is what the wrapper's goroutines tell its loop.
type event struct {
	accepted net.Conn
	from     *agent
	msg      Message
	err      error // a line that is no message
	closed   bool
}

// wrapper is the state of Run. Only Run's goroutine touches it: it alone
// forks, reaps, signals and writes to the agent, so that no state is
// shared and the main process's status cannot be reaped from under it.
type wrapper struct {
	cfg  Config
	self int

	state   State
	attempt int
	pid     int // main process of the attempt while it runs; 0 otherwise
	pgid    int // process group of the latest attempt; 0 before the first
	code    int // how the latest attempt ended, once pid is 0
	stop    *stopping
	// terminating: the signal that ends the container (SIGTERM, SIGINT);
	// the wrapper exits once nothing runs and asks no agent.
	terminating syscall.Signal

	listening bool
	agent     *agent
	// absent fires when no agent connected within AgentWait of the
	// wrapper needing one.
	absent *time.Timer

	exit   *int
	events chan event
	done   chan struct{}
}

// Run runs the worker as Config says until the wrapper must exit, and
// returns the exit code.
func Run(cfg Config) int {
	w := &wrapper{cfg: cfg, self: os.Getpid(), state: StateWaiting, events: make(chan event), done: make(chan struct{})}
	defer close(w.done)
	if len(cfg.Command) == 0 {
		w.logf("no command to run")
		return ExitUsage
	}
	if err := becomeSubreaper(); err != nil {
		w.logf("cannot become the child subreaper (%v): processes the worker orphans escape its stop", err)
	}
	// Subscribed before the first fork: a SIGCHLD sent before would be
	// lost, and so would the main process's status.
	children := make(chan os.Signal, 1)
	signal.Notify(children, syscall.SIGCHLD)
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, Forwarded...)
	defer signal.Stop(children)
	defer signal.Stop(signals)

	if cfg.Control != "" {
		l, err := listen(cfg.Control)
		if err != nil {
			w.logf("cannot listen for the agent on %s (%v): running the worker without one", cfg.Control, err)
		} else {
			w.listening = true
			defer l.Close() // removes the socket file
			go w.accept(l)
		}
	}
	defer func() {
		if w.agent != nil {
			_ = w.agent.conn.Close()
		}
	}()

	w.settle()
	for w.exit == nil {
		var tick, absent <-chan time.Time
		if w.stop != nil {
			tick = w.stop.ticker.C
		}
		if w.absent != nil {
			absent = w.absent.C
		}
		select {
		case <-children:
			w.reap()
			if w.stop != nil {
				w.stepStop()
			} else if w.state == StateRunning && w.pid == 0 {
				w.exited()
			}
		case s := <-signals:
			w.signal(s.(syscall.Signal))
		case e := <-w.events:
			w.handleEvent(e)
		case <-tick:
			w.stepStop()
		case <-absent:
			w.absent = nil
			w.agentAbsent()
		}
		w.settle()
	}
	return *w.exit
}

func (w *wrapper) logf(format string, args ...any) {
	fmt.Fprintf(w.cfg.Log, "jobset-wrapper: "+format+"\n", args...)
}

// listen serves the control socket. A socket left at path by the
// container's previous run is replaced; anything else there is not
// touched (a typo must not delete a file).
func listen(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode().Type() == fs.ModeSocket {
		_ = os.Remove(path)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	// The agent runs as its own user, and the worker as any: the socket
	// lives in a volume only the Pod's containers mount.
	if err := os.Chmod(path, 0o666); err != nil {
		_ = l.Close()
		return nil, err
	}
	return l, nil
}

func (w *wrapper) accept(l net.Listener) {
	for {
		c, err := l.Accept()
		switch {
		case errors.Is(err, net.ErrClosed):
			return
		case err != nil: // out of file descriptors, for instance
			select {
			case <-time.After(100 * time.Millisecond):
				continue
			case <-w.done:
				return
			}
		}
		if !w.post(event{accepted: c}) {
			_ = c.Close()
			return
		}
	}
}

func (w *wrapper) read(a *agent) {
	lines := bufio.NewScanner(a.conn)
	lines.Buffer(make([]byte, 4096), maxLine)
	for lines.Scan() {
		if len(bytes.TrimSpace(lines.Bytes())) == 0 {
			continue
		}
		m, err := decode(lines.Bytes())
		if !w.post(event{from: a, msg: m, err: err}) {
			return
		}
	}
	w.post(event{from: a, closed: true})
}

// post hands e to the loop, unless the wrapper is done.
func (w *wrapper) post(e event) bool {
	select {
	case w.events <- e:
		return true
	case <-w.done:
		return false
	}
}

func (w *wrapper) handleEvent(e event) {
	switch {
	case e.accepted != nil:
		// The newest connection wins: the agent that made the older one
		// has restarted, and two agents must never drive one worker.
		if w.agent != nil {
			_ = w.agent.conn.Close()
		}
		w.agent = &agent{conn: e.accepted}
		go w.read(w.agent)
		w.send(w.stateMessage())
	case e.from != w.agent:
		// An agent replaced or dropped since.
	case e.closed:
		_ = w.agent.conn.Close()
		w.agent = nil
	case e.err != nil:
		w.refuse(e.err.Error())
	default:
		w.handle(e.msg)
	}
}

// send writes m to the agent, if one is connected. A message no agent
// hears is not kept: the next agent learns it all from the state.
func (w *wrapper) send(m Message) {
	if w.agent == nil {
		return
	}
	line, err := encode(m)
	if err == nil {
		_ = w.agent.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
		_, err = w.agent.conn.Write(line)
	}
	if err != nil {
		_ = w.agent.conn.Close()
		w.agent = nil
	}
}

func (w *wrapper) refuse(reason string) {
	w.send(Message{Type: TypeError, Reason: reason})
}

func (w *wrapper) stateMessage() Message {
	return Message{Type: TypeState, State: w.state, Attempt: w.attempt, PID: w.pid, Code: w.endCode()}
}

// endCode is how the latest attempt ended, nil while none has.
func (w *wrapper) endCode() *int {
	if w.attempt == 0 || w.pid != 0 {
		return nil
	}
	return Code(w.code)
}

// handle carries out one message of the agent, or refuses it.
func (w *wrapper) handle(m Message) {
	idle := w.state == StateWaiting || w.state == StateStopped || w.state == StateExited
	switch m.Type {
	case TypeStart:
		switch {
		case w.terminating != 0:
			w.refuse("cannot start: the container is shutting down (" + w.terminating.String() + ")")
		case !idle:
			w.refuse(fmt.Sprintf("cannot start while %s", w.state))
		case m.Attempt != w.attempt+1:
			w.refuse(fmt.Sprintf("cannot start attempt %d: the next attempt is %d", m.Attempt, w.attempt+1))
		case w.state == StateExited:
			// What the attempt left behind goes first, without grace: its
			// main process is gone, and an agent that wants them to have
			// one sends stop first.
			w.beginStop(0, thenStart, m.Attempt)
		default:
			w.launch(m.Attempt)
		}
	case TypeStop:
		grace := time.Duration(m.Grace)
		switch w.state {
		case StateWaiting, StateStopped:
			w.send(Message{Type: TypeStopped, Attempt: w.attempt, Code: w.endCode()})
		case StateStopping:
			if d := time.Now().Add(grace); d.Before(w.stop.deadline) {
				w.stop.deadline = d
			}
			if w.stop.then == thenStart {
				w.stop.then = thenReport // the later word wins
			}
		default:
			w.beginStop(grace, thenReport, 0)
		}
	case TypeExit:
		switch {
		case m.Code == nil || *m.Code < 0 || *m.Code > 255:
			w.refuse("exit needs a code from 0 to 255")
		case !idle:
			w.refuse(fmt.Sprintf("cannot exit while %s: stop the worker first", w.state))
		default:
			w.beginStop(0, thenExit, *m.Code)
		}
	default:
		w.refuse(fmt.Sprintf("unknown message type %q: the agent sends %s, %s or %s", m.Type, TypeStart, TypeStop, TypeExit))
	}
}

// launch starts attempt n.
func (w *wrapper) launch(n int) {
	if n > 1 {
		w.logf("starting attempt %d of the worker (restarted in place by the agent)", n)
	}
	w.attempt = n
	pid, code, err := spawn(w.cfg.Command)
	if err != nil {
		w.logf("cannot run %s: %v", w.cfg.Command[0], err)
		w.pid, w.pgid, w.code = 0, 0, code
		w.state = StateExited
		w.send(Message{Type: TypeExited, Attempt: n, Code: Code(code)})
		return
	}
	w.pid, w.pgid = pid, pid
	w.state = StateRunning
	w.send(Message{Type: TypeStarted, Attempt: n, PID: pid})
}

// exited: the main process of a running attempt ended on its own.
func (w *wrapper) exited() {
	w.state = StateExited
	w.send(Message{Type: TypeExited, Attempt: w.attempt, Code: Code(w.code)})
	if w.terminating != 0 {
		w.beginStop(0, thenExit, w.code)
	}
}

// reap collects every child that ended, and reports whether the wrapper
// has no child left. Every child, not only the main process: orphans of
// the worker re-parent to the wrapper (PID 1, or subreaper) and would
// stay zombies. The main process's status is kept when it comes by.
func (w *wrapper) reap() (noChild bool) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ECHILD):
			return true
		case err != nil, pid == 0:
			return false
		case pid == w.pid:
			w.pid, w.code = 0, exitCode(ws)
		}
	}
}

// signal passes s on to the worker's process group, as a shell passes a
// terminal's signals to its foreground job. SIGTERM and SIGINT also mean
// the container is stopping: no further attempt starts, and the wrapper
// exits when the worker has (Pod deletion's grace period is the worker's).
func (w *wrapper) signal(s syscall.Signal) {
	if w.pgid != 0 {
		_ = syscall.Kill(-w.pgid, s)
	}
	if (s != syscall.SIGTERM && s != syscall.SIGINT) || w.terminating != 0 {
		return
	}
	w.terminating = s
	switch w.state {
	case StateWaiting:
		w.beginStop(0, thenExit, 128+int(s))
	case StateStopped, StateExited:
		w.beginStop(0, thenExit, w.code)
	}
}

// beginStop ends what is left of the attempt: SIGTERM to its process
// group, then after grace SIGKILL to everything left (stepStop).
func (w *wrapper) beginStop(grace time.Duration, then then, arg int) {
	w.state = StateStopping
	w.stop = &stopping{grace: grace, deadline: time.Now().Add(grace), then: then, arg: arg, ticker: time.NewTicker(pollInterval)}
	if grace > 0 && w.pgid != 0 {
		_ = syscall.Kill(-w.pgid, syscall.SIGTERM)
	}
	w.stepStop()
}

// stepStop finishes the stop if nothing is left, and kills what is left
// once the grace is over, or as soon as the process group has ended: what
// is left then is outside the group (setsid), never had the SIGTERM, and
// would gain nothing from the grace but delay the next attempt. A
// container runtime too kills the rest once the container's first process
// has exited. Each poll lists the processes once, for the check and the
// kill alike.
func (w *wrapper) stepStop() {
	procs := readProcs(procRoot)
	if w.nothingLeft(procs) {
		w.finishStop()
		return
	}
	graceOver := !time.Now().Before(w.stop.deadline)
	if !graceOver && !w.groupEnded() {
		return
	}
	if !w.stop.killed && graceOver && w.stop.grace > 0 {
		w.logf("attempt %d did not end within %s of SIGTERM: killing what is left of it", w.attempt, w.stop.grace)
	}
	w.stop.killed = true
	w.killAll(procs)
}

// groupEnded reports whether the attempt's main process and its process
// group have ended.
func (w *wrapper) groupEnded() bool {
	return w.pid == 0 && (w.pgid == 0 || errors.Is(syscall.Kill(-w.pgid, 0), syscall.ESRCH))
}

// nothingLeft reports whether nothing of the worker runs: the wrapper has
// no child (reaped or not; as reaper of the worker's orphans it would be
// the parent of any process that outlived its own), the attempt's process
// group is empty, and neither the container's cgroup nor its PID
// namespace, when known, holds a process but the wrapper.
func (w *wrapper) nothingLeft(procs []proc) bool {
	if !w.reap() {
		return false
	}
	if !w.groupEnded() {
		return false
	}
	return len(w.outsiders(procs)) == 0
}

// outsiders are the living processes of the container outside the
// worker's tree that the wrapper knows of: those its cgroup lists, and, as
// PID 1 of the container's PID namespace, every other process there.
// procs is the poll's listing of /proc.
func (w *wrapper) outsiders(procs []proc) []int {
	var pids []int
	if w.cfg.CgroupProcs != "" {
		if others, err := livingOthers(w.cfg.CgroupProcs, procs, procRoot, w.self); err == nil {
			pids = append(pids, others...)
		}
	}
	if w.cfg.PIDNamespace != "" {
		listed := procs
		if w.cfg.PIDNamespace != procRoot {
			listed = readProcs(w.cfg.PIDNamespace)
		}
		pids = append(pids, namespaceOthers(listed, procs, w.self)...)
	}
	return pids
}

// killAll sends SIGKILL to the attempt's process group, to every
// descendant of the wrapper (those that left the group with setsid or
// setpgid too) and to every other process of the container's cgroup and
// PID namespace (an exec session, which a container restart would end as
// well). It runs again on every poll until nothing is left: a process
// forked meanwhile is caught by the next.
func (w *wrapper) killAll(procs []proc) {
	if w.pgid != 0 {
		_ = syscall.Kill(-w.pgid, syscall.SIGKILL)
	}
	for _, pid := range descendants(procs, w.self) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, pid := range w.outsiders(procs) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func (w *wrapper) finishStop() {
	s := w.stop
	w.stop = nil
	s.ticker.Stop()
	switch {
	case s.then == thenExit:
		w.exit = &s.arg
	case s.then == thenStart && w.terminating == 0:
		w.launch(s.arg)
	default:
		w.state = StateStopped
		if w.attempt == 0 {
			w.state = StateWaiting
		}
		w.send(Message{Type: TypeStopped, Attempt: w.attempt, Code: w.endCode()})
		if w.terminating != 0 {
			code := 128 + int(w.terminating)
			if w.attempt > 0 {
				code = w.code
			}
			w.exit = &code
		}
	}
}

// settle arms the wait for an agent when the wrapper needs one's word and
// none is connected, and disarms it otherwise.
func (w *wrapper) settle() {
	idle := w.state == StateWaiting || w.state == StateStopped || w.state == StateExited
	need := idle && w.agent == nil && w.terminating == 0 && w.exit == nil
	switch {
	case need && w.absent == nil:
		wait := w.cfg.AgentWait
		if !w.listening {
			wait = 0
		}
		w.absent = time.NewTimer(wait)
	case !need && w.absent != nil:
		w.absent.Stop()
		w.absent = nil
	}
}

// agentAbsent falls back to what the Pod would do without an agent: the
// container started, so the first attempt runs (the agent's startup probe
// held the container back already); a worker that ended ends the
// container with its code, for the kubelet and the Job to judge.
func (w *wrapper) agentAbsent() {
	switch w.state {
	case StateWaiting:
		if w.listening {
			w.logf("no agent connected within %s: starting the worker without its word", w.cfg.AgentWait)
		}
		w.launch(1)
	case StateStopped, StateExited:
		if w.listening {
			w.logf("no agent connected within %s: exiting with the worker's code %d", w.cfg.AgentWait, w.code)
		}
		w.beginStop(0, thenExit, w.code)
	}
}
