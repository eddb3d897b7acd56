package main

import (
	"bytes"
	"debug/elf"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fastjobset/jobset/tools/testing/runfiles"
)

// binary is the wrapper Bazel built; without it (go test) the test builds
// one as the images do, with cgo off.
var binary = flag.String("binary", "", "the jobset-wrapper binary to check (Bazel passes its own)")

// An init container copies the wrapper into worker images of every kind,
// distroless and scratch among them: it must need no loader and no
// library, and link nothing of the Kubernetes clients.
func TestBinaryIsStaticAndLinksNoClient(t *testing.T) {
	path := runfiles.Path(*binary)
	if *binary == "" {
		path = filepath.Join(t.TempDir(), "jobset-wrapper")
		build := exec.Command("go", "build", "-trimpath", "-o", path, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s asks for a program interpreter: it is linked dynamically", path)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v (%v)", path, libs, err)
	}

	contents, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(contents, []byte("github.com/fastjobset/jobset/agent/wrapper.")) {
		t.Fatalf("%s holds no function of package wrapper: not the wrapper, and this test would prove nothing", path)
	}
	// A Go binary keeps the import path of every function it links.
	for _, linked := range []string{"k8s.io/client-go/", "k8s.io/api/", "k8s.io/apimachinery/", "k8s.io/klog/",
		"sigs.k8s.io/controller-runtime/", "github.com/fastjobset/jobset/agent/kubeclient"} {
		if bytes.Contains(contents, []byte(linked)) {
			t.Errorf("the wrapper links %s: it must stay the standard library and golang.org/x/sys", linked)
		}
	}

	run := exec.Command(path, "--", "/bin/sh", "-c", "exit 3")
	if err := run.Run(); !errors.As(err, new(*exec.ExitError)) || run.ProcessState.ExitCode() != 3 {
		t.Errorf("%s -- sh -c 'exit 3': %v, want exit code 3", path, err)
	}
	testInstall(t, path, contents)
}

// The agent's image has no shell and no cp: its wrapper copies itself into
// the volume it shares with the worker, executable by the worker's user
// whoever that is, and again over the copy when the Pod's containers
// restart.
func testInstall(t *testing.T, path string, contents []byte) {
	dest := filepath.Join(t.TempDir(), "jobset-wrapper")
	for range 2 {
		if out, err := exec.Command(path, "-install="+dest).CombinedOutput(); err != nil {
			t.Fatalf("%s -install=%s: %v\n%s", path, dest, err, out)
		}
	}
	installed, err := os.ReadFile(dest)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(installed, contents) {
		t.Errorf("the installed copy differs from the wrapper")
	}
	if fi, err := os.Stat(dest); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the installed copy: %v, %v; want mode 0755, executable by every user", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(dest)); len(entries) != 1 {
		t.Errorf("the install left %d files beside the copy, want only the copy", len(entries)-1)
	}
	run := exec.Command(dest, "--", "/bin/sh", "-c", "exit 4")
	if err := run.Run(); !errors.As(err, new(*exec.ExitError)) || run.ProcessState.ExitCode() != 4 {
		t.Errorf("the installed copy -- sh -c 'exit 4': %v, want exit code 4", err)
	}
}
