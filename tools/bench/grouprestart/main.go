// Command grouprestart is benchmark B1 (docs/benchmark-definitions.md): on a
// real cluster, a JobSet of W workers (2 Jobs of W/2 Pods) loses one worker
// (exit code 1), and the time from that exit to every worker running again
// is measured, in several ways in one run on the same cluster:
//
//   - InPlaceRestart/process: ours, story 1 with agent injection
//     (docs/examples/story1-injected.yaml): the worker runs under the
//     worker wrapper, and the agents have it restart the worker's process
//     (the process tier: no container restarts);
//   - InPlaceRestart/pod: the same JobSet with the annotation
//     jobset.sigs.k8s.io/restart-tier: "pod": every container of each Pod
//     restarts (the Pod tier, the kubelet's RestartAllContainers);
//   - InPlaceRestart: ours with the agent sidecar by hand and no wrapper
//     (docs/examples/story1-inplace.yaml), the Pod tier as B1 measured it
//     before the tiers; not run by default;
//   - CommunityInPlaceRestart: community JobSet v0.12.0's in-place restart,
//     its controller (built by tools/peers/jobset.sh into -community, and
//     installed in place of ours, since both serve jobset.x-k8s.io) and its
//     agent (-community-agent-image), with its field names
//     (workload.CommunityInPlace);
//   - Recreate: backoffLimit 0, no agent, under our controller.
//
// Every way runs the same trivial worker (e2e/worker), so that its own
// start hides nothing. With -single-pod-floor, each of ours in place also
// restarts a JobSet of one Pod in the same run: the floor, where that
// Pod's restart is all there is to wait for, and each W's ratio to it says
// what the group costs.
//
// The end is observed by polling the Pods and the JobSet every 50 ms: Pod
// status timestamps have a one-second resolution, too coarse for restarts
// of a few seconds. The ways whose containers restart end when every
// worker container runs again, as the Pods' status shows it. The process
// tier changes no status: it ends at the last worker's own start record
// (starts.go), read once the group synced. Every way also reports that
// record (worker_started_s: the kubelet reports a started container up to
// its next relist later), and the ratios that name a tier compare it.
//
// The same polls date where the time goes, from the trigger: the failure
// seen in the API (failed_s: the worker's exit, or, in the process tier,
// the victim's agent joining the next epoch), the restart decided
// (deprecated_s: deprecatedEpoch, previousInPlaceRestartAttempt, or
// restarts for Recreate), every Pod restarted (restarted_s: every agent
// container restarted in place, or every replacement Pod created) or, in
// the process tier, every worker stopped (stopped_s: every agent joined
// the next epoch, which it does once its wrapper confirmed that nothing of
// the worker is left), the barrier lifted (synced_s: syncedEpoch or
// currentInPlaceRestartAttempt) and every worker running (the total).
// Output, one line per configuration:
//
//	bench=group-restart strategy=InPlaceRestart/process workers=8 p50_s=<s> p90_s=<s> runs=5 ...
//
// plus a line per run and, per W, the ratios of the medians
// (bench=group-restart-ratio: recreate_over_process, pod_over_process,
// community_over_pod, each tier's over its single-Pod floor, ...).
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

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/bench/internal/summary"
	"github.com/fastjobset/jobset/tools/demo/workload"
	"github.com/fastjobset/jobset/tools/testing/peers"
)

// The milestones of a restart, in the order they happen (stopped_s is
// the process tier's, restarted_s the others').
var milestones = []string{"failed_s", "deprecated_s", "restarted_s", "stopped_s", "synced_s"}

// runTimeout bounds one group restart: a run that never ends fails the
// benchmark instead of using up its whole -timeout.
const runTimeout = 3 * time.Minute

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
	fs.StringVar(&strategyList, "strategies", strings.Join(defaultWays, ","), "Comma-separated ways to restart: "+strings.Join(allWays, ", ")+".")
	fs.IntVar(&o.runs, "runs", 5, "Group restarts measured per configuration.")
	fs.BoolVar(&o.singlePodFloor, "single-pod-floor", true, "Also measure each of ours in place with one worker, the floor every W is compared with.")
	fs.StringVar(&o.communityAgentImage, "community-agent-image", "localhost/jobset-community/in-place-restart-agent:v0.12.0", "Community JobSet's agent image (tools/peers/jobset.sh agent-image).")
	fs.StringVar(&communityDir, "community", "", "Community JobSet's build directory (tools/peers/jobset.sh prints it), its images on the nodes; needed for "+community+".")
	fs.DurationVar(&timeout, "timeout", 60*time.Minute, "Give up after this long.")
	_ = fs.Parse(os.Args[1:])
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if kubeconfig == "" {
		fail(errors.New("no cluster: set KUBECONFIG or -kubeconfig (tools/bench/run.sh brings up the local one)"))
	}
	var err error
	o.workers, err = parseWorkers(workerList)
	if err == nil {
		o.strategies, err = parseWays(strategyList)
	}
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

// result is one configuration's runs.
type result struct {
	strategy string
	workers  int
	runs     []timeline
}

// timeline is one run: the seconds from the trigger to each milestone
// (absent: not reached, or not one of this strategy's), to the end, and
// to the last worker's own start (started, 0 when its record could not be
// read); in place, also to each Pod's steps (podSteps), each step's times
// sorted, and how the Pods joined the new epoch (joinedBy, by tier, from
// the agents' worker-restarts reports: ours with the wrapper only).
type timeline struct {
	at       map[string]float64
	total    float64
	started  float64
	pods     map[string][]float64
	joinedBy map[agentspec.Tier]int
}

// run measures every configuration. One that fails is named on stderr
// and left out, and the others are still measured and reported: run
// returns the failures together at the end.
func run(ctx context.Context, c *workload.Cluster, o options) error {
	var failed []error
	floor := medians{total: map[string]float64{}, started: map[string]float64{}}
	if o.singlePodFloor {
		for _, s := range o.strategies {
			if !inPlaceOfOurs(s) {
				continue
			}
			runs, err := measure(ctx, c, o, s, 1)
			if err != nil {
				err = fmt.Errorf("the single-Pod floor of %s: %w", s, err)
				fmt.Fprintln(os.Stderr, "grouprestart:", err)
				failed = append(failed, err)
				continue
			}
			kv, total, started := resultLine(result{strategy: s, workers: 1, runs: runs})
			summary.Print("group-restart", kv...)
			floor.total[s], floor.started[s] = total, started
		}
	}
	results := map[string]map[int]result{}
	measureAll := func(strategy string) {
		results[strategy] = map[int]result{}
		for _, w := range o.workers {
			runs, err := measure(ctx, c, o, strategy, w)
			if err != nil {
				err = fmt.Errorf("%s with %d workers: %w", strategy, w, err)
				fmt.Fprintln(os.Stderr, "grouprestart:", err)
				failed = append(failed, err)
				continue
			}
			results[strategy][w] = result{strategy: strategy, workers: w, runs: runs}
		}
	}
	// Ours first, then community (one controller at a time), then ours
	// back whatever happened.
	for _, s := range o.strategies {
		if s != community {
			measureAll(s)
		}
	}
	if slices.Contains(o.strategies, community) {
		cl := peers.Cluster{Client: c.Client, Clientset: c.Clientset, Out: os.Stderr}
		if err := peers.SwitchJobSet(ctx, cl, o.ours, o.community); err != nil {
			failed = append(failed, err)
		} else {
			measureAll(community)
		}
		if err := peers.SwitchJobSet(context.WithoutCancel(ctx), cl, o.community, o.ours); err != nil {
			failed = append(failed, err)
		}
	}
	for _, w := range o.workers {
		m := medians{total: map[string]float64{}, started: map[string]float64{}}
		for _, s := range o.strategies {
			r, ok := results[s][w]
			if !ok {
				continue
			}
			kv, total, started := resultLine(r)
			summary.Print("group-restart", kv...)
			m.total[s], m.started[s] = total, started
		}
		if kv := ratios(w, m, floor); len(kv) > 2 {
			summary.Print("group-restart-ratio", kv...)
		}
	}
	return errors.Join(failed...)
}

// resultLine is the configuration's summary line, with the medians of its
// totals and of its last workers' starts (0 when no run read them).
func resultLine(r result) (kv []any, total, started float64) {
	var totals, starts []float64
	joinedBy := map[agentspec.Tier]int{}
	for _, t := range r.runs {
		totals = append(totals, t.total)
		if t.started > 0 {
			starts = append(starts, t.started)
		}
		for tier, n := range t.joinedBy {
			joinedBy[tier] += n
		}
	}
	total = summary.Percentile(totals, 50)
	kv = []any{"strategy", r.strategy, "workers", r.workers, "p50_s", total, "p90_s", summary.Percentile(totals, 90), "runs", len(totals)}
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
	if len(starts) > 0 {
		started = summary.Percentile(starts, 50)
		kv = append(kv, "p50_worker_started_s", started, "p90_worker_started_s", summary.Percentile(starts, 90))
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
	// How the Pods joined, over every run: a process-tier run whose
	// wrapper could not confirm a stop escalates to the Pod tier.
	if r.strategy == process || r.strategy == pod {
		kv = append(kv, "joined_by_process", joinedBy[agentspec.TierProcess], "joined_by_pod", joinedBy[agentspec.TierPod])
	}
	return kv, total, started
}

// runLine is the summary line of one run.
func runLine(strategy string, w, run int, t timeline) []any {
	kv := []any{"strategy", strategy, "workers", w, "run", run, "seconds", t.total}
	for _, m := range milestones {
		if v, ok := t.at[m]; ok {
			kv = append(kv, m, v)
		}
	}
	if t.started > 0 {
		kv = append(kv, "worker_started_s", t.started)
	}
	if strategy == process || strategy == pod {
		kv = append(kv, "joined_by_process", t.joinedBy[agentspec.TierProcess], "joined_by_pod", t.joinedBy[agentspec.TierPod])
	}
	return kv
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

// namespaceOf is the namespace of a way's JobSet of w workers.
func namespaceOf(strategy string, w int) string {
	return "bench-" + strings.ReplaceAll(strings.ToLower(strategy), "/", "-") + "-" + strconv.Itoa(w)
}

// measure runs one JobSet of the strategy with w workers in a namespace of
// its own and times runs group restarts.
func measure(ctx context.Context, c *workload.Cluster, o options, strategy string, w int) ([]timeline, error) {
	ns := namespaceOf(strategy, w)
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
		// Every worker serves (in the process tier a worker may run a
		// moment after its container: the wrapper waits for the agent),
		// and its start log says what a restart's record comes after.
		counts, err := countStarts(ctx, c, ns, before)
		if err != nil {
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
		t, after, err := follow(ctx, c, js, strategy, w, victim, start, base, before, counts)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", run, err)
		}
		timelines = append(timelines, t)
		summary.Print("group-restart-run", runLine(strategy, w, run, t)...)
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
	if err := c.RecreateNamespace(ctx, ns); err != nil {
		return nil, nil, err
	}
	var js *jobset.JobSet
	var err error
	switch strategy {
	case process:
		js, err = c.InjectedJobSet(ns, w, "")
	case pod:
		js, err = c.InjectedJobSet(ns, w, jobset.RestartTierPod)
	case ours:
		js, err = c.JobSet(ns, jobset.InPlaceRestart, w)
	case recreate:
		js, err = c.JobSet(ns, jobset.Recreate, w)
	case community:
		err = c.CommunityAgentRBAC(ctx, ns)
		if err == nil {
			js, err = c.JobSet(ns, jobset.InPlaceRestart, w)
		}
		if err == nil {
			err = workload.CommunityInPlace(js, o.communityAgentImage)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return c.Run(ctx, js, w)
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
			if cs.Name == agentspec.ContainerName {
				s.agents[p.Name] = cs.RestartCount
			}
		}
		if _, ok := s.agents[p.Name]; !ok {
			s.agents[p.Name] = -1
		}
	}
	return s, nil
}

// The JobSet status fields each way's decision and sync show in.
var (
	deprecatedField = map[string]string{
		process: "deprecatedEpoch", pod: "deprecatedEpoch", ours: "deprecatedEpoch",
		community: workload.CommunityPreviousAttempt, recreate: "restarts",
	}
	syncedField = map[string]string{
		process: "syncedEpoch", pod: "syncedEpoch", ours: "syncedEpoch", community: workload.CommunityCurrentAttempt,
	}
)

// follow polls every 50 ms from the trigger until every worker runs again,
// dating the milestones on the way.
func follow(ctx context.Context, c *workload.Cluster, js *jobset.JobSet, strategy string, w int, victim string,
	start time.Time, base status, before map[string]workload.PodState, counts map[types.UID]int) (timeline, map[string]workload.PodState, error) {
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	t := timeline{at: map[string]float64{}}
	mark := func(m string, reached bool) {
		if _, done := t.at[m]; reached && !done {
			t.at[m] = time.Since(start).Seconds()
		}
	}
	deprecated, synced := deprecatedField[strategy], syncedField[strategy]
	var running map[string]workload.PodState
	var clock *podClock
	if strategy != recreate {
		clock = newPodClock(strategy, start, base.pods)
	}
	// The process tier's end: each Pod's new start, from its record.
	started := map[string]time.Time{}
	var last []corev1.Pod // the Pods as the last poll saw them
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		now, err := snapshot(ctx, c, js)
		if err != nil {
			return false, err
		}
		pods := corev1.PodList{Items: now.pods}
		last = now.pods
		if clock != nil {
			clock.observe(now.pods)
		}
		if strategy == process {
			mark("failed_s", joined(base.pods, now.pods, victim))
		} else {
			mark("failed_s", victimFailed(&pods, victim))
		}
		mark("deprecated_s", now.counters[deprecated] > base.counters[deprecated])
		if synced != "" {
			mark("synced_s", now.counters[synced] > base.counters[synced])
		}
		if strategy == process {
			all := len(now.pods) == w
			for _, p := range now.pods {
				all = all && joined(base.pods, now.pods, p.Name)
			}
			mark("stopped_s", all)
		} else {
			restarted := len(now.agents) == w
			for name, n := range now.agents {
				if strategy == recreate {
					restarted = restarted && !base.uids[uidOf(&pods, name)]
				} else {
					restarted = restarted && n > base.agents[name]
				}
			}
			mark("restarted_s", restarted)
		}
		running = map[string]workload.PodState{}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && workload.AllStarted(&p) {
				running[p.Name] = workload.PodState{UID: p.UID, Restarts: workload.WorkerRestarts(&p)}
			}
		}
		if strategy != process {
			return len(running) == w && restartedSince(strategy, before, running), nil
		}
		// No worker starts before the barrier lifts at the synced epoch:
		// only then are the start logs read, of the Pods not yet seen
		// starting. The records date the starts; the polls only find them.
		if _, ok := t.at["synced_s"]; !ok {
			return false, nil
		}
		var waiting []string
		for name := range before {
			if _, ok := started[name]; !ok {
				waiting = append(waiting, name)
			}
		}
		for name, records := range readAllStarts(ctx, c, js.Namespace, waiting) {
			if at, ok := startAfter(records, before[name].UID, counts[before[name].UID]); ok {
				started[name] = at
				if clock != nil {
					clock.workerStarted(name, at)
				}
			}
		}
		return len(started) == len(before) && len(running) == w && sameUIDs(before, running), nil
	})
	if wait.Interrupted(err) {
		return t, nil, fmt.Errorf("waiting for %d workers to run again (%d do, %d started again): %w", w, len(running), len(started), err)
	}
	if err != nil {
		return t, nil, err
	}
	t.total = time.Since(start).Seconds()
	if strategy == process {
		t.total = lastStart(started).Sub(start).Seconds()
		t.started = t.total
	} else {
		t.started = lastWorkerStart(context.WithoutCancel(ctx), c, js.Namespace, running, counts, start)
	}
	if clock != nil {
		t.pods = clock.steps()
	}
	if strategy == process || strategy == pod {
		t.joinedBy = joinedBy(base.pods, last)
	}
	return t, running, nil
}

// lastWorkerStart is the seconds from the trigger to the last worker's own
// start record, read from the running Pods; 0 when a record is missing.
func lastWorkerStart(ctx context.Context, c *workload.Cluster, ns string, running map[string]workload.PodState,
	counts map[types.UID]int, trigger time.Time) float64 {
	starts := map[string]time.Time{}
	_ = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		var waiting []string
		for name := range running {
			if _, ok := starts[name]; !ok {
				waiting = append(waiting, name)
			}
		}
		for name, records := range readAllStarts(ctx, c, ns, waiting) {
			if at, ok := startAfter(records, running[name].UID, counts[running[name].UID]); ok {
				starts[name] = at
			}
		}
		return len(starts) == len(running), nil
	})
	if len(starts) < len(running) {
		fmt.Fprintf(os.Stderr, "grouprestart: read %d of %d workers' start records in %s\n", len(starts), len(running), ns)
		return 0
	}
	return lastStart(starts).Sub(trigger).Seconds()
}

func lastStart(starts map[string]time.Time) time.Time {
	var last time.Time
	for _, at := range starts {
		if at.After(last) {
			last = at
		}
	}
	return last
}

// joined reports whether Pod name's agent joined a new epoch since base:
// its epoch annotation changed. In the process tier an agent joins the
// next epoch once its wrapper confirmed that nothing of its worker is
// left, and the victim's agent first, on its worker's exit.
func joined(base, now []corev1.Pod, name string) bool {
	b, n := podNamed(base, name), podNamed(now, name)
	return b != nil && n != nil && b.UID == n.UID && n.Annotations[jobset.EpochKey] != b.Annotations[jobset.EpochKey]
}

// joinedBy counts the Pods that joined a new epoch since base by how they
// joined it, as their agents report it (agentspec.WorkerRestartsAnnotation).
func joinedBy(base, now []corev1.Pod) map[agentspec.Tier]int {
	out := map[agentspec.Tier]int{}
	for i := range now {
		p := &now[i]
		if !joined(base, now, p.Name) {
			continue
		}
		r, err := agentspec.ParseWorkerRestarts(p.Annotations[agentspec.WorkerRestartsAnnotation])
		if err != nil {
			out["unknown"]++
			continue
		}
		out[r.Tier]++
	}
	return out
}

func podNamed(pods []corev1.Pod, name string) *corev1.Pod {
	for i := range pods {
		if pods[i].Name == name && pods[i].DeletionTimestamp == nil {
			return &pods[i]
		}
	}
	return nil
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
			if cond.Type == corev1.PodConditionType(agentspec.PodConditionAllContainersRestarting) && cond.Status == corev1.ConditionTrue {
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
// place, the same Pods with the worker container restarted; with
// Recreate, none of the Pods of before. (The process tier restarts no
// container: its end is the workers' start records.)
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

// sameUIDs reports whether now holds the Pods of before, none replaced.
func sameUIDs(before, now map[string]workload.PodState) bool {
	for name, p := range now {
		if b, ok := before[name]; !ok || b.UID != p.UID {
			return false
		}
	}
	return len(now) == len(before)
}
