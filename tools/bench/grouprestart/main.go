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
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/api/scheme"
	"github.com/fastjobset/jobset/tools/bench/summary"
	"github.com/fastjobset/jobset/tools/kubeapply"
)

func main() {
	var (
		kubeconfig, install, root, workerList, strategyList string
		runs                                       int
		timeout                                    time.Duration
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
	b, err := connect(kubeconfig, root)
	if err == nil && install != "" {
		err = kubeapply.Deploy(ctx, b.c, install)
	}
	if err == nil {
		err = b.run(ctx, workerList, strategyList, runs)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "grouprestart:", err)
		os.Exit(1)
	}
}

type bench struct {
	c         client.Client
	clientset *kubernetes.Clientset
	root      string
}

func connect(kubeconfig, root string) (*bench, error) {
	if kubeconfig == "" {
		return nil, errors.New("no cluster: set KUBECONFIG or -kubeconfig (tools/bench/run.sh brings up the local one)")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 100, 200
	s, err := scheme.New()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, err
	}
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &bench{c: c, clientset: clientset, root: root}, nil
}

func (b *bench) run(ctx context.Context, workerList, strategyList string, runs int) error {
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
			times, err := b.measure(ctx, jobset.JobSetRestartStrategy(s), w, runs)
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
func (b *bench) measure(ctx context.Context, strategy jobset.JobSetRestartStrategy, w, runs int) ([]float64, error) {
	ns := "bench-" + strings.ToLower(string(strategy)) + "-" + strconv.Itoa(w)
	if err := b.recreateNamespace(ctx, ns); err != nil {
		return nil, err
	}
	defer func() { _ = b.deleteNamespace(context.WithoutCancel(ctx), ns) }()
	js, err := b.jobSet(ns, strategy, w)
	if err != nil {
		return nil, err
	}
	// Right after a deployment the webhook may not serve yet: the API
	// server then answers with an internal error.
	for err := b.c.Create(ctx, js.DeepCopy()); err != nil; err = b.c.Create(ctx, js.DeepCopy()) {
		if !apierrors.IsInternalError(err) || ctx.Err() != nil {
			return nil, err
		}
		time.Sleep(200 * time.Millisecond)
	}
	before, err := b.waitForWorkers(ctx, js, w, func(map[string]podState) bool { return true })
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
		if _, err := b.clientset.CoreV1().Pods(ns).ProxyGet("http", victim, "8081", "/exit",
			map[string]string{"code": "1"}).DoRaw(ctx); err != nil {
			return nil, fmt.Errorf("asking the worker of %s to fail: %w", victim, err)
		}
		after, err := b.waitForWorkers(ctx, js, w, restartedSince(strategy, before))
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

// podState is what a restart must change: the Pod (Recreate) or the
// worker's restart count (in place).
type podState struct {
	uid      types.UID
	restarts int32
}

// restartedSince reports whether every worker restarted since before: in
// place, the same Pods with the worker restarted; with Recreate, none of
// the Pods of before.
func restartedSince(strategy jobset.JobSetRestartStrategy, before map[string]podState) func(map[string]podState) bool {
	return func(now map[string]podState) bool {
		for name, p := range now {
			b, existed := before[name]
			if strategy == jobset.Recreate && existed && b.uid == p.uid {
				return false
			}
			if strategy == jobset.InPlaceRestart && (!existed || b.uid != p.uid || p.restarts <= b.restarts) {
				return false
			}
		}
		return true
	}
}

// waitForWorkers polls every 50 ms until w Pods of js run with every
// container started (the barrier lifted) and done accepts them.
func (b *bench) waitForWorkers(ctx context.Context, js *jobset.JobSet, w int, done func(map[string]podState) bool) (map[string]podState, error) {
	for {
		var pods corev1.PodList
		if err := b.c.List(ctx, &pods, client.InNamespace(js.Namespace), client.MatchingLabels{jobset.JobSetNameKey: js.Name}); err != nil {
			return nil, err
		}
		running := map[string]podState{}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && allStarted(&p) {
				running[p.Name] = podState{uid: p.UID, restarts: workerRestarts(&p)}
			}
		}
		if len(running) == w && done(running) {
			return running, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %d workers to run (%d do): %w", w, len(running), ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func allStarted(p *corev1.Pod) bool {
	statuses := append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...)
	if len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, cs := range statuses {
		if cs.State.Running == nil || !ptr.Deref(cs.Started, false) {
			return false
		}
	}
	return true
}

func workerRestarts(p *corev1.Pod) int32 {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == "worker" {
			return cs.RestartCount
		}
	}
	return 0
}

// jobSet is the seed's story 1 (docs/examples/story1-inplace.yaml) with w
// workers; for Recreate, without the agent and with backoffLimit 0, the
// way community JobSet users run it.
func (b *bench) jobSet(ns string, strategy jobset.JobSetRestartStrategy, w int) (*jobset.JobSet, error) {
	js := &jobset.JobSet{}
	if err := kubeapply.ReadObject(filepath.Join(b.root, "docs/examples/story1-inplace.yaml"), js); err != nil {
		return nil, err
	}
	js.Name, js.Namespace = "bench", ns
	js.Spec.FailurePolicy.MaxRestarts = 1000
	js.Spec.FailurePolicy.RestartStrategy = strategy
	rj := &js.Spec.ReplicatedJobs[0]
	rj.Replicas = 2
	rj.Template.Spec.Parallelism = ptr.To(int32(w / 2))
	rj.Template.Spec.Completions = ptr.To(int32(w / 2))
	if strategy == jobset.Recreate {
		rj.Template.Spec.BackoffLimit = ptr.To[int32](0)
		rj.Template.Spec.PodReplacementPolicy = nil
		pod := &rj.Template.Spec.Template.Spec
		pod.InitContainers = nil
		for i := range pod.Containers {
			pod.Containers[i].RestartPolicy, pod.Containers[i].RestartPolicyRules = nil, nil
		}
	}
	return js, nil
}

func (b *bench) recreateNamespace(ctx context.Context, ns string) error {
	if err := b.deleteNamespace(ctx, ns); err != nil {
		return err
	}
	if err := b.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	return kubeapply.Apply(ctx, b.c, filepath.Join(b.root, "agent/rbac/agent-rbac.yaml"), ns)
}

// deleteNamespace deletes ns and waits until it is gone, so that its Pods
// no longer compete for the node.
func (b *bench) deleteNamespace(ctx context.Context, ns string) error {
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := b.c.Delete(ctx, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	for {
		err := b.c.Get(ctx, client.ObjectKeyFromObject(obj), &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for namespace %s to go: %w", ns, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}
