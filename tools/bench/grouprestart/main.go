// Command grouprestart is benchmark B1 (../shared/BENCHMARKS.md): on a
// real cluster, a JobSet of W workers (2 Jobs of W/2 Pods) loses one worker
// (exit code 1), and the time from that exit to every worker container
// running again is measured, for InPlaceRestart (the agent sidecar) and for
// Recreate (backoffLimit 0, no agent), on the same cluster in one run.
//
// The end is observed by polling the Pods every 50 ms: Pod status
// timestamps have a one-second resolution, too coarse for restarts of a few
// seconds. Output, one line per configuration:
//
//	bench=group-restart strategy=InPlaceRestart workers=8 p50_s=3.1 p90_s=3.4 runs=5
//
// plus a line per run and the Recreate/InPlaceRestart ratio per W.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/bench/internal/summary"
	"github.com/fastjobset/jobset/tools/testing/kubeapply"
	"github.com/fastjobset/jobset/tools/testing/workload"
)

func main() {
	var (
		kubeconfig, install, root, workerList, strategyList string
		runs                                                int
		timeout                                             time.Duration
	)
	flag.StringVar(&kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "The cluster, with install.yaml deployed and the images present.")
	flag.StringVar(&install, "install", "", "install.yaml to deploy first (empty: already deployed).")
	flag.StringVar(&root, "root", ".", "Root of the source tree (docs/examples, agent/rbac).")
	flag.StringVar(&workerList, "workers", "4,8,16", "Comma-separated numbers of workers (even).")
	flag.StringVar(&strategyList, "strategies", "InPlaceRestart,Recreate", "Comma-separated restart strategies.")
	flag.IntVar(&runs, "runs", 5, "Group restarts measured per configuration.")
	flag.DurationVar(&timeout, "timeout", 30*time.Minute, "Give up after this long.")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if kubeconfig == "" {
		fail(errors.New("no cluster: set KUBECONFIG or -kubeconfig (tools/bench/run.sh brings up the local one)"))
	}
	c, err := workload.Connect(kubeconfig, root)
	if err == nil && install != "" {
		err = kubeapply.Deploy(ctx, c.Client, install)
	}
	if err == nil {
		err = run(ctx, c, workerList, strategyList, runs)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "grouprestart:", err)
	os.Exit(1)
}

func run(ctx context.Context, c *workload.Cluster, workerList, strategyList string, runs int) error {
	var workers []int
	for _, w := range strings.Split(workerList, ",") {
		n, err := strconv.Atoi(w)
		if err != nil || n < 2 || n%2 != 0 {
			return fmt.Errorf("-workers: %q is not an even number of at least 2", w)
		}
		workers = append(workers, n)
	}
	strategies := strings.Split(strategyList, ",")
	for _, s := range strategies {
		if s != string(jobset.InPlaceRestart) && s != string(jobset.Recreate) {
			return fmt.Errorf("-strategies: %q is neither InPlaceRestart nor Recreate", s)
		}
	}
	for _, w := range workers {
		medians := map[string]float64{}
		for _, s := range strategies {
			times, err := measure(ctx, c, jobset.JobSetRestartStrategy(s), w, runs)
			if err != nil {
				return fmt.Errorf("%s with %d workers: %w", s, w, err)
			}
			medians[s] = summary.Percentile(times, 50)
			summary.Print("group-restart", "strategy", s, "workers", w,
				"p50_s", medians[s], "p90_s", summary.Percentile(times, 90), "runs", len(times))
		}
		if in, re := medians[string(jobset.InPlaceRestart)], medians[string(jobset.Recreate)]; in > 0 && re > 0 {
			summary.Print("group-restart-ratio", "workers", w, "recreate_over_inplace", re/in)
		}
	}
	return nil
}

// measure runs one JobSet of the strategy with w workers in a namespace of
// its own and times runs group restarts.
func measure(ctx context.Context, c *workload.Cluster, strategy jobset.JobSetRestartStrategy, w, runs int) ([]float64, error) {
	ns := "bench-" + strings.ToLower(string(strategy)) + "-" + strconv.Itoa(w)
	defer func() { _ = c.DeleteNamespace(context.WithoutCancel(ctx), ns) }()
	js, before, err := c.Start(ctx, ns, strategy, w)
	if err != nil {
		return nil, err
	}
	var times []float64
	for run := range runs {
		names := slices.Sorted(func(yield func(string) bool) {
			for name := range before {
				if !yield(name) {
					return
				}
			}
		})
		victim := names[run%len(names)]
		start := time.Now()
		if _, err := c.Clientset.CoreV1().Pods(ns).ProxyGet("http", victim, "8081", "/exit",
			map[string]string{"code": "1"}).DoRaw(ctx); err != nil {
			return nil, fmt.Errorf("asking the worker of %s to fail: %w", victim, err)
		}
		after, err := c.WaitForWorkers(ctx, js, w, restartedSince(strategy, before))
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", run, err)
		}
		seconds := time.Since(start).Seconds()
		times = append(times, seconds)
		summary.Print("group-restart-run", "strategy", strategy, "workers", w, "run", run, "seconds", seconds)
		before = after
	}
	return times, nil
}

// restartedSince reports whether every worker restarted since before: in
// place, the same Pods with the worker restarted; with Recreate, none of
// the Pods of before.
func restartedSince(strategy jobset.JobSetRestartStrategy, before map[string]workload.PodState) func(map[string]workload.PodState) bool {
	return func(now map[string]workload.PodState) bool {
		for name, p := range now {
			b, existed := before[name]
			if strategy == jobset.Recreate && existed && b.UID == p.UID {
				return false
			}
			if strategy == jobset.InPlaceRestart && (!existed || b.UID != p.UID || p.Restarts <= b.Restarts) {
				return false
			}
		}
		return true
	}
}
