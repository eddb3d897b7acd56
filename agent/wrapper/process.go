package wrapper

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Exit codes of a command that cannot run, as a shell gives them.
const (
	ExitCannotExecute = 126
	ExitNotFound      = 127
)

// becomeSubreaper makes the processes the worker orphans (a daemon's
// double fork, a setsid'd helper whose parent died) the wrapper's
// children, so that it reaps them and finds them when it stops the
// worker. PID 1 of a namespace is the reaper already. It needs no
// capability.
func becomeSubreaper() error {
	if os.Getpid() == 1 {
		return nil
	}
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// spawn starts argv in a process group of its own, whose ID is its PID,
// with the wrapper's standard streams and environment. When it cannot
// start, code is what a shell would exit with.
//
// syscall.ForkExec, not os/exec.Cmd: the wrapper reaps every child with
// wait4(-1), and a Cmd.Wait racing that reaper would lose the main
// process's status to it.
func spawn(argv []string) (pid, code int, err error) {
	path, err := exec.LookPath(argv[0])
	if err == nil {
		pid, err = syscall.ForkExec(path, argv, &syscall.ProcAttr{
			Env:   os.Environ(),
			Files: []uintptr{0, 1, 2},
			Sys:   &syscall.SysProcAttr{Setpgid: true},
		})
	}
	switch {
	case err == nil:
		return pid, 0, nil
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return 0, ExitNotFound, err
	default:
		return 0, ExitCannotExecute, err
	}
}

// exitCode is how a shell reports a child's end: its exit status, or 128 +
// the signal that killed it.
func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// procRoot is the proc filesystem of the wrapper's PID namespace.
const procRoot = "/proc"

// proc is one process as /proc/<pid>/stat shows it.
type proc struct {
	pid, ppid int
	zombie    bool
}

// readProcs lists the processes under procRoot (/proc). A process that
// ends while it is read is left out.
func readProcs(procRoot string) []proc {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	var procs []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(procRoot, pid); ok {
			procs = append(procs, p)
		}
	}
	return procs
}

func readProc(procRoot string, pid int) (proc, bool) {
	stat, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return proc{}, false
	}
	ppid, state, err := parseStat(stat)
	if err != nil {
		return proc{}, false
	}
	return proc{pid: pid, ppid: ppid, zombie: state == 'Z'}, true
}

// parseStat reads the state and parent of /proc/<pid>/stat: "pid (comm)
// state ppid ...". The command name may hold spaces and parentheses, so
// the fields start after its last ')'.
func parseStat(stat []byte) (ppid int, state byte, err error) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, 0, errors.New("no command name in /proc stat")
	}
	fields := bytes.Fields(stat[end+1:])
	if len(fields) < 2 || len(fields[0]) != 1 {
		return 0, 0, errors.New("too few fields in /proc stat")
	}
	ppid, err = strconv.Atoi(string(fields[1]))
	return ppid, fields[0][0], err
}

// descendants are the PIDs below root in procs' tree, nearest first.
func descendants(procs []proc, root int) []int {
	children := map[int][]int{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	var found []int
	for queue := slices.Clone(children[root]); len(queue) > 0; queue = queue[1:] {
		found = append(found, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return found
}

// living maps the PIDs of a listing to whether each lives: a zombie holds
// nothing, and its parent reaps it.
func living(procs []proc) map[int]bool {
	alive := make(map[int]bool, len(procs))
	for _, p := range procs {
		alive[p.pid] = !p.zombie
	}
	return alive
}

// livingOthers are the processes listed in a cgroup.procs file other than
// self that live by the poll's listing of procRoot. A process the listing
// does not hold started after it and is read on its own.
func livingOthers(cgroupProcs string, procs []proc, procRoot string, self int) ([]int, error) {
	list, err := os.ReadFile(cgroupProcs)
	if err != nil {
		return nil, err
	}
	alive := living(procs)
	var others []int
	for _, field := range bytes.Fields(list) {
		pid, err := strconv.Atoi(string(field))
		// 0: a process of another PID namespace, which no signal of ours
		// reaches.
		if err != nil || pid == self || pid == 0 {
			continue
		}
		live, listed := alive[pid]
		if !listed {
			p, ok := readProc(procRoot, pid)
			live = ok && !p.zombie
		}
		if live {
			others = append(others, pid)
		}
	}
	return others, nil
}

// namespaceOthers are the processes of a PID namespace's listing other
// than self that live by the poll's listing of /proc, which is the same
// listing when the wrapper is PID 1 of the container's PID namespace:
// /proc then lists that namespace alone, the worker's tree and every exec
// session in the container, whatever the cgroup version, and nothing of
// another container (the agent is one).
func namespaceOthers(listed, procs []proc, self int) []int {
	alive := living(procs)
	var others []int
	for _, p := range listed {
		if p.pid != self && alive[p.pid] {
			others = append(others, p.pid)
		}
	}
	return others
}

// detectPIDNamespace returns the proc filesystem that lists the
// container's processes alone, or "" when the wrapper cannot be sure: only
// as PID 1 is it the init of a PID namespace of the container's own (not
// with shareProcessNamespace, where the Pod's pause process is, nor with
// hostPID).
func detectPIDNamespace(pid int) string {
	if pid != 1 {
		return ""
	}
	return procRoot
}

// The container's cgroup, as cgroup v2 shows it to a container with its
// own cgroup namespace (containerd's and CRI-O's default on v2).
const (
	cgroupProcsPath = "/sys/fs/cgroup/cgroup.procs"
	selfCgroupPath  = "/proc/self/cgroup"
)

// detectCgroupProcs returns the cgroup.procs file that lists the
// container's processes, or "" when the wrapper cannot be sure it has one.
// It is sure only as PID 1 (the container's own PID namespace), on cgroup
// v2 alone, at the root of its cgroup namespace: anywhere else the file
// may list processes that are not the container's, and the wrapper kills
// what it lists.
func detectCgroupProcs(pid int, readFile func(string) ([]byte, error)) string {
	if pid != 1 {
		return ""
	}
	self, err := readFile(selfCgroupPath)
	if err != nil || string(bytes.TrimSpace(self)) != "0::/" {
		return ""
	}
	if _, err := readFile(cgroupProcsPath); err != nil {
		return ""
	}
	return cgroupProcsPath
}
