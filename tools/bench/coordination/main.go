// Command coordination is benchmark B2 (../shared/BENCHMARKS.md): the
// control plane of an in-place group restart at scale, without a kubelet.
// A real kube-apiserver and etcd (envtest), the real controller binary, and
// N agents running the real agent code in this process against real Pod
// objects: one agent restarts (as after its worker failed) and joins the
// next epoch; the clock stops when all N agents have lifted their barrier
// at the new synced epoch. An agent that exits with the restart code is
// started again at once, as the kubelet would after RestartAllContainers
// (whose own cost, about 2.8 s per Pod, is B1's).
//
// Side by side, the control-plane floor of Recreate at the same N:
// kube-controller-manager's Job controller and kube-scheduler against the
// same apiserver, N Node objects registered by the harness, and the time
// from creating the Jobs to N Pods bound (no container starts, and the
// deletion of the old Pods is left out: a lower bound).
//
//	bench=coordination strategy=InPlaceRestart pods=1000 seconds=3.5 first_restart_s=0.03 last_restart_s=0.4 last_join_s=3.3 api_requests=2006 ...
//	bench=coordination strategy=Recreate pods=1000 seconds=9.1
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/agent"
	"github.com/fastjobset/jobset/agent/kubeclient"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/bench/internal/procstat"
	"github.com/fastjobset/jobset/tools/bench/internal/summary"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// podsPerJob: the N Pods are N/podsPerJob Indexed Jobs.
const podsPerJob = 10

type options struct {
	sizes                      []int
	controller, kcm, scheduler string
	timeout                    time.Duration
}

func main() {
	var o options
	var sizes string
	flag.StringVar(&sizes, "pods", "100,1000,5000", "Comma-separated numbers of Pods (multiples of 10).")
	flag.StringVar(&o.controller, "controller", "", "The jobset-controller binary (required).")
	flag.StringVar(&o.kcm, "kube-controller-manager", "", "kube-controller-manager binary, for the Recreate floor (empty: skip it).")
	flag.StringVar(&o.scheduler, "kube-scheduler", "", "kube-scheduler binary, for the Recreate floor.")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "Give up on one configuration after this long.")
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
	// The agents log every retry: thousands of lines.
	klog.SetOutput(discard{})
	klog.LogToStderr(false)
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

func run(o options) error {
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
	dir, err := os.MkdirTemp("", "bench-coordination-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	kubeconfig := filepath.Join(dir, "admin.kubeconfig")
	raw, err := env.Kubeconfig("bench-admin", "system:masters")
	if err != nil {
		return err
	}
	if err := os.WriteFile(kubeconfig, raw, 0o600); err != nil {
		return err
	}

	controller, err := startProcess(dir, "jobset-controller", o.controller, "--kubeconfig="+kubeconfig,
		"--metrics-bind-address=0", "--health-probe-bind-address=0")
	if err != nil {
		return err
	}
	defer controller.stop()

	for _, n := range o.sizes {
		ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
		result, err := inPlace(ctx, c, env.Config, controller, n)
		cancel()
		if err != nil {
			return fmt.Errorf("InPlaceRestart with %d Pods: %w", n, err)
		}
		summary.Print("coordination", "strategy", jobset.InPlaceRestart, "pods", n, "seconds", result.seconds,
			"first_restart_s", result.firstRestart, "last_restart_s", result.lastRestart, "last_join_s", result.lastJoin,
			"api_requests", result.apiRequests, "agent_requests", result.agentRequests,
			"controller_cpu_s", result.controllerCPU, "controller_peak_mib", result.controllerPeakMiB)
	}
	controller.stop()

	if o.kcm == "" {
		return nil
	}
	kcm, err := startProcess(dir, "kube-controller-manager", o.kcm, "--kubeconfig="+kubeconfig,
		"--controllers=job", "--leader-elect=false", "--secure-port=0",
		"--kube-api-qps=1000", "--kube-api-burst=2000", "--concurrent-job-syncs=10")
	if err != nil {
		return err
	}
	defer kcm.stop()
	scheduler, err := startProcess(dir, "kube-scheduler", o.scheduler, "--kubeconfig="+kubeconfig,
		"--leader-elect=false", "--secure-port=0", "--kube-api-qps=1000", "--kube-api-burst=2000")
	if err != nil {
		return err
	}
	defer scheduler.stop()
	nodes := 0
	for _, n := range o.sizes {
		ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
		err := registerNodes(ctx, c, nodes, n)
		nodes = max(nodes, n)
		var seconds float64
		if err == nil {
			seconds, err = recreateFloor(ctx, c, n)
		}
		cancel()
		if err != nil {
			return fmt.Errorf("Recreate floor with %d Pods: %w", n, err)
		}
		summary.Print("coordination", "strategy", jobset.Recreate, "pods", n, "seconds", seconds)
	}
	return nil
}

type inPlaceResult struct {
	seconds float64
	// The breakdown: when the first agent told of the deprecated epoch
	// restarted, when the last did, and when the last join was written.
	firstRestart, lastRestart, lastJoin float64
	apiRequests, agentRequests          int64
	controllerCPU, controllerPeakMiB    float64
}

// inPlace runs an InPlaceRestart JobSet of n Pods with n in-process agents
// and times one group restart.
func inPlace(ctx context.Context, c client.Client, cfg *rest.Config, controller *process, n int) (inPlaceResult, error) {
	ns, err := framework.CreateNamespace(ctx, c, fmt.Sprintf("bench-%d", n))
	if err != nil {
		return inPlaceResult{}, err
	}
	js := wrappers.MakeJobSet("bench", ns).RestartStrategy(jobset.InPlaceRestart).MaxRestarts(10).
		EnableDNSHostnames(false).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(int32(n / podsPerJob)).Pods(podsPerJob).InPlaceReady().Obj()).Obj()
	if err := c.Create(ctx, js); err != nil {
		return inPlaceResult{}, err
	}
	defer cleanUp(c, ns)
	pods, err := createPods(ctx, c, js, n)
	if err != nil {
		return inPlaceResult{}, err
	}

	var agentRequests atomic.Int64
	var joins phase
	agentConfig := rest.CopyConfig(cfg)
	agentConfig.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripCounter{rt, &agentRequests, &joins}
	}
	agentHTTP, err := rest.HTTPClientFor(agentConfig)
	if err != nil {
		return inPlaceResult{}, err
	}
	g := newGroup(ctx, cfg.Host, agentHTTP, ns, js.Name)
	defer g.stop()
	for _, pod := range pods {
		g.start(pod)
	}
	if err := g.waitLifted(ctx, 1); err != nil {
		return inPlaceResult{}, fmt.Errorf("initial sync: %w", err)
	}

	requestsBefore, err := apiRequests(ctx, cfg)
	if err != nil {
		return inPlaceResult{}, err
	}
	agentRequests.Store(0)
	cpuBefore, err := controller.cpuSeconds()
	if err != nil {
		return inPlaceResult{}, err
	}
	joins.reset()
	g.restarts.reset()
	start := time.Now()
	g.restart(pods[0]) // its worker failed; the kubelet restarted the Pod
	if err := g.waitLifted(ctx, 2); err != nil {
		return inPlaceResult{}, fmt.Errorf("group restart: %w", err)
	}
	seconds := time.Since(start).Seconds()
	requestsAfter, err := apiRequests(ctx, cfg)
	if err != nil {
		return inPlaceResult{}, err
	}
	cpuAfter, err := controller.cpuSeconds()
	if err != nil {
		return inPlaceResult{}, err
	}
	peak, err := controller.peakMiB()
	if err != nil {
		return inPlaceResult{}, err
	}
	return inPlaceResult{
		seconds:      seconds,
		firstRestart: since(start, &g.restarts.first), lastRestart: since(start, &g.restarts.last),
		lastJoin:    since(start, &joins.last),
		apiRequests: requestsAfter - requestsBefore, agentRequests: agentRequests.Load(),
		controllerCPU: cpuAfter - cpuBefore, controllerPeakMiB: peak,
	}, nil
}

// createPods waits for the controller's Jobs and creates their Pods as the
// Job controller would: the Pod template's labels and annotations, the
// completion index, Running.
func createPods(ctx context.Context, c client.Client, js *jobset.JobSet, n int) ([]string, error) {
	var jobs batchv1.JobList
	for {
		if err := c.List(ctx, &jobs, client.InNamespace(js.Namespace)); err != nil {
			return nil, err
		}
		if len(jobs.Items) == n/podsPerJob {
			break
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, fmt.Errorf("waiting for %d Jobs (%d so far): %w", n/podsPerJob, len(jobs.Items), err)
		}
	}
	names := make([]string, 0, n)
	for _, job := range jobs.Items {
		for i := range podsPerJob {
			names = append(names, fmt.Sprintf("%s-%d", job.Name, i))
		}
	}
	errs := make([]error, len(names))
	workqueue.ParallelizeUntil(ctx, 32, len(names), func(i int) {
		job := &jobs.Items[i/podsPerJob]
		template := job.Spec.Template
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name:        names[i],
				Namespace:   js.Namespace,
				Labels:      withEntry(template.Labels, batchv1.JobNameLabel, job.Name),
				Annotations: withEntry(template.Annotations, batchv1.JobCompletionIndexAnnotation, strconv.Itoa(i%podsPerJob)),
			},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "worker"}}},
		}
		if errs[i] = c.Create(ctx, pod); errs[i] != nil {
			return
		}
		pod.Status.Phase = corev1.PodRunning
		errs[i] = c.Status().Update(ctx, pod)
	})
	return names, errors.Join(errs...)
}

func withEntry(m map[string]string, key, value string) map[string]string {
	out := map[string]string{key: value}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// group runs one agent per Pod and restarts each that exits with the
// restart code, like the kubelet's RestartAllContainers.
type group struct {
	ctx            context.Context
	cancel         context.CancelFunc
	host           string
	http           *http.Client
	ns, jobSetName string

	mu      sync.Mutex
	running map[string]*instance
	changed chan struct{}
	// restarts marks the agents that exited with the restart code.
	restarts phase
}

type instance struct {
	agent  *agent.Agent
	cancel context.CancelFunc
}

func newGroup(ctx context.Context, host string, httpClient *http.Client, ns, jobSetName string) *group {
	ctx, cancel := context.WithCancel(ctx)
	return &group{ctx: ctx, cancel: cancel, host: host, http: httpClient, ns: ns, jobSetName: jobSetName,
		running: map[string]*instance{}, changed: make(chan struct{}, 1)}
}

func (g *group) stop() { g.cancel() }

// start runs a new agent for pod.
func (g *group) start(pod string) {
	cfg := agent.Config{Namespace: g.ns, PodName: pod, JobSetName: g.jobSetName,
		RestartExitCode: agentspec.DefaultRestartExitCode, BarrierPath: agentspec.DefaultBarrierPath}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	api, err := kubeclient.New(g.host, g.http, cfg.UserAgent())
	if err != nil {
		fail(err)
	}
	a := agent.New(cfg, api, agent.WithListener(listener))
	ctx, cancel := context.WithCancel(g.ctx)
	g.mu.Lock()
	g.running[pod] = &instance{agent: a, cancel: cancel}
	g.mu.Unlock()
	go func() {
		code := a.Run(ctx)
		if code == cfg.RestartExitCode && g.ctx.Err() == nil {
			g.restarts.mark()
			g.start(pod)
		}
	}()
	go func() {
		select {
		case <-a.Lifted():
			g.notify()
		case <-ctx.Done():
		}
	}()
}

// restart stops pod's agent and starts a new one, as after a failure.
func (g *group) restart(pod string) {
	g.mu.Lock()
	old := g.running[pod]
	g.mu.Unlock()
	old.cancel()
	g.start(pod)
}

func (g *group) notify() {
	select {
	case g.changed <- struct{}{}:
	default:
	}
}

// waitLifted waits until every Pod's current agent lifted its barrier at
// epoch.
func (g *group) waitLifted(ctx context.Context, epoch int32) error {
	for {
		g.mu.Lock()
		done := 0
		for _, in := range g.running {
			select {
			case <-in.agent.Lifted():
				if in.agent.Epoch() == epoch {
					done++
				}
			default:
			}
		}
		total := len(g.running)
		g.mu.Unlock()
		if done == total {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d agents lifted their barrier at epoch %d: %w", done, total, epoch, ctx.Err())
		case <-g.changed:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// roundTripCounter counts the agents' requests and marks when the last Pod
// patch (an agent joining its epoch) was answered.
type roundTripCounter struct {
	next      http.RoundTripper
	count     *atomic.Int64
	lastPatch *phase
}

func (r roundTripCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	r.count.Add(1)
	resp, err := r.next.RoundTrip(req)
	if err == nil && req.Method == http.MethodPatch && resp.StatusCode < 300 {
		r.lastPatch.mark()
	}
	return resp, err
}

// phase is the time of the first or last of a kind of event, for the
// breakdown of a group restart.
type phase struct {
	first, last atomic.Int64 // UnixNano; 0 until marked
}

func (p *phase) mark() {
	now := time.Now().UnixNano()
	p.first.CompareAndSwap(0, now)
	p.last.Store(now)
}

func (p *phase) reset() { p.first.Store(0); p.last.Store(0) }

// since is how long after start the first or last event came, in seconds.
func since(start time.Time, at *atomic.Int64) float64 {
	if at.Load() == 0 {
		return 0
	}
	return time.Unix(0, at.Load()).Sub(start).Seconds()
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

// registerNodes adds Ready Nodes from index have up to want, each with room
// for its share of Pods.
func registerNodes(ctx context.Context, c client.Client, have, want int) error {
	errs := make([]error, want)
	workqueue.ParallelizeUntil(ctx, 32, want-have, func(i int) {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:   fmt.Sprintf("node-%05d", have+i),
			Labels: map[string]string{corev1.LabelHostname: fmt.Sprintf("node-%05d", have+i)},
		}}
		if errs[i] = c.Create(ctx, node); errs[i] != nil {
			return
		}
		// The apiserver taints a new Node not-ready (TaintNodesByCondition);
		// the node lifecycle controller, which would lift it, does not run.
		node.Spec.Taints = nil
		if errs[i] = c.Update(ctx, node); errs[i] != nil {
			return
		}
		capacity := corev1.ResourceList{
			corev1.ResourcePods:   resource.MustParse("110"),
			corev1.ResourceCPU:    resource.MustParse("8"),
			corev1.ResourceMemory: resource.MustParse("32Gi"),
		}
		node.Status = corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		}
		errs[i] = c.Status().Update(ctx, node)
	})
	return errors.Join(errs...)
}

// recreateFloor creates n/podsPerJob Indexed Jobs and times until the Job
// controller created their n Pods and the scheduler bound them all.
func recreateFloor(ctx context.Context, c client.Client, n int) (float64, error) {
	ns, err := framework.CreateNamespace(ctx, c, fmt.Sprintf("recreate-%d", n))
	if err != nil {
		return 0, err
	}
	defer cleanUp(c, ns)
	rj := wrappers.MakeReplicatedJob("workers").Pods(podsPerJob).Obj()
	start := time.Now()
	errs := make([]error, n/podsPerJob)
	workqueue.ParallelizeUntil(ctx, 32, n/podsPerJob, func(i int) {
		errs[i] = c.Create(ctx, &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("workers-%d", i), Namespace: ns},
			Spec:       *rj.Template.Spec.DeepCopy(),
		})
	})
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	for {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return 0, err
		}
		bound := 0
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		if bound == n {
			return time.Since(start).Seconds(), nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return 0, fmt.Errorf("%d of %d Pods bound: %w", bound, n, err)
		}
	}
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
	return &process{cmd: cmd, name: name}, nil
}

func (p *process) stop() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
}

func (p *process) cpuSeconds() (float64, error) { return procstat.CPUSeconds(p.cmd.Process.Pid) }

func (p *process) peakMiB() (float64, error) { return procstat.MiB(p.cmd.Process.Pid, "VmHWM") }
