// Package cluster_test tests the local cluster's preflight
// (tools/cluster/preflight.sh) on fake machines: a PATH of stub commands
// and a fake tree for /sys and /usr.
package cluster_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fastjobset/jobset/tools/testing/framework"
)

// machine is a fake host: which commands exist, whether id -u says root,
// which cgroup layout /sys/fs/cgroup has, and what df says of the disk.
type machine struct {
	root     bool
	cgroup   string // "v1" (with the freezer), "v2" (unified alone) or ""
	commands []string
	cni      []string
	// df is what `df -P -k` prints; empty: no df on the machine.
	df string
}

var allCommands = []string{"go", "nsenter", "unshare", "mount", "mountpoint", "setsid", "ip", "iptables",
	"conntrack", "containerd", "ctr", "runc", "curl", "openssl", "sha256sum"}

// complete is a machine that has everything the cluster needs.
func complete() machine {
	return machine{root: true, cgroup: "v1", commands: allCommands, cni: []string{"bridge", "host-local"}}
}

// expectMentions fails t for each of wants that the preflight's message
// out lacks.
func expectMentions(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("the message lacks %q:\n%s", want, out)
		}
	}
}

// preflight runs the script on m and returns its exit code and stderr.
func preflight(t *testing.T, m machine) (int, string) {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin, fs := filepath.Join(dir, "bin"), filepath.Join(dir, "fs")
	uid := "1000"
	if m.root {
		uid = "0"
	}
	write := func(path, text string, mode os.FileMode) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(bin, "id"), "#!"+bash+"\necho "+uid+"\n", 0o755)
	for _, c := range m.commands {
		write(filepath.Join(bin, c), "#!"+bash+"\n", 0o755)
	}
	if m.df != "" {
		// printf, a builtin: the machine's PATH holds its stubs alone.
		write(filepath.Join(bin, "df"), "#!"+bash+"\nprintf '%s' '"+m.df+"'\n", 0o755)
	}
	for _, p := range m.cni {
		write(filepath.Join(fs, "usr/lib/cni", p), "", 0o755)
	}
	switch m.cgroup {
	case "v1":
		write(filepath.Join(fs, "sys/fs/cgroup/freezer/cgroup.procs"), "", 0o644)
	case "v2":
		write(filepath.Join(fs, "sys/fs/cgroup/cgroup.controllers"), "cpu memory\n", 0o644)
	}

	cmd := exec.Command(bash, filepath.Join(root, "tools/cluster/preflight.sh"))
	cmd.Env = []string{"PATH=" + bin, "JOBSET_PREFLIGHT_FS=" + fs}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stderr.String()
	default:
		t.Fatal(err)
		return 0, ""
	}
}

func TestPreflightPassesAMachineThatHasEverything(t *testing.T) {
	code, out := preflight(t, complete())
	if code != 0 || out != "" {
		t.Errorf("exit %d, stderr %q; want 0 and nothing", code, out)
	}
}

func TestPreflightNamesWhatIsMissingAndTheAlternative(t *testing.T) {
	var some []string
	for _, c := range allCommands {
		if c != "containerd" && c != "ctr" && c != "conntrack" && c != "ip" {
			some = append(some, c)
		}
	}
	code, out := preflight(t, machine{cgroup: "v2", commands: some, cni: []string{"host-local"}})
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	expectMentions(t, out,
		"root:",
		"cgroup v2 alone",
		"systemd.unified_cgroup_hierarchy=0",
		"commands: ip conntrack containerd ctr /usr/lib/cni/bridge (from: iproute2, conntrack, containerd, containernetworking-plugins)",
		"KUBECONFIG=<its kubeconfig> tools/demo.sh",
		"bazel-bin/images/",
		"docs/local-cluster.md",
	)
}

func TestPreflightNamesAMachineWithoutTheFreezer(t *testing.T) {
	noFreezer := complete()
	noFreezer.cgroup = ""
	code, out := preflight(t, noFreezer)
	if code != 1 || !strings.Contains(out, "nothing is mounted at /sys/fs/cgroup/freezer") || strings.Contains(out, "root:") || strings.Contains(out, "commands:") {
		t.Errorf("exit %d, want 1 and the freezer alone named:\n%s", code, out)
	}
}

// The packages the preflight names are the ones CI installs and the docs
// list: one list, three places that must agree with it.
func TestPreflightPackagesAreTheDocumentedOnes(t *testing.T) {
	root, err := framework.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	read := func(path string) string {
		data, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	script := read("tools/cluster/preflight.sh")
	var packages []string
	for _, m := range regexp.MustCompile(`"[^"|]+\|([a-z0-9-]+)"`).FindAllStringSubmatch(script, -1) {
		if p := m[1]; p != "coreutils" && !slices.Contains(packages, p) {
			packages = append(packages, p)
		}
	}
	if len(packages) < 5 {
		t.Fatalf("found only the packages %q in preflight.sh: is its list still command|package?", packages)
	}
	slices.Sort(packages)
	for _, doc := range []string{"README.md", "docs/local-cluster.md", "e2e/README.md"} {
		text := strings.Join(strings.Fields(read(doc)), " ")
		m := regexp.MustCompile("`([a-z0-9 -]*containernetworking-plugins[a-z0-9 -]*)`").FindStringSubmatch(text)
		if m == nil {
			t.Errorf("%s lists no packages of the local cluster", doc)
			continue
		}
		documented := strings.Fields(m[1])
		slices.Sort(documented)
		if !slices.Equal(documented, packages) {
			t.Errorf("%s lists the local cluster's packages %q, preflight.sh checks %q", doc, documented, packages)
		}
	}
	ci := read(".ci/run")
	for _, p := range packages {
		if !regexp.MustCompile(`(?m)^\s*(packages=\()?[^#\n]*\b` + regexp.QuoteMeta(p) + `\b`).MatchString(ci) {
			t.Errorf(".ci/run does not install %s, which preflight.sh requires", p)
		}
	}
}

// dfOutput is what `df -P -k` prints of a 251 GiB disk with free KiB free.
func dfOutput(free string) string {
	return "Filesystem     1024-blocks      Used Available Capacity Mounted on\n" +
		"/dev/vda         263174212 200000000 " + free + "      99% /\n"
}

func TestPreflightNamesADiskTooFullForTheKubelets(t *testing.T) {
	full := complete()
	full.df = dfOutput("3145728") // 3 GiB: above the kubelets' 1% (2.5 GiB), not above what the cluster takes too
	code, out := preflight(t, full)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	expectMentions(t, out,
		"disk: 3.0 GiB free on the filesystem of /tmp/jobset-cluster, 6.5 GiB needed",
		"evict every Pod below 1% free, 2.5 GiB there",
		"go clean -cache",
		"JOBSET_CLUSTER_DIR",
	)
	roomy := complete()
	roomy.df = dfOutput("41943040") // 40 GiB
	if code, out := preflight(t, roomy); code != 0 || out != "" {
		t.Errorf("40 GiB free: exit %d, stderr %q; want 0 and nothing", code, out)
	}
}
