// Command footprint is benchmark B3 (docs/benchmark-definitions.md): what every
// worker Pod pays for the agent. It reports the stripped binary's size, the
// image's, and, on a real cluster running story 1 (docs/examples), the agents'
// resident memory while they watch and their CPU while the group is idle,
// read from /proc of this machine (the local cluster's containers run in
// its PID namespace tree).
//
//	bench=agent-footprint binary_mib=<MiB> image_mib=<MiB> rss_mib=<MiB> idle_cpu_millicores=<m> agents=4
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/bench/internal/procstat"
	"github.com/fastjobset/jobset/tools/bench/internal/summary"
	"github.com/fastjobset/jobset/tools/demo/workload"
)

func main() {
	var kubeconfig, install, root, binary, image, process string
	var idle time.Duration
	flag.StringVar(&kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "The cluster, with install.yaml deployed (empty: sizes only).")
	flag.StringVar(&install, "install", "", "install.yaml to deploy first (empty: already deployed).")
	flag.StringVar(&root, "root", ".", "Root of the source tree.")
	flag.StringVar(&binary, "binary", "", "The agent binary, as the image holds it (required).")
	flag.StringVar(&image, "image", "", "The agent image tar (required).")
	flag.StringVar(&process, "process", "jobset-agent", "The agents' process name in the containers.")
	flag.DurationVar(&idle, "idle", 30*time.Second, "How long to sample idle CPU.")
	flag.Parse()
	if err := run(kubeconfig, install, root, binary, image, process, idle); err != nil {
		fmt.Fprintln(os.Stderr, "footprint:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, install, root, binary, image, process string, idle time.Duration) error {
	if binary == "" || image == "" {
		return errors.New("-binary and -image are required (tools/bench/run.sh passes Bazel's)")
	}
	sizes := []any{}
	for _, f := range []struct{ key, path string }{{"binary_mib", binary}, {"image_mib", image}} {
		info, err := os.Stat(f.path)
		if err != nil {
			return err
		}
		sizes = append(sizes, f.key, float64(info.Size())/(1<<20))
	}
	if kubeconfig == "" {
		summary.Print("agent-footprint", sizes...)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute+idle)
	defer cancel()
	c, err := workload.Connect(kubeconfig, root)
	if err != nil {
		return err
	}
	if install != "" {
		if err := c.Deploy(ctx, install); err != nil {
			return err
		}
	}
	const ns, workers = "bench-footprint", 4
	defer func() { _ = c.DeleteNamespace(context.WithoutCancel(ctx), ns) }()
	if _, _, err := c.Start(ctx, ns, jobset.InPlaceRestart, workers); err != nil {
		return err
	}
	pids, err := processes(process)
	if err != nil {
		return err
	}
	if len(pids) != workers {
		return fmt.Errorf("found %d %s processes, want %d: is another JobSet running?", len(pids), process, workers)
	}
	before, err := cpuSeconds(pids)
	if err != nil {
		return err
	}
	time.Sleep(idle) // sampling: nothing to wait for
	after, err := cpuSeconds(pids)
	if err != nil {
		return err
	}
	var rss float64
	for _, pid := range pids {
		mib, err := procstat.MiB(pid, "VmRSS")
		if err != nil {
			return err
		}
		rss = max(rss, mib)
	}
	millicores := (after - before) / idle.Seconds() / float64(len(pids)) * 1000
	summary.Print("agent-footprint", append(sizes, "rss_mib", rss, "idle_cpu_millicores", millicores, "agents", len(pids))...)
	return nil
}

// processes returns the PIDs whose command is name.
func processes(name string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err == nil && strings.TrimSpace(string(comm)) == name {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

func cpuSeconds(pids []int) (float64, error) {
	var total float64
	for _, pid := range pids {
		s, err := procstat.CPUSeconds(pid)
		if err != nil {
			return 0, err
		}
		total += s
	}
	return total, nil
}
