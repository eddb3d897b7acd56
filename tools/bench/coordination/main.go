// Command coordination is benchmark B2 (docs/benchmark-definitions.md): the
// control plane of an in-place group restart at scale, as a real cluster
// would see it, without containers. A real kube-apiserver and etcd
// (envtest), the real controller binary, and N agents running the real
// agent code in this process against real Pod objects, each agent process
// with its own TLS connection and its Pod's bound ServiceAccount token
// (identity.go), and a kubelet stand-in per node writing the Pod status
// updates a kubelet writes during RestartAllContainers (kubelet.go). One
// worker fails (its kubelet reports the exit); the clock stops when all N
// agents have lifted their barrier at the new synced epoch. An agent that
// exits with the restart code is started again at once (the kubelet's own
// time to restart a Pod is what B1 measures).
//
// Side by side, in the same run and at the same N:
//
//   - the protocol's I/O floor (iofloor.go): N fresh agent clients, no
//     controller, each opening a watch on the JobSet and patching its Pod
//     once, which is the least any agent-based design does per group
//     restart;
//
//   - the control-plane floor of Recreate (recreate.go):
//     kube-controller-manager's Job controller and kube-scheduler against
//     the same apiserver, N Node objects, and the time from creating the
//     Jobs to N Pods bound (no container starts, and the deletion of the
//     old Pods is left out: a lower bound).
//
//     bench=coordination strategy=IOFloor pods=1000 seconds=<s> ...
//     bench=coordination strategy=InPlaceRestart pods=1000 seconds=<s> ...
//     bench=coordination strategy=Recreate pods=1000 seconds=<s>
//     bench=coordination-summary pods=1000 seconds=<s> io_floor_s=<s> time_over_io_floor=<ratio> recreate_floor_s=<s> recreate_over_time=<ratio> ...
package main

import (
	"bufio"
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
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
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
	sizes                      []int
	runs                       int
	agentFlowSchema            bool
	agentStart                 time.Duration
	recreateOnly               bool
	controller, kcm, scheduler string
	timeout                    time.Duration
}

func main() {
	var o options
	var sizes string
	flag.StringVar(&sizes, "pods", "1000,5000,10000", "Comma-separated numbers of Pods (multiples of 10).")
	flag.IntVar(&o.runs, "runs", 3, "Group restarts (and I/O floors) measured per number of Pods.")
	flag.StringVar(&o.controller, "controller", "", "The jobset-controller binary (required).")
	flag.StringVar(&o.kcm, "kube-controller-manager", "", "kube-controller-manager binary, for the Recreate floor (empty: skip it).")
	flag.StringVar(&o.scheduler, "kube-scheduler", "", "kube-scheduler binary, for the Recreate floor.")
	flag.DurationVar(&o.timeout, "timeout", 20*time.Minute, "Give up on one configuration after this long.")
	flag.BoolVar(&o.agentFlowSchema, "agent-flow-schema", false, "Apply the install's priority level for the agents (agent/rbac/agents-flowcontrol.yaml), which queues their requests instead of rejecting them; default: API Priority and Fairness as Kubernetes installs it.")
	flag.DurationVar(&o.agentStart, "agent-start", 0, "How long a kubelet takes, once it has removed a Pod's containers to restart them all, until the agent runs again (its container created and started); default: at once, as B2 is defined.")
	flag.BoolVar(&o.recreateOnly, "recreate-only", false, "Measure only Recreate's control-plane floor.")
	agentLog := flag.String("agent-log", "", "Write the agents' log (thousands of lines) to this file, for diagnosis.")
	flag.Parse()
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < podsPerJob || n%podsPerJob != 0 {
			fail(fmt.Errorf("-pods: %q is not a multiple of %d", s, podsPerJob))
		}
		o.sizes = append(o.sizes, n)
	}
	if o.controller == "" {
		fail(errors.New("-controller: the jobset-controller binary is required (tools/bench/run.sh builds it)"))
	}
	if (o.kcm == "") != (o.scheduler == "") {
		fail(errors.New("-kube-controller-manager and -kube-scheduler go together"))
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
	// agentFlowSchema: see installAgentRBAC.
	agentFlowSchema bool
	// agentStart: see the flag -agent-start.
	agentStart time.Duration
	// kubeconfig is the administrator's, for the binaries.
	kubeconfig string
}

func run(o options) error {
	if err := raiseOpenFileLimit(uint64(2*slices.Max(o.sizes) + 4096)); err != nil {
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
	clientset, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "bench-coordination-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b := &bench{env: env, c: c, clientset: clientset, kubelets: &kubelets{env: env}, dir: dir, agentFlowSchema: o.agentFlowSchema, agentStart: o.agentStart,
		kubeconfig: filepath.Join(dir, "admin.kubeconfig")}
	raw, err := env.Kubeconfig("bench-admin", "system:masters")
	if err != nil {
		return err
	}
	if err := os.WriteFile(b.kubeconfig, raw, 0o600); err != nil {
		return err
	}
	if err := kubeletRBAC(context.Background(), c); err != nil {
		return err
	}
	apf := "default"
	if o.agentFlowSchema {
		apf = agentFlowName
	}

	floors := map[int]float64{}
	inPlaceTimes := map[int]float64{}
	for _, n := range o.sizes {
		if o.recreateOnly {
			break
		}
		ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
		err := b.sized(ctx, o, apf, n, floors, inPlaceTimes)
		cancel()
		if err != nil {
			return fmt.Errorf("%d Pods: %w", n, err)
		}
	}

	recreate := map[int]float64{}
	if o.kcm != "" {
		if err := b.recreate(o, recreate); err != nil {
			return err
		}
	}
	for _, n := range o.sizes {
		if o.recreateOnly {
			break
		}
		kv := []any{"apf", apf, "pods", n, "seconds", inPlaceTimes[n], "io_floor_s", floors[n], "time_over_io_floor", inPlaceTimes[n] / floors[n]}
		if r, ok := recreate[n]; ok {
			kv = append(kv, "recreate_floor_s", r, "recreate_over_time", r/inPlaceTimes[n])
		}
		summary.Print("coordination-summary", kv...)
	}
	return nil
}

// sized measures the I/O floor and then the group restarts at n Pods, each
// -runs times, with a controller of its own (so that its peak memory is
// this size's).
func (b *bench) sized(ctx context.Context, o options, apf string, n int, floors, inPlaceTimes map[int]float64) error {
	if err := b.kubelets.ensure(ctx, n); err != nil {
		return fmt.Errorf("the kubelets' clients: %w", err)
	}
	var floorRuns []float64
	err := b.ioFloor(ctx, n, o.runs, func(r ioFloorResult) {
		floorRuns = append(floorRuns, r.seconds)
		summary.Print("coordination", "strategy", "IOFloor", "apf", apf, "pods", n, "run", len(floorRuns), "seconds", r.seconds,
			"last_watch_s", r.lastWatch, "watch_p50_s", r.watchP50, "patch_p50_s", r.patchP50, "requests_per_client", r.requestsPerClient, "throttled", r.throttled, "failed", r.failed, "api_requests", r.apiRequests)
	})
	if err != nil {
		return fmt.Errorf("I/O floor: %w", err)
	}
	floors[n] = summary.Percentile(floorRuns, 50)

	// Its log dates decisions to the nanosecond: when it deprecated the
	// synced epoch (see deprecationLogged).
	controller, err := startProcess(b.dir, fmt.Sprintf("jobset-controller-%d", n), o.controller, "--kubeconfig="+b.kubeconfig,
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--zap-time-encoding=rfc3339nano")
	if err != nil {
		return err
	}
	defer controller.stop()
	var times []float64
	err = b.inPlace(ctx, controller, n, o.runs, func(r inPlaceResult) {
		times = append(times, r.seconds)
		summary.Print("coordination", "strategy", jobset.InPlaceRestart, "apf", apf, "pods", n, "run", len(times), "seconds", r.seconds,
			"trigger_to_deprecation_s", r.deprecation, "deprecated_by", r.deprecatedBy, "failed_pod_rejoin_s", r.failedPodRejoin,
			"first_restart_s", r.firstRestart, "last_restart_s", r.lastRestart, "last_join_s", r.lastJoin,
			"watch_open_p50_s", r.watchP50, "watch_open_max_s", r.watchMax, "join_p50_s", r.patchP50, "join_max_s", r.patchMax,
			"api_requests", r.apiRequests, "agent_requests_per_agent", float64(r.agentRequests)/float64(n),
			"agent_throttled", r.throttled, "agent_failed", r.failed,
			"kubelet_requests_per_pod", float64(r.kubeletRequests)/float64(n),
			"controller_cpu_s", r.controllerCPU, "controller_cpu_drained_s", r.controllerCPUDrained,
			"controller_peak_mib", r.controllerPeakMiB)
	})
	if err != nil {
		return fmt.Errorf("InPlaceRestart: %w", err)
	}
	inPlaceTimes[n] = summary.Percentile(times, 50)
	return nil
}

// recreate measures Recreate's control-plane floor at every size.
func (b *bench) recreate(o options, results map[int]float64) error {
	kcm, err := startProcess(b.dir, "kube-controller-manager", o.kcm, "--kubeconfig="+b.kubeconfig,
		"--controllers=job", "--leader-elect=false", "--secure-port=0",
		"--kube-api-qps=1000", "--kube-api-burst=2000", "--concurrent-job-syncs=10")
	if err != nil {
		return err
	}
	defer kcm.stop()
	scheduler, err := startProcess(b.dir, "kube-scheduler", o.scheduler, "--kubeconfig="+b.kubeconfig,
		"--leader-elect=false", "--secure-port=0", "--kube-api-qps=1000", "--kube-api-burst=2000")
	if err != nil {
		return err
	}
	defer scheduler.stop()
	nodes := 0
	for _, n := range o.sizes {
		ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
		progress("Recreate floor, %d Pods: registering Nodes", n)
		err := registerNodes(ctx, b.c, nodes, n)
		nodes = max(nodes, n)
		var seconds float64
		if err == nil {
			seconds, err = recreateFloor(ctx, b.c, n)
		}
		cancel()
		if err != nil {
			return fmt.Errorf("measuring the Recreate floor with %d Pods: %w", n, err)
		}
		results[n] = seconds
		summary.Print("coordination", "strategy", jobset.Recreate, "pods", n, "seconds", seconds)
	}
	return nil
}

// apiRequests sums the API server's apiserver_request_total: every request
// it served, from every client.
func apiRequests(ctx context.Context, cfg *rest.Config) (int64, error) {
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	raw, err := clientset.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	var total float64
	scanner := bufio.NewScanner(strings.NewReader(string(raw)))
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			total += v
		}
	}
	return int64(total), scanner.Err()
}

// cleanUp deletes what a configuration left, so that the next one does not
// share the controller's cache with it (envtest runs no garbage collector).
func cleanUp(c client.Client, ns string) {
	ctx := context.Background()
	_ = c.DeleteAllOf(ctx, &jobset.JobSet{}, client.InNamespace(ns))
	_ = c.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(ns), client.PropagationPolicy(metav1.DeletePropagationOrphan))
	_ = c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0))
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
