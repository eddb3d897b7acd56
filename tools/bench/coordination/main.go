// Command coordination is benchmark B2 (docs/benchmark-definitions.md): the
// control plane of a group restart at scale, in place and by Recreate, as
// a real cluster would see it, without containers. A real kube-apiserver
// and etcd (envtest) with the install's RBAC, admission policy and (by
// default) Priority and Fairness; kube-controller-manager's Job
// controller and garbage collector and kube-scheduler, each under its own
// identity (controlplane.go); the real controller binary as its
// ServiceAccount; N Nodes, and a kubelet stand-in per node writing what a
// kubelet writes (kubelet.go, standin.go). In place, N agents run the real
// agent code in this process against the real Pods, each agent process
// with its own TLS connection and its Pod's bound ServiceAccount token
// (identity.go). In place, two ways, B1's tiers: in the Pod tier
// (InPlaceRestart), an agent that exits with the restart code is started
// again at once (the kubelet's own time to restart a Pod is what B1
// measures); in the process tier (InPlaceRestart/process), each worker
// runs under a stand-in of the worker wrapper (wrapperstandin.go), which
// the agent has stop and start the worker, and the agents and their
// connections survive. One worker fails (its kubelet reports the exit; in
// the process tier, its wrapper, to its agent):
//
//   - in the Pod tier, the clock stops when all N agents have lifted
//     their barrier at the new synced epoch (inplace.go);
//   - in the process tier, when all N wrappers were told to start the
//     worker again, which each agent does once it lifted its barrier;
//   - by Recreate, when all N new Pods run and are ready (recreate.go);
//
// and beside them, at the same N, the protocol's I/O floor (iofloor.go):
// N fresh agent clients, no controller, each opening a watch on the JobSet
// and patching its Pod once, the least any agent-based design does per
// group restart.
//
//	bench=coordination strategy=IOFloor pods=1000 seconds=<s> ...
//	bench=coordination strategy=InPlaceRestart/process pods=1000 seconds=<s> ...
//	bench=coordination strategy=InPlaceRestart pods=1000 seconds=<s> ...
//	bench=coordination strategy=Recreate pods=1000 seconds=<s> ...
//	bench=coordination-requests strategy=<s> pods=1000 all=<per Pod> patch_pods_status=<per Pod> ...
//	bench=coordination-summary pods=1000 seconds=<s> io_floor_s=<s> time_over_io_floor=<ratio> recreate_s=<s> recreate_over_time=<ratio>
//	  process_s=<s> process_over_io_floor=<ratio> recreate_over_process=<ratio> ...
//
// where the summary's seconds are the Pod tier's, as before the tiers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/bench/internal/procstat"
	"github.com/fastjobset/jobset/tools/bench/internal/summary"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// podsPerJob: the N Pods are N/podsPerJob Indexed Jobs.
const podsPerJob = 10

type options struct {
	sizes                               []int
	runs                                int
	strategies                          []string
	shippedAPF                          bool
	agentStart                          time.Duration
	controller, kcm, scheduler, install string
	timeout                             time.Duration
}

func main() {
	var o options
	var sizes, strategies, apf string
	flag.StringVar(&sizes, "pods", "1000,5000,10000", "Comma-separated numbers of Pods (multiples of 10).")
	flag.IntVar(&o.runs, "runs", 3, "Group restarts (and I/O floors) measured per number of Pods and way.")
	flag.StringVar(&strategies, "strategies", strings.Join(defaultWays, ","), "Comma-separated ways to measure: "+strings.Join(allWays, ", ")+" (the I/O floor goes with either way in place).")
	flag.StringVar(&o.controller, "controller", "", "The jobset-controller binary (required).")
	flag.StringVar(&o.install, "install", "", "install.yaml (required): the controller's identity and RBAC, the agents' admission policy, and Priority and Fairness come from it.")
	flag.StringVar(&o.kcm, "kube-controller-manager", "", "The kube-controller-manager binary (required).")
	flag.StringVar(&o.scheduler, "kube-scheduler", "", "The kube-scheduler binary (required).")
	flag.DurationVar(&o.timeout, "timeout", 2*time.Hour, "Give up on one number of Pods (every way: each one's Pods created, its agents started and its group restarted) after this long.")
	flag.StringVar(&apf, "apf", "shipped", "API Priority and Fairness: shipped (install.yaml's flow schemas and priority level: the agents queue in a level of their own, the controller is kept out of it) or default (as Kubernetes installs it).")
	flag.DurationVar(&o.agentStart, "agent-start", 0, "How long a kubelet takes, once it has removed a Pod's containers to restart them all, until the agent runs again (its container created and started); default: at once, as B2 is defined.")
	agentLog := flag.String("agent-log", "", "Write the agents' log (thousands of lines) to this file, for diagnosis.")
	flag.Parse()
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < podsPerJob || n%podsPerJob != 0 {
			fail(fmt.Errorf("-pods: %q is not a multiple of %d", s, podsPerJob))
		}
		o.sizes = append(o.sizes, n)
	}
	var err error
	if o.strategies, err = parseWays(strategies); err != nil {
		fail(err)
	}
	switch apf {
	case "shipped", "default":
		o.shippedAPF = apf == "shipped"
	default:
		fail(fmt.Errorf("-apf: %q is neither shipped nor default", apf))
	}
	for flagName, value := range map[string]string{"controller": o.controller, "install": o.install,
		"kube-controller-manager": o.kcm, "kube-scheduler": o.scheduler} {
		if value == "" {
			fail(fmt.Errorf("-%s is required (tools/bench/run.sh builds it)", flagName))
		}
	}
	if o.runs < 1 {
		fail(errors.New("-runs: at least 1"))
	}
	// The agents log every retry: thousands of lines.
	klog.LogToStderr(false)
	klog.SetOutput(discard{})
	if *agentLog != "" {
		f, err := os.Create(*agentLog)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		klog.SetOutput(f)
	}
	if err := run(o); err != nil {
		fail(err)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "coordination:", err)
	os.Exit(1)
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s coordination: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// bench is what every configuration shares.
type bench struct {
	env       *framework.Environment
	c         client.Client
	clientset kubernetes.Interface
	kubelets  *kubelets
	dir       string
	// agentStart: see the flag -agent-start.
	agentStart time.Duration
	// controllerBinary runs as the ServiceAccount of controllerKubeconfig.
	controllerBinary, controllerKubeconfig string
}

// results are one size's medians, by way (inPlace: the Pod tier's).
type results struct {
	ioFloor, inPlace, process, recreate float64
}

func run(o options) error {
	largest := slices.Max(o.sizes)
	if err := raiseOpenFileLimit(uint64(2*largest+4096), false); err != nil {
		return err
	}
	env, err := framework.Start()
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	admin := rest.CopyConfig(env.Config)
	admin.QPS, admin.Burst = 1000, 2000
	c, err := client.New(admin, client.Options{Scheme: env.Scheme})
	if err != nil {
		return err
	}
	// Built-in types only: protobuf, as kube-controller-manager and the
	// kubelets use, for the watch of 10000 Pods.
	builtIn := rest.CopyConfig(admin)
	builtIn.ContentType = "application/vnd.kubernetes.protobuf"
	clientset, err := kubernetes.NewForConfig(builtIn)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "bench-coordination-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b := &bench{env: env, c: c, clientset: clientset, kubelets: &kubelets{env: env}, dir: dir, agentStart: o.agentStart,
		controllerBinary: o.controller}
	ctx := context.Background()
	if err := kubeletRBAC(ctx, c); err != nil {
		return err
	}
	if err := b.applyInstall(ctx, o.install, o.shippedAPF); err != nil {
		return fmt.Errorf("applying %s: %w", o.install, err)
	}
	if b.controllerKubeconfig, err = b.controllerKubeconfigFor(ctx, controllerNamespace, controllerName); err != nil {
		return err
	}
	stopControlPlane, err := b.startControlPlane(o.kcm, o.scheduler)
	if err != nil {
		return err
	}
	defer stopControlPlane()
	if slices.Contains(o.strategies, wayProcess) {
		// The wrappers' sockets, each end of their connections in this
		// process: raised only now, so that the API server and etcd keep
		// the limit they have in the other ways.
		if err := raiseOpenFileLimit(uint64(5*largest+4096), true); err != nil {
			return err
		}
	}
	progress("registering %d Nodes and their kubelets' clients", largest/podsPerNode)
	if err := registerNodes(ctx, c, largest/podsPerNode); err != nil {
		return err
	}
	if err := b.kubelets.ensure(ctx, largest); err != nil {
		return fmt.Errorf("the kubelets' clients: %w", err)
	}
	apf := "default"
	if o.shippedAPF {
		apf = "shipped"
	}
	for _, n := range o.sizes {
		ctx, cancel := context.WithTimeout(ctx, o.timeout)
		r, err := b.sized(ctx, o, apf, n)
		cancel()
		if err != nil {
			return fmt.Errorf("%d Pods: %w", n, err)
		}
		// At once: a run stopped at a larger size keeps this one's.
		summary.Print("coordination-summary", r.summary(apf, n)...)
	}
	return nil
}

// summary is the key/value pairs of a size's summary line. Its first
// fields, named before the tiers, are the Pod tier's.
func (r results) summary(apf string, n int) []any {
	kv := []any{"apf", apf, "pods", n}
	if r.inPlace > 0 {
		kv = append(kv, "seconds", r.inPlace, "io_floor_s", r.ioFloor, "time_over_io_floor", r.inPlace/r.ioFloor)
	}
	if r.recreate > 0 {
		kv = append(kv, "recreate_s", r.recreate)
	}
	if r.inPlace > 0 && r.recreate > 0 {
		kv = append(kv, "recreate_over_time", r.recreate/r.inPlace)
	}
	if r.process > 0 {
		if r.inPlace == 0 {
			kv = append(kv, "io_floor_s", r.ioFloor)
		}
		kv = append(kv, "process_s", r.process, "process_over_io_floor", r.process/r.ioFloor)
		if r.recreate > 0 {
			kv = append(kv, "recreate_over_process", r.recreate/r.process)
		}
	}
	return kv
}

// sized measures, at n Pods, each way -runs times: the I/O floor, the
// group restart in place (each tier asked) and by Recreate, each way with
// a controller of its own (so that its peak memory is this size's and
// this way's).
func (b *bench) sized(ctx context.Context, o options, apf string, n int) (results, error) {
	var r results
	if slices.Contains(o.strategies, wayProcess) || slices.Contains(o.strategies, wayInPlace) {
		var floors []float64
		err := b.ioFloor(ctx, n, o.runs, func(f ioFloorResult) {
			floors = append(floors, f.seconds)
			summary.Print("coordination", "strategy", "IOFloor", "apf", apf, "pods", n, "run", len(floors), "seconds", f.seconds,
				"last_watch_s", f.lastWatch, "watch_p50_s", f.watchP50, "patch_p50_s", f.patchP50, "requests_per_client", f.requestsPerClient,
				"throttled", f.throttled, "failed", f.failed, "api_requests", f.apiRequests)
		})
		if err != nil {
			return r, fmt.Errorf("I/O floor: %w", err)
		}
		r.ioFloor = summary.Percentile(floors, 50)
	}
	for _, way := range o.strategies {
		var times []float64
		var err error
		switch way {
		case wayProcess, wayInPlace:
			t := tierOf(way)
			err = b.withController(fmt.Sprintf("jobset-controller-%s-%d", t, n), func(controller *process) error {
				return b.inPlace(ctx, controller, n, o.runs, t, func(p inPlaceResult) {
					times = append(times, p.seconds)
					summary.Print("coordination", append([]any{"strategy", way, "apf", apf, "pods", n, "run", len(times)}, p.fields(n)...)...)
					summary.Print("coordination-requests", append([]any{"strategy", way, "apf", apf, "pods", n, "run", len(times)},
						p.requests.perPod(n)...)...)
				})
			})
		case wayRecreate:
			err = b.withController(fmt.Sprintf("jobset-controller-recreate-%d", n), func(controller *process) error {
				return b.recreate(ctx, controller, n, o.runs, func(p recreateResult) {
					times = append(times, p.seconds)
					summary.Print("coordination", "strategy", way, "apf", apf, "pods", n, "run", len(times), "seconds", p.seconds,
						"first_deleting_s", p.firstDeleting, "last_gone_s", p.lastGone, "first_created_s", p.firstCreated,
						"last_created_s", p.lastCreated, "last_bound_s", p.lastBound,
						"api_requests", p.requests.total, "rejected_429", p.requests.rejected,
						"kubelet_requests_per_pod", float64(p.kubeletRequests)/float64(n),
						"controller_cpu_s", p.controllerCPU, "controller_cpu_ms_per_pod", 1000*p.controllerCPU/float64(n),
						"controller_peak_mib", p.controllerPeakMiB)
					summary.Print("coordination-requests", append([]any{"strategy", way, "apf", apf, "pods", n, "run", len(times)},
						p.requests.perPod(n)...)...)
				})
			})
		}
		if err != nil {
			return r, fmt.Errorf("restart strategy %s: %w", way, err)
		}
		median := summary.Percentile(times, 50)
		switch way {
		case wayProcess:
			r.process = median
		case wayInPlace:
			r.inPlace = median
		case wayRecreate:
			r.recreate = median
		}
	}
	return r, nil
}

// withController runs the controller binary as its ServiceAccount while f
// runs. Its log dates decisions to the nanosecond: when it deprecated the
// synced epoch (see deprecationLogged); at -v=2, it dates every reconcile
// (see syncReconcile).
func (b *bench) withController(name string, f func(*process) error) error {
	controller, err := startProcess(b.dir, name, b.controllerBinary, "--kubeconfig="+b.controllerKubeconfig,
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--zap-time-encoding=rfc3339nano", "--zap-log-level=2")
	if err != nil {
		return err
	}
	defer controller.stop()
	return f(controller)
}

// cleanUpLimit bounds cleanUp. A Pod it leaves holds its Node's room, and
// the next configuration's Pods wait for that room: at 10000 Pods on a
// loaded API server a pass over every Pod can take longer than five
// minutes, and the Pods it had not reached yet then stayed for good.
const cleanUpLimit = 30 * time.Minute

// cleanUp deletes what a configuration left and waits until its Pods are
// gone, so that the next one does not share the controller's cache with
// it and finds the Nodes free. The Job controller's tracking finalizers
// are dropped here: its Jobs were deleted first, orphaning the Pods.
func cleanUp(c client.Client, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanUpLimit)
	defer cancel()
	_ = c.DeleteAllOf(ctx, &jobset.JobSet{}, client.InNamespace(ns))
	_ = c.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(ns), client.PropagationPolicy(metav1.DeletePropagationOrphan))
	_ = c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0))
	for {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil || len(pods.Items) == 0 {
			return
		}
		// A Pod the garbage collector deleted meanwhile waits out its grace
		// period for a kubelet that no longer runs: deleted again, at once.
		workqueue.ParallelizeUntil(ctx, 32, len(pods.Items), func(i int) {
			pod := &pods.Items[i]
			if len(pod.Finalizers) > 0 {
				_ = c.Patch(ctx, pod, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
			}
			_ = c.Delete(ctx, pod, client.GracePeriodSeconds(0))
		})
		if sleep(ctx, time.Second) != nil {
			progress("%s: %d Pods left after %s", ns, len(pods.Items), cleanUpLimit)
			return
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// process is a binary run for the benchmark, its output in a log file.
type process struct {
	cmd  *exec.Cmd
	name string
	log  string // its output's file
}

func startProcess(dir, name, binary string, args ...string) (*process, error) {
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	return &process{cmd: cmd, name: name, log: log.Name()}, nil
}

func (p *process) stop() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
}

func (p *process) cpuSeconds() (float64, error) { return procstat.CPUSeconds(p.cmd.Process.Pid) }

func (p *process) peakMiB() (float64, error) { return procstat.MiB(p.cmd.Process.Pid, "VmHWM") }
