// Command grouprestart is benchmark B1 (docs/benchmark-definitions.md): on a
// real cluster, a JobSet of W workers (2 Jobs of W/2 Pods) loses one worker
// (exit code 1), and the time from that exit to every worker container
// running again is measured, three ways in one run on the same cluster:
//
//   - InPlaceRestart: ours, the agent sidecar and the epoch protocol;
//   - CommunityInPlaceRestart: community JobSet v0.12.0's in-place restart,
//     its controller (built by tools/peers/jobset.sh into -community, and
//     installed in place of ours, since both serve jobset.x-k8s.io) and its
//     agent (-community-agent-image), with its field names
//     (workload.CommunityInPlace);
//   - Recreate: backoffLimit 0, no agent, under our controller.
//
// With -single-pod-floor, ours also restarts a JobSet of one Pod in the
// same run: the floor, where the kubelet's restart of one Pod is all there
// is to wait for, and each W's ratio to it says what the group costs.
//
// The end is observed by polling the Pods and the JobSet every 50 ms: Pod
// status timestamps have a one-second resolution, too coarse for restarts
// of a few seconds. The same polls date where the time goes, from the
// trigger: the failure seen in the API (failed_s), the restart decided
// (deprecated_s: deprecatedEpoch, previousInPlaceRestartAttempt, or
// restarts for Recreate), every Pod restarted (restarted_s: every agent
// container restarted in place, or every replacement Pod created), the
// barrier lifted (synced_s: syncedEpoch or currentInPlaceRestartAttempt)
// and every worker running (the total). Output, one line per configuration:
//
//	bench=group-restart strategy=InPlaceRestart workers=8 p50_s=<s> p90_s=<s> runs=5 ...
//
// plus a line per run and, per W, the ratios of the medians (to the
// single-Pod floor's too: inplace_over_single_pod).
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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/bench/internal/summary"
	"github.com/fastjobset/jobset/tools/demo/workload"
	"github.com/fastjobset/jobset/tools/testing/peers"
)

// The three ways.
const (
	ours      = "InPlaceRestart"
	community = "CommunityInPlaceRestart"
	recreate  = "Recreate"
)

// The milestones of a restart, in the order they happen.
var milestones = []string{"failed_s", "deprecated_s", "restarted_s", "synced_s"}

type options struct {
	workers             []int
	strategies          []string
	runs                int
	singlePodFloor      bool
	communityAgentImage string
	// ours and community are the two JobSet controllers, switched with
	// peers.SwitchJobSet (community is nil without its strategy).
	ours, community *peers.Manifests
}

func main() {
	var (
		kubeconfig, install, communityDir, root, workerList, strategyList string
		timeout                                                           time.Duration
		o                                                                 options
	)
	// A flag set of its own: controller-runtime, linked in through the
	// peers, puts its own -kubeconfig on the default one.
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	fs.StringVar(&kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "The cluster, with install.yaml deployed and the images present.")
	fs.StringVar(&install, "install", "", "install.yaml to deploy first (empty: already deployed).")
	fs.StringVar(&root, "root", ".", "Root of the source tree (docs/examples, agent/rbac).")
	fs.StringVar(&workerList, "workers", "4,8,16", "Comma-separated numbers of workers (even, or 1).")
	fs.StringVar(&strategyList, "strategies", ours+","+community+","+recreate, "Comma-separated ways to restart: "+ours+", "+community+", "+recreate+".")
	fs.IntVar(&o.runs, "runs", 5, "Group restarts measured per configuration.")
	fs.BoolVar(&o.singlePodFloor, "single-pod-floor", true, "Also measure "+ours+" with one worker, the floor every W is compared with.")
	fs.StringVar(&o.communityAgentImage, "community-agent-image", "localhost/jobset-community/in-place-restart-agent:v0.12.0", "Community JobSet's agent image (tools/peers/jobset.sh agent-image).")
	fs.StringVar(&communityDir, "community", "", "Community JobSet's build directory (tools/peers/jobset.sh prints it), its images on the nodes; needed for "+community+".")
	fs.DurationVar(&timeout, "timeout", 60*time.Minute, "Give up after this long.")
	_ = fs.Parse(os.Args[1:])
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if kubeconfig == "" {
		fail(errors.New("no cluster: set KUBECONFIG or -kubeconfig (tools/bench/run.sh brings up the local one)"))
	}
	err := parse(&o, workerList, strategyList)
	if err == nil && slices.Contains(o.strategies, community) {
		err = loadJobSets(&o, install, communityDir)
	}
	var c *workload.Cluster
	if err == nil {
		c, err = workload.Connect(kubeconfig, root)
	}
	if err == nil && install != "" {
		err = c.Deploy(ctx, install)
	}
	if err == nil {
		err = run(ctx, c, o)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "grouprestart:", err)
	os.Exit(1)
}

func parse(o *options, workerList, strategyList string) error {
	for _, w := range strings.Split(workerList, ",") {
		n, err := strconv.Atoi(w)
		if err != nil || n < 1 || n > 1 && n%2 != 0 {
			return fmt.Errorf("-workers: %q is neither 1 nor an even number (2 Jobs of W/2 Pods)", w)
		}
		o.workers = append(o.workers, n)
	}
	o.strategies = strings.Split(strategyList, ",")
	for _, s := range o.strategies {
		if s != ours && s != community && s != recreate {
			return fmt.Errorf("-strategies: %q is none of %s, %s, %s", s, ours, community, recreate)
		}
	}
	return nil
}

// result is one configuration's runs.
type result struct {
	strategy string
	workers  int
	runs     []timeline
}

// timeline is one run: the seconds from the trigger to each milestone
// (absent: not reached, or not one of this strategy's) and to the end;
// in place, also to each Pod's steps (podSteps), each step's times sorted.
type timeline struct {
	at    map[string]float64
	total float64
	pods  map[string][]float64
}

func run(ctx context.Context, c *workload.Cluster, o options) error {
	var floor float64
	if o.singlePodFloor {
		runs, err := measure(ctx, c, o, ours, 1)
		if err != nil {
			return fmt.Errorf("the single-Pod floor: %w", err)
		}
		floor = printResult(result{strategy: ours, workers: 1, runs: runs})
	}
	results := map[string]map[int]result{}
	measureAll := func(strategy string) error {
		results[strategy] = map[int]result{}
		for _, w := range o.workers {
			runs, err := measure(ctx, c, o, strategy, w)
			if err != nil {
				return fmt.Errorf("%s with %d workers: %w", strategy, w, err)
			}
			results[strategy][w] = result{strategy: strategy, workers: w, runs: runs}
		}
		return nil
	}
	// Ours first, then community (one controller at a time), then ours
	// back whatever happened.
	for _, s := range o.strategies {
		if s != community {
			if err := measureAll(s); err != nil {
				return err
			}
		}
	}
	if slices.Contains(o.strategies, community) {
		cl := peers.Cluster{Client: c.Client, Clientset: c.Clientset, Out: os.Stderr}
		err := peers.SwitchJobSet(ctx, cl, o.ours, o.community)
		if err == nil {
			err = measureAll(community)
		}
		if back := peers.SwitchJobSet(context.WithoutCancel(ctx), cl, o.community, o.ours); back != nil {
			err = errors.Join(err, back)
		}
		if err != nil {
			return err
		}
	}
	for _, w := range o.workers {
		medians := map[string]float64{}
		for _, s := range o.strategies {
			medians[s] = printResult(results[s][w])
		}
		kv := []any{"workers", w}
		if in := medians[ours]; in > 0 && floor > 0 {
			kv = append(kv, "inplace_over_single_pod", in/floor)
		}
		if in, re := medians[ours], medians[recreate]; in > 0 && re > 0 {
			kv = append(kv, "recreate_over_inplace", re/in)
		}
		if in, co := medians[ours], medians[community]; in > 0 && co > 0 {
			kv = append(kv, "community_over_inplace", co/in)
		}
		if co, re := medians[community], medians[recreate]; co > 0 && re > 0 {
			kv = append(kv, "recreate_over_community", re/co)
		}
		if len(kv) > 2 {
			summary.Print("group-restart-ratio", kv...)
		}
	}
	return nil
}

// printResult prints the configuration's summary line and returns its
// median.
func printResult(r result) float64 {
	totals := make([]float64, len(r.runs))
	for i, t := range r.runs {
		totals[i] = t.total
	}
	median := summary.Percentile(totals, 50)
	kv := []any{"strategy", r.strategy, "workers", r.workers, "p50_s", median, "p90_s", summary.Percentile(totals, 90), "runs", len(totals)}
	for _, m := range milestones {
		var at []float64
		for _, t := range r.runs {
			if v, ok := t.at[m]; ok {
				at = append(at, v)
			}
		}
		if len(at) > 0 {
			kv = append(kv, "p50_"+m, summary.Percentile(at, 50))
		}
	}
	// Pod by Pod: the median Pod's and the last Pod's time to each step,
	// the median over the runs.
	for _, step := range podSteps {
		var middle, last []float64
		for _, t := range r.runs {
			if at := t.pods[step]; len(at) > 0 {
				middle, last = append(middle, at[len(at)/2]), append(last, at[len(at)-1])
			}
		}
		if len(middle) > 0 {
			kv = append(kv, "pod_p50_"+step+"_s", summary.Percentile(middle, 50), "pod_last_"+step+"_s", summary.Percentile(last, 50))
		}
	}
	summary.Print("group-restart", kv...)
	return median
}

// loadJobSets reads the manifests of both JobSet controllers: ours from
// install.yaml, community JobSet's from its build.
func loadJobSets(o *options, install, communityDir string) error {
	if install == "" || communityDir == "" {
		return fmt.Errorf("%s needs -install and -community: ours is installed again after community JobSet", community)
	}
	var err error
	if o.ours, err = peers.LoadFile(peers.OurJobSet, install); err != nil {
		return err
	}
	o.community, err = peers.Load(peers.CommunityJobSet, communityDir)
	return err
}

// measure runs one JobSet of the strategy with w workers in a namespace of
// its own and times runs group restarts.
func measure(ctx context.Context, c *workload.Cluster, o options, strategy string, w int) ([]timeline, error) {
	ns := "bench-" + strings.ToLower(strategy) + "-" + strconv.Itoa(w)
	defer func() { _ = c.DeleteNamespace(context.WithoutCancel(ctx), ns) }()
	js, before, err := start(ctx, c, o, ns, strategy, w)
	if err != nil {
		return nil, err
	}
	var timelines []timeline
	for run := range o.runs {
		names := slices.Sorted(func(yield func(string) bool) {
			for name := range before {
				if !yield(name) {
					return
				}
			}
		})
		victim := names[run%len(names)]
		if err := forgetFailures(ctx, c, ns, victim); err != nil {
			return nil, err
		}
		base, err := snapshot(ctx, c, js)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		if _, err := c.Clientset.CoreV1().Pods(ns).ProxyGet("http", victim, "8081", "/exit",
			map[string]string{"code": "1"}).DoRaw(ctx); err != nil {
			return nil, fmt.Errorf("asking the worker of %s to fail: %w", victim, err)
		}
		t, after, err := follow(ctx, c, js, strategy, w, victim, start, base, before)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", run, err)
		}
		timelines = append(timelines, t)
		kv := []any{"strategy", strategy, "workers", w, "run", run, "seconds", t.total}
		for _, m := range milestones {
			if v, ok := t.at[m]; ok {
				kv = append(kv, m, v)
			}
		}
		summary.Print("group-restart-run", kv...)
		before = after
	}
	return timelines, nil
}

// forgetFailures clears the controller's record of the Pod's earlier
// failures in place: the runs fail the same few Pods on purpose, and at
// the third failure within its window the controller would replace the
// Pod off its node (on one node, the replacement never schedules).
func forgetFailures(ctx context.Context, c *workload.Cluster, ns, pod string) error {
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:null}}}`, jobset.FailuresInPlaceAnnotation)
	if _, err := c.Clientset.CoreV1().Pods(ns).Patch(ctx, pod, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("clearing the failures in place of %s: %w", pod, err)
	}
	return nil
}

// start creates the strategy's JobSet in a fresh namespace and waits for
// its workers to run.
func start(ctx context.Context, c *workload.Cluster, o options, ns, strategy string, w int) (*jobset.JobSet, map[string]workload.PodState, error) {
	switch strategy {
	case ours:
		return c.Start(ctx, ns, jobset.InPlaceRestart, w)
	case recreate:
		return c.Start(ctx, ns, jobset.Recreate, w)
	}
	if err := c.RecreateNamespace(ctx, ns); err != nil {
		return nil, nil, err
	}
	if err := c.CommunityAgentRBAC(ctx, ns); err != nil {
		return nil, nil, err
	}
	js, err := c.JobSet(ns, jobset.InPlaceRestart, w)
	if err == nil {
		err = workload.CommunityInPlace(js, o.communityAgentImage)
	}
	if err == nil {
		err = c.CreateJobSet(ctx, js)
	}
	if err != nil {
		return nil, nil, err
	}
	states, err := c.WaitForWorkers(ctx, js, w, func(map[string]workload.PodState) bool { return true })
	return js, states, err
}

// status is what the milestones compare: the JobSet's restart counters by
// name (ours, community's and restarts) and each Pod's agent restarts.
type status struct {
	counters map[string]int64
	agents   map[string]int32 // Pod name -> the agent container's restart count
	uids     map[string]bool
	pods     []corev1.Pod
}

func snapshot(ctx context.Context, c *workload.Cluster, js *jobset.JobSet) (status, error) {
	s := status{counters: map[string]int64{}, agents: map[string]int32{}, uids: map[string]bool{}}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(jobset.GroupVersion.WithKind("JobSet"))
	if err := c.Client.Get(ctx, client.ObjectKeyFromObject(js), u); err != nil {
		return s, err
	}
	for _, f := range []string{"deprecatedEpoch", "syncedEpoch", workload.CommunityPreviousAttempt, workload.CommunityCurrentAttempt, "restarts"} {
		// Absent is below every value: community's first deprecation
		// writes previousInPlaceRestartAttempt 0.
		s.counters[f] = -1
		if v, ok, _ := unstructured.NestedInt64(u.Object, "status", f); ok {
			s.counters[f] = v
		}
	}
	var pods corev1.PodList
	if err := c.Client.List(ctx, &pods, client.InNamespace(js.Namespace), client.MatchingLabels{jobset.JobSetNameKey: js.Name}); err != nil {
		return s, err
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		s.pods = append(s.pods, p)
		s.uids[string(p.UID)] = true
		for _, cs := range p.Status.InitContainerStatuses {
			if cs.Name == "jobset-agent" {
				s.agents[p.Name] = cs.RestartCount
			}
		}
		if _, ok := s.agents[p.Name]; !ok {
			s.agents[p.Name] = -1
		}
	}
	return s, nil
}

// follow polls every 50 ms from the trigger until every worker runs again,
// dating the milestones on the way.
func follow(ctx context.Context, c *workload.Cluster, js *jobset.JobSet, strategy string, w int, victim string,
	start time.Time, base status, before map[string]workload.PodState) (timeline, map[string]workload.PodState, error) {
	t := timeline{at: map[string]float64{}}
	mark := func(m string, reached bool) {
		if _, done := t.at[m]; reached && !done {
			t.at[m] = time.Since(start).Seconds()
		}
	}
	deprecated, synced := map[string]string{
		ours: "deprecatedEpoch", community: workload.CommunityPreviousAttempt, recreate: "restarts",
	}[strategy], map[string]string{
		ours: "syncedEpoch", community: workload.CommunityCurrentAttempt,
	}[strategy]
	var running map[string]workload.PodState
	var clock *podClock
	if strategy != recreate {
		clock = newPodClock(strategy, start, base.pods)
	}
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		now, err := snapshot(ctx, c, js)
		if err != nil {
			return false, err
		}
		pods := corev1.PodList{Items: now.pods}
		if clock != nil {
			clock.observe(now.pods)
		}
		mark("failed_s", victimFailed(&pods, victim))
		mark("deprecated_s", now.counters[deprecated] > base.counters[deprecated])
		if synced != "" {
			mark("synced_s", now.counters[synced] > base.counters[synced])
		}
		restarted := len(now.agents) == w
		for name, n := range now.agents {
			if strategy == recreate {
				restarted = restarted && !base.uids[uidOf(&pods, name)]
			} else {
				restarted = restarted && n > base.agents[name]
			}
		}
		mark("restarted_s", restarted)
		running = map[string]workload.PodState{}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && workload.AllStarted(&p) {
				running[p.Name] = workload.PodState{UID: p.UID, Restarts: workload.WorkerRestarts(&p)}
			}
		}
		return len(running) == w && restartedSince(strategy, before, running), nil
	})
	if wait.Interrupted(err) {
		return t, nil, fmt.Errorf("waiting for %d workers to run again (%d do): %w", w, len(running), err)
	}
	t.total = time.Since(start).Seconds()
	if clock != nil {
		t.pods = clock.steps()
	}
	return t, running, err
}

func victimFailed(pods *corev1.PodList, victim string) bool {
	for _, p := range pods.Items {
		if p.Name != victim {
			continue
		}
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed {
			return true
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == "worker" && (cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil && cs.State.Running == nil) {
				return true
			}
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodConditionType("AllContainersRestarting") && cond.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	}
	return true // gone
}

func uidOf(pods *corev1.PodList, name string) string {
	for _, p := range pods.Items {
		if p.Name == name {
			return string(p.UID)
		}
	}
	return ""
}

// restartedSince reports whether every worker restarted since before: in
// place, the same Pods with the worker restarted; with Recreate, none of
// the Pods of before.
func restartedSince(strategy string, before, now map[string]workload.PodState) bool {
	for name, p := range now {
		b, existed := before[name]
		if strategy == recreate && existed && b.UID == p.UID {
			return false
		}
		if strategy != recreate && (!existed || b.UID != p.UID || p.Restarts <= b.Restarts) {
			return false
		}
	}
	return true
}
