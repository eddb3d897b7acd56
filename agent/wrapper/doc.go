// Package wrapper is the worker wrapper: the process that runs a worker
// container's command as its child, so that the agent can restart the
// worker's process in place instead of the whole Pod. An init container
// copies the static binary (agent/cmd/jobset-wrapper) into a volume the
// worker container mounts, and the worker's command becomes
//
//	jobset-wrapper [-control=PATH] [-agent-wait=10s] [-cgroup=auto] [-pid-namespace=auto] -- command [arg ...]
//
// The init container runs it from the agent's image as
//
//	jobset-wrapper -install=PATH
//
// which copies the binary to PATH, mode 0755, and exits (Install): that
// image has no shell and no cp.
//
// It links the standard library and golang.org/x/sys/unix only: it runs
// in every worker container.
//
// # The worker
//
// Each attempt runs the command in a process group of its own, with the
// wrapper's standard streams unchanged, so that the worker's log reads as
// without the wrapper. The wrapper's own lines go to stderr, prefixed
// "jobset-wrapper: ", and every attempt after the first is marked there:
//
//	jobset-wrapper: starting attempt 2 of the worker (restarted in place by the agent)
//
// SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 go to the
// attempt's process group. After SIGTERM or SIGINT the container is
// stopping: the wrapper starts no further attempt and asks the agent
// nothing; it exits when the worker has, so the worker keeps the Pod's
// grace period, which ends with the kubelet's SIGKILL.
//
// The wrapper is the reaper of the worker's orphans: PID 1 of the
// container, or else its child subreaper (prctl PR_SET_CHILD_SUBREAPER,
// which needs no capability). It reaps every child with wait4(-1) from one
// goroutine, which also started them, and keeps the main process's status
// when it comes by, so that reaping orphans never loses it.
//
// The wrapper's exit code is the worker's: its exit status, or 128 + the
// signal that killed it, as a shell reports it. Its own failures use a
// shell's codes too: 127, the command is not found; 126, it cannot be
// executed; 2, the wrapper's flags are wrong.
//
// # The control channel
//
// The wrapper listens on a Unix socket (-control, default
// $JOBSET_WRAPPER_CONTROL) in the volume it shares with the agent; the
// agent connects. The wrapper serves because it holds the state and lives
// as long as the container: the agent container restarts on its own (a
// crash, an upgrade) and must find the worker as it left it. A new
// connection replaces the previous one, whose agent has restarted: two
// agents never drive one worker.
//
// Messages are JSON objects, one a line, in either direction (Message).
// On every connection the wrapper sends state first, then each event as it
// happens. An event while no agent is connected is not queued: the next
// connection's state says it all.
//
//	wrapper -> agent
//	  state{state, attempt, pid, code}  first, on every connection
//	  started{attempt, pid}            an attempt runs
//	  exited{attempt, code}            its main process ended on its own
//	  stopped{attempt, code}           a stop is done: nothing of the worker is left
//	  error{reason}                    a message refused; nothing changed
//
//	agent -> wrapper
//	  start{attempt}   start attempt (the wrapper's attempt + 1)
//	  stop{grace}      SIGTERM the attempt's process group; SIGKILL all
//	                   that is left after grace ("30s"; absent: 0), or as
//	                   soon as the group has ended (what is left then
//	                   left the group and never had the SIGTERM)
//	  exit{code}       exit the container with code (0..255)
//
// The states, and what the agent may send in each (anything else is
// refused with error):
//
//	waiting   no attempt yet (attempt 0)           start, stop (answered stopped at once), exit
//	running   the attempt's main process runs      stop
//	stopping  ending what is left of the attempt   stop (the earlier deadline holds)
//	stopped   the agent stopped the attempt        start, stop (answered at once), exit
//	exited    the main process ended on its own    start, stop, exit
//
// A command that cannot run is reported as exited (127 or 126) with no
// started before it.
//
// A start after exited, and an exit, first end what the attempt left
// behind with SIGKILL and no grace (its main process is gone; an agent
// that wants them to have a grace sends stop first). A start names its
// attempt, so that one sent on stale knowledge starts nothing twice.
//
// # Starting
//
// The wrapper starts every attempt, the first too, on the agent's start:
// the agent alone knows when the group may run. When the wrapper needs the
// agent's word (waiting, stopped, exited) and no agent is connected, it
// waits -agent-wait (default 10s) for one, then does what the Pod would do
// without an agent:
//
//   - waiting: it starts the first attempt. The container started, so the
//     agent's startup probe, the barrier, let it.
//   - exited, stopped: it exits with the attempt's code, for the kubelet's
//     restart rules and the Job's podFailurePolicy to judge, as today.
//
// Without -control (or when it cannot listen there, which it says on
// stderr) there is no agent: the wrapper runs the command once and exits
// with its code, a plain init that forwards signals and reaps.
//
// # Nothing left
//
// The wrapper confirms stopped only when nothing of the worker runs:
//
//   - it has no child left, reaped or not (wait4 answers ECHILD). As the
//     reaper it is the parent of every process of the worker's tree that
//     outlived its own parent, those that left the process group with
//     setsid among them;
//   - the attempt's process group is empty (kill(-pgid, 0) answers ESRCH);
//   - the container's cgroup lists no process but the wrapper, when the
//     wrapper knows it (-cgroup=auto: cgroup v2's
//     /sys/fs/cgroup/cgroup.procs, used only when the wrapper is PID 1 at
//     the root of its own cgroup namespace, where that file is the
//     container's; the agent is another container and not listed);
//   - the container's PID namespace holds no process but the wrapper,
//     when the wrapper is its init (-pid-namespace=auto: PID 1, where
//     /proc lists that namespace alone, on cgroup v1 as on v2; not with
//     shareProcessNamespace or hostPID, where the wrapper is not PID 1).
//
// Until then it polls, and once the grace is over it sends SIGKILL on
// every poll to the process group, to every descendant (from /proc) and to
// every other process of the cgroup and of the PID namespace. So an exec
// session in the worker container ends with a stop, as it would with a
// container restart.
package wrapper
