package wrapper

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

func TestParseStat(t *testing.T) {
	for name, tc := range map[string]struct {
		stat      string
		ppid      int
		state     byte
		wantError bool
	}{
		"plain":                               {stat: "42 (sleep) S 7 42 42 0 -1", ppid: 7, state: 'S'},
		"zombie":                              {stat: "42 (python3) Z 1 42 42 0 -1", ppid: 1, state: 'Z'},
		"name with spaces, parens":            {stat: "42 (a) b (c)) R 9 42 42 0 -1", ppid: 9, state: 'R'},
		"no name":                             {stat: "42 sleep S 7", wantError: true},
		"cut short":                           {stat: "42 (sleep) S", wantError: true},
		"parent is not a number":              {stat: "42 (sleep) S x", wantError: true},
		"state is not one letter":             {stat: "42 (sleep) SS 7", wantError: true},
		"PID 1, parent outside the namespace": {stat: "1 (init) S 0 1 1 0 -1", ppid: 0, state: 'S'},
	} {
		t.Run(name, func(t *testing.T) {
			ppid, state, err := parseStat([]byte(tc.stat))
			if (err != nil) != tc.wantError {
				t.Fatalf("error = %v, want an error: %v", err, tc.wantError)
			}
			if err == nil && (ppid != tc.ppid || state != tc.state) {
				t.Errorf("ppid, state = %d, %c; want %d, %c", ppid, state, tc.ppid, tc.state)
			}
		})
	}
}

func TestDescendants(t *testing.T) {
	procs := []proc{
		{pid: 1, ppid: 0}, {pid: 10, ppid: 1}, // the wrapper
		{pid: 11, ppid: 10}, {pid: 12, ppid: 10}, // its children
		{pid: 13, ppid: 11}, {pid: 14, ppid: 13}, // below them
		{pid: 20, ppid: 1}, {pid: 21, ppid: 20}, // elsewhere
	}
	if got, want := descendants(procs, 10), []int{11, 12, 13, 14}; !slices.Equal(got, want) {
		t.Errorf("descendants of 10 = %v, want %v", got, want)
	}
	if got := descendants(procs, 14); len(got) != 0 {
		t.Errorf("descendants of a leaf = %v, want none", got)
	}
}

func TestExitCode(t *testing.T) {
	for name, tc := range map[string]struct {
		status syscall.WaitStatus
		want   int
	}{
		"exit 0":          {0, 0},
		"exit 3":          {3 << 8, 3},
		"exit 255":        {255 << 8, 255},
		"SIGKILL":         {syscall.WaitStatus(syscall.SIGKILL), 137},
		"SIGTERM":         {syscall.WaitStatus(syscall.SIGTERM), 143},
		"SIGSEGV, a core": {syscall.WaitStatus(syscall.SIGSEGV) | 0x80, 139},
	} {
		if got := exitCode(tc.status); got != tc.want {
			t.Errorf("%s: exit code %d, want %d", name, got, tc.want)
		}
	}
}

func TestDetectCgroupProcs(t *testing.T) {
	files := func(m map[string]string) func(string) ([]byte, error) {
		return func(path string) ([]byte, error) {
			if content, ok := m[path]; ok {
				return []byte(content), nil
			}
			return nil, fs.ErrNotExist
		}
	}
	container := map[string]string{selfCgroupPath: "0::/\n", cgroupProcsPath: "1\n"}
	for name, tc := range map[string]struct {
		pid   int
		files map[string]string
		want  string
	}{
		"PID 1 at its cgroup namespace's root": {1, container, cgroupProcsPath},
		// shareProcessNamespace, or not in a container: the file may list
		// what is not the container's.
		"not PID 1": {7, container, ""},
		"inside a cgroup of the namespace": {1, map[string]string{
			selfCgroupPath: "0::/kubepods/pod1/abc\n", cgroupProcsPath: "1\n"}, ""},
		"cgroup v1": {1, map[string]string{
			selfCgroupPath: "12:memory:/\n0::/\n", cgroupProcsPath: "1\n"}, ""},
		"no cgroup.procs": {1, map[string]string{selfCgroupPath: "0::/\n"}, ""},
		"no /proc":        {1, map[string]string{}, ""},
	} {
		if got := detectCgroupProcs(tc.pid, files(tc.files)); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}

func TestLivingOthers(t *testing.T) {
	procRoot := t.TempDir()
	for pid, stat := range map[string]string{
		"1":  "1 (jobset-wrapper) S 0 1 1 0 -1",
		"20": "20 (bash) S 0 20 20 0 -1",
		"21": "21 (defunct) Z 1 21 21 0 -1",
		"23": "23 (sh) S 20 20 20 0 -1",
	} {
		if err := os.MkdirAll(filepath.Join(procRoot, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(procRoot, pid, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The poll's listing was taken before 23 started: the cgroup's list
	// names it, and it is read on its own.
	listed := []proc{{pid: 1}, {pid: 20}, {pid: 21, zombie: true}}
	list := filepath.Join(t.TempDir(), "cgroup.procs")
	// The wrapper, a live process, a zombie, one of another PID namespace
	// (0), one that ended since, one that started after the listing.
	if err := os.WriteFile(list, []byte("1\n20\n21\n0\n22\n23\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := livingOthers(list, listed, procRoot, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{20, 23}; !slices.Equal(got, want) {
		t.Errorf("living others = %v, want %v", got, want)
	}
	if _, err := livingOthers(filepath.Join(t.TempDir(), "absent"), listed, procRoot, 1); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error for an absent list = %v, want not exist", err)
	}
}

func TestNamespaceOthers(t *testing.T) {
	// The namespace's listing: the wrapper (1), a live exec session, a
	// process that is a zombie by now, one that ended since it was listed.
	listed := []proc{{pid: 1}, {pid: 20}, {pid: 21, ppid: 1}, {pid: 22}}
	procs := []proc{{pid: 1}, {pid: 20}, {pid: 21, ppid: 1, zombie: true}}
	if got, want := namespaceOthers(listed, procs, 1), []int{20}; !slices.Equal(got, want) {
		t.Errorf("namespace's others = %v, want %v", got, want)
	}
	if got := namespaceOthers(procs, procs, 1); !slices.Equal(got, []int{20}) {
		t.Errorf("others of /proc as PID 1 lists it = %v, want [20]", got)
	}
	if got := namespaceOthers(nil, procs, 1); len(got) != 0 {
		t.Errorf("others of an empty listing = %v, want none", got)
	}
}

func TestDetectPIDNamespace(t *testing.T) {
	if got := detectPIDNamespace(1); got != "/proc" {
		t.Errorf("as PID 1: %q, want /proc", got)
	}
	if got := detectPIDNamespace(7); got != "" {
		t.Errorf("as PID 7 (a shared or the host's PID namespace): %q, want none", got)
	}
}

func TestReadProcsSeesThisProcess(t *testing.T) {
	procs := readProcs(procRoot)
	i := slices.IndexFunc(procs, func(p proc) bool { return p.pid == os.Getpid() })
	if i < 0 {
		t.Fatalf("/proc lists %d processes, not this one (%d)", len(procs), os.Getpid())
	}
	if procs[i].ppid != os.Getppid() {
		t.Errorf("parent of this process = %d, want %d", procs[i].ppid, os.Getppid())
	}
}
