package e2e

import (
	"context"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/jobsetcontroller"
)

// The soak: one in-place JobSet of two ranks on the worker nodes of the
// local cluster, trained for a set time through random faults of every
// kind the suite knows, one at a time, each ended before the next. Its
// invariants, checked after every fault and at the end:
//
//	SAFE   no look at the hosts' processes finds a rank's worker running in
//	       two Pods at once (watchRanks); a frozen node's worker runs
//	       nothing until the thaw, and what it runs after it, until its
//	       agent or its kubelet stops it, is reported apart (the window
//	       docs/controller.md states for a frozen node)
//	EXACT  every fault adds to status.inPlaceRestarts +
//	       restartsCountTowardsMax (what maxRestarts counts) the group
//	       restarts it costs: one for a failure of the group's own
//	       (a worker's exit, an agent's crash, a Pod deleted, a node
//	       lost), none for what the platform or the user did (an API
//	       server outage, the controller's leader killed, a suspension and
//	       resume; a restart only fences caused is counted apart, in
//	       fencedInPlaceRestarts), and the events that started them number
//	       as many; an outage or a leader killed restarts no worker either
//	       where the group has a peer on another node
//	LIVE   the group trains again after every fault, at a later or equal
//	       synced epoch, every rank in one running Pod whose worker the
//	       host sees, within soakRecoveryBound
//	BLAME  no Pod is marked lost but one whose node had a fault while it
//	       ran there, and none replaced for repeated failures but one that
//	       failed in place that often itself
//
// JOBSET_SOAK_SEED replays a soak's choices (its report prints the seed;
// the scheduler's choices are the cluster's own), JOBSET_SOAK_DURATION sets
// how long faults keep coming (default defaultSoakDuration, for CI; the
// fault under way when it ends still ends, which adds up to a few
// minutes).
var _ = Describe("Soak", Serial, Label("local-cluster", "nodes", "soak"), func() {
	const systemNode = "jobset-node-1"
	var ns string
	BeforeEach(func(ctx context.Context) {
		pinComponents(ctx, systemNode)
		ns = agentNamespace(ctx)
	})

	It("trains an in-place JobSet through random faults of every kind with no rank twice, every group restart counted once, and every rank back after each", func(ctx context.Context) {
		seed, duration := soakSettings()
		By(fmt.Sprintf("soak seed %d for %s (JOBSET_SOAK_SEED=%d JOBSET_SOAK_DURATION=%s replays it)", seed, duration, seed, duration))
		AddReportEntry("soak settings", ReportEntryVisibilityAlways, fmt.Sprintf("soak seed=%d duration_s=%.0f", seed, duration.Seconds()))

		r := startNodeScenario(ctx, ns, "soak", systemNode, func(js *jobset.JobSet) {
			// The soak's faults, not a budget, are the subject.
			js.Spec.FailurePolicy.MaxRestarts = 100000
		}, withFenceDeferLimit(ctx, soakFenceDeferLimit))
		s := &soak{
			r: r, rng: rand.New(rand.NewSource(seed)), systemNode: systemNode, size: len(r.before),
			ranks:       watchRanks(ctx, r.js),
			ownFailures: map[types.UID][]time.Time{}, onFaultedNode: map[types.UID]string{},
			judged: sets.New[types.UID](), byKind: map[string]*soakKindStats{},
		}
		start := time.Now()
		DeferCleanup(func() { s.report(seed, duration, time.Since(start)) })

		var bag []string
		for time.Since(start) < duration {
			if len(bag) == 0 {
				// Every kind once a round, in a random order: a long run
				// brings each of them.
				bag = slices.Clone(soakKinds)
				s.rng.Shuffle(len(bag), func(i, j int) { bag[i], bag[j] = bag[j], bag[i] })
			}
			kind := bag[0]
			bag = bag[1:]
			s.fault(ctx, kind)
			// The group trains a while before the next fault: the soak's
			// pace, not a wait for a state.
			time.Sleep(time.Duration(2+s.rng.Intn(8)) * time.Second)
		}

		By("at the end: the group trains, every restart was counted once and started by an event, and no Pod was blamed")
		s.trainsAgain(ctx, syncedEpoch(ctx, r.js))
		s.checkSafe()
		s.checkBlame(ctx)
		s.checkEvents(ctx)
		Expect(s.violations).To(BeEmpty(), "soak seed %d: violations", seed)
	})
})

// defaultSoakDuration keeps the soak within about five minutes of the
// default run: the last fault, which may start just before it ends, is
// seen through (a node fault's recovery and return take up to two
// minutes).
const defaultSoakDuration = 150 * time.Second

// soakFenceDeferLimit is the agents' defer limit in the soak. A node lost
// within 2 s + the limit + a promise of the mark of another (its agent may
// still vouch for a peer) makes two silent nodes, more than the one
// witness, and waits for the deferred bound (docs/controller.md, "Shared
// silence"): with the default 600 s, more than ten minutes, so the faults
// of a soak of minutes would come far apart. Lowered as
// node_lost_full_restart_test lowers it.
const soakFenceDeferLimit = 60 * time.Second

// withFenceDeferLimit gives the JobSet's Pods the agent the webhook
// injects (read back from a dry-run create), with its defer limit set.
func withFenceDeferLimit(ctx context.Context, limit time.Duration) func(*jobset.JobSet) {
	return func(js *jobset.JobSet) {
		injected := js.DeepCopy()
		Expect(k8sClient.Create(ctx, injected, client.DryRunAll)).To(Succeed())
		js.Spec.ReplicatedJobs = injected.Spec.ReplicatedJobs
		for i := range js.Spec.ReplicatedJobs {
			pod := &js.Spec.ReplicatedJobs[i].Template.Spec.Template.Spec
			a := slices.IndexFunc(pod.InitContainers, func(c corev1.Container) bool { return c.Name == agentspec.ContainerName })
			Expect(a).NotTo(BeNumerically("<", 0), "the injected agent of replicatedJob %s", js.Spec.ReplicatedJobs[i].Name)
			pod.InitContainers[a].Env = append(pod.InitContainers[a].Env,
				corev1.EnvVar{Name: agentspec.EnvFenceDeferLimitSeconds, Value: strconv.Itoa(int(limit.Seconds()))})
		}
	}
}

// soakRecoveryBound is how long the group may take to train again after a
// fault: generous, as the machine's load varies (the node-loss bound is
// 30 s with the defaults).
const soakRecoveryBound = 5 * time.Minute

// The fault kinds of the soak.
const (
	soakWorkerExit      = "worker-exit"
	soakAgentKill       = "agent-kill"
	soakPodDelete       = "pod-delete"
	soakNodeKill        = "node-kill"
	soakNodeFreeze      = "node-freeze"
	soakNodeCut         = "node-cut"
	soakNodeCutAPI      = "node-cut-api"
	soakKubeletStop     = "kubelet-stop"
	soakAPIServerOutage = "apiserver-outage"
	soakLeaderKill      = "leader-kill"
	soakSuspendResume   = "suspend-resume"
)

var soakKinds = []string{
	soakWorkerExit, soakAgentKill, soakPodDelete, soakNodeKill, soakNodeFreeze, soakNodeCut,
	soakNodeCutAPI, soakKubeletStop, soakAPIServerOutage, soakLeaderKill, soakSuspendResume,
}

// soakSettings reads JOBSET_SOAK_SEED and JOBSET_SOAK_DURATION.
func soakSettings() (int64, time.Duration) {
	seed := time.Now().UnixNano()
	if v := os.Getenv("JOBSET_SOAK_SEED"); v != "" {
		s, err := strconv.ParseInt(v, 10, 64)
		Expect(err).NotTo(HaveOccurred(), "JOBSET_SOAK_SEED=%q: must be an integer, the seed a soak's report printed", v)
		seed = s
	}
	duration := defaultSoakDuration
	if v := os.Getenv("JOBSET_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		Expect(err).NotTo(HaveOccurred(), "JOBSET_SOAK_DURATION=%q: must be a duration such as 30m", v)
		Expect(d).To(BeNumerically(">", 0), "JOBSET_SOAK_DURATION=%q: must be positive", v)
		duration = d
	}
	return seed, duration
}

// soak is the state of a soak run: the scenario, what it did, and what it
// found.
type soak struct {
	r          *nodeScenario
	rng        *rand.Rand
	systemNode string
	size       int
	ranks      *rankWatch
	// counted: status.inPlaceRestarts + restartsCountTowardsMax after the
	// last fault.
	counted int32
	// ownFailures: the failures in place the soak caused each Pod (a
	// worker's exit, its agent's crash), when; onFaultedNode: the node of
	// each Pod that ran on a node when the soak faulted it.
	ownFailures   map[types.UID][]time.Time
	onFaultedNode map[types.UID]string
	// thaws: the Pods of each frozen node and when it thawed, until their
	// workers were seen stopped.
	thaws []soakThaw
	// judged: the marks' events already checked; safeSeen: the rank
	// watch's finds already checked.
	judged   sets.Set[types.UID]
	safeSeen int
	// thawOverlaps: finds of a rank twice in the thaw window, the latest
	// thawOverlapMax after its thaw.
	thawOverlaps   []string
	thawOverlapMax time.Duration
	checks         int
	violations     []string
	byKind         map[string]*soakKindStats
	log            []string
}

type soakKindStats struct {
	injected int
	recovery []time.Duration
}

type soakThaw struct {
	uids          sets.Set[types.UID]
	at, stoppedAt time.Time
}

// soakFault is one fault as injected: the group restarts it may cost
// (lo to hi), the synced epoch the group must reach again, and how it ends
// once the group trains again (nil: it is over).
type soakFault struct {
	kind     string
	at       time.Time
	detail   string
	lo, hi   int32
	minEpoch int32
	// unharmed: the workers running before must be the ones running after,
	// none restarted.
	unharmed map[string]podState
	end      func(context.Context)
}

// fault brings one fault of the kind, waits until the group trains again
// and the fault has ended, and checks the invariants.
func (s *soak) fault(ctx context.Context, kind string) {
	n := len(s.log) + 1
	epoch := syncedEpoch(ctx, s.r.js)
	f := s.inject(ctx, kind, epoch)
	By(fmt.Sprintf("soak fault %d: %s %s; the group must train again at epoch %d or later", n, kind, f.detail, f.minEpoch))
	trained := s.trainsAgain(ctx, f.minEpoch)
	recovery := trained.Sub(f.at)
	if f.end != nil {
		f.end(ctx)
	}
	waitForNodesSettled(ctx)
	s.trainsAgain(ctx, syncedEpoch(ctx, s.r.js))

	if f.unharmed != nil {
		after := waitForSyncedWorkers(ctx, s.r.js, s.size)
		s.checks++
		if !podStatesEqual(after, f.unharmed) {
			s.violate("EXACT", fmt.Sprintf("fault %d (%s %s) restarted workers: before %v, after %v", n, kind, f.detail, f.unharmed, after))
		}
	}
	counted := s.checkCounted(ctx, n, f)
	s.checkSafe()
	s.checkBlame(ctx)

	st := s.byKind[kind]
	if st == nil {
		st = &soakKindStats{}
		s.byKind[kind] = st
	}
	st.injected++
	st.recovery = append(st.recovery, recovery)
	line := fmt.Sprintf("#%d %s %s %s: training again after %.1f s, %d group restarts counted, synced epoch %d",
		n, f.at.UTC().Format("15:04:05"), kind, f.detail, recovery.Seconds(), counted, syncedEpoch(ctx, s.r.js))
	s.log = append(s.log, line)
	GinkgoWriter.Println("soak " + line)
}

// inject brings the fault and returns what it is; an API server outage is
// over when it returns.
func (s *soak) inject(ctx context.Context, kind string, epoch int32) soakFault {
	r, ns := s.r, s.r.js.Namespace
	f := soakFault{kind: kind, lo: 1, hi: 1, minEpoch: epoch + 1}
	switch kind {
	case soakWorkerExit, soakAgentKill, soakPodDelete:
		pod := s.pickPod(ctx)
		f.detail = fmt.Sprintf("Pod %s on %s", pod.Name, pod.Spec.NodeName)
		f.at = time.Now()
		switch kind {
		case soakWorkerExit:
			s.ownFailures[pod.UID] = append(s.ownFailures[pod.UID], f.at)
			exitWorker(ctx, ns, pod.Name, 1)
		case soakAgentKill:
			s.ownFailures[pod.UID] = append(s.ownFailures[pod.UID], f.at)
			r.plane.ctr(ctx, pod.Spec.NodeName, "tasks", "kill", "--signal", "SIGKILL", containerID(pod, agentspec.ContainerName))
		case soakPodDelete:
			deletePod(ctx, ns, pod.Name)
		}

	case soakNodeKill, soakNodeFreeze, soakNodeCut, soakNodeCutAPI, soakKubeletStop:
		node, pods := s.pickNode(ctx)
		uids := sets.New[types.UID]()
		var names []string
		for _, p := range pods {
			s.onFaultedNode[p.UID] = node
			uids.Insert(p.UID)
			names = append(names, p.Name)
		}
		f.detail = fmt.Sprintf("node %s (Pods %s)", node, strings.Join(names, ", "))
		r.node, r.victim = node, pods[0]
		if kind == soakKubeletStop {
			f.at = time.Now()
			r.plane.run(ctx, "stop", "kubelet", "--node", node)
			r.faulted = true
		} else {
			f.at = r.fault(ctx, strings.TrimPrefix(kind, "node-"))
		}
		f.end = func(ctx context.Context) {
			thawed := r.back(ctx)
			By(fmt.Sprintf("node %s back: the workers of its old Pods stop", node))
			Eventually(func(g Gomega) {
				running := workerUIDs()
				for uid := range uids {
					g.Expect(running).NotTo(HaveKey(uid), "the worker of Pod %s on %s runs", uid, node)
				}
			}).WithTimeout(2 * time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
			if kind == soakNodeFreeze {
				s.thaws = append(s.thaws, soakThaw{uids: uids, at: thawed, stoppedAt: time.Now()})
			}
		}

	case soakAPIServerOutage:
		// Peers on another node vouch that the outage is shared; a group
		// whose Pods all run on one node has none, and its workers may
		// fence: a group restart, but counted in fencedInPlaceRestarts,
		// not against maxRestarts, and blaming no Pod (docs/operations.md).
		spread := len(nodesOf(ctx, r.js)) >= 2
		f.lo, f.hi, f.minEpoch = 0, 0, epoch
		if spread {
			f.unharmed = waitForSyncedWorkers(ctx, r.js, s.size)
		}
		outage := time.Duration(10+s.rng.Intn(21)) * time.Second
		f.detail = fmt.Sprintf("for %.0f s (group on %d nodes)", outage.Seconds(), len(nodesOf(ctx, r.js)))
		f.at = time.Now()
		r.plane.run(ctx, "kill", "kube-apiserver")
		time.Sleep(outage) // the outage is the fault, not a wait for something
		r.plane.run(ctx, "start", "kube-apiserver")
		waitForAPIServer(ctx)
		Eventually(func() error { return dryRunJobSet(ctx) }).WithTimeout(5 * time.Minute).Should(Succeed())

	case soakLeaderKill:
		f.lo, f.hi, f.minEpoch = 0, 0, epoch
		f.unharmed = waitForSyncedWorkers(ctx, r.js, s.size)
		killed := leaderIdentity(ctx)
		leader := podOfLeader(killed)
		f.detail = "Pod " + leader
		f.at = time.Now()
		r.plane.killContainer(ctx, leader, "jobset-controller")
		f.end = func(ctx context.Context) {
			// A controller leads again, the standby or the killed one
			// restarted. Both replicas available again may take minutes:
			// the kubelet's back-off grows with each restart of the
			// container that the soak caused (an outage ends the leader's
			// lease too), which is the kubelet's pace, not the product's.
			Eventually(func() string { return leaderIdentity(ctx) }).WithTimeout(soakRecoveryBound).
				ShouldNot(Or(BeEmpty(), Equal(killed)), "a new leader after %s was killed", leader)
		}

	case soakSuspendResume:
		// Resumed at once, before the suspended Jobs' Pods stopped (as
		// Kueue may re-admit), or once every Pod is gone.
		quick := s.rng.Intn(2) == 0
		f.lo, f.hi = 0, 0
		f.detail = map[bool]string{true: "resumed at once", false: "resumed once every Pod was gone"}[quick]
		f.at = time.Now()
		s.setSuspend(ctx, true)
		Eventually(func(g Gomega) {
			js := getJobSet(ctx, r.js)
			g.Expect(meta.IsStatusConditionTrue(js.Status.Conditions, string(jobset.JobSetSuspended))).To(BeTrue(), "suspended")
			if !quick {
				var pods corev1.PodList
				g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{jobset.JobSetNameKey: r.js.Name})).To(Succeed())
				g.Expect(pods.Items).To(BeEmpty(), "Pods of the suspended JobSet")
			}
		}).WithTimeout(3 * time.Minute).Should(Succeed())
		s.setSuspend(ctx, false)

	default:
		Fail("no soak fault " + kind)
	}
	return f
}

// setSuspend suspends or resumes the soak's JobSet.
func (s *soak) setSuspend(ctx context.Context, suspend bool) {
	js := getJobSet(ctx, s.r.js)
	patch := client.MergeFrom(js.DeepCopy())
	js.Spec.Suspend = ptr.To(suspend)
	Expect(k8sClient.Patch(ctx, js, patch)).To(Succeed())
}

// pickPod picks one of the group's running Pods.
func (s *soak) pickPod(ctx context.Context) corev1.Pod {
	names := sortedNames(waitForSyncedWorkers(ctx, s.r.js, s.size))
	return getPod(ctx, s.r.js.Namespace, names[s.rng.Intn(len(names))])
}

// pickNode picks a node (never the system node) that runs a Pod of the
// group, and returns it with the group's Pods there.
func (s *soak) pickNode(ctx context.Context) (string, []corev1.Pod) {
	running := waitForSyncedWorkers(ctx, s.r.js, s.size)
	byNode := map[string][]corev1.Pod{}
	for _, name := range sortedNames(running) {
		p := getPod(ctx, s.r.js.Namespace, name)
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
	}
	delete(byNode, s.systemNode)
	Expect(byNode).NotTo(BeEmpty(), "no Pod of the group runs off %s", s.systemNode)
	nodes := slices.Sorted(maps.Keys(byNode))
	node := nodes[s.rng.Intn(len(nodes))]
	return node, byNode[node]
}

// trainsAgain waits until the group trains at minEpoch or later: synced,
// no group restart under way, every rank in exactly one running Pod, and
// that Pod's worker running as the host sees it (LIVE). It returns when.
func (s *soak) trainsAgain(ctx context.Context, minEpoch int32) time.Time {
	Eventually(func(g Gomega) {
		js := &jobset.JobSet{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(s.r.js), js)).To(Succeed())
		if js.Status.TerminalState != "" {
			StopTrying(fmt.Sprintf("the JobSet is %s: %v", js.Status.TerminalState, js.Status.Conditions)).Now()
		}
		synced := ptr.Deref(js.Status.SyncedEpoch, 0)
		g.Expect(synced).To(BeNumerically(">=", minEpoch), "synced epoch")
		g.Expect(ptr.Deref(js.Status.DeprecatedEpoch, 0)).To(BeNumerically("<", synced), "a group restart is under way")
		running := runningWorkers(g, ctx, s.r.js)
		g.Expect(running).To(HaveLen(s.size), "running Pods")
		var pods corev1.PodList
		g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(js.Namespace), client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
		workers := workerUIDs()
		ranks := map[string]string{}
		for _, p := range pods.Items {
			if st, ok := running[p.Name]; !ok || st.uid != p.UID {
				continue
			}
			rank := rankOf(p)
			g.Expect(ranks).NotTo(HaveKey(rank), "rank %s runs in Pods %s and %s", rank, ranks[rank], p.Name)
			ranks[rank] = p.Name
			g.Expect(workers).To(HaveKey(p.UID), "the worker of Pod %s, as the host sees it", p.Name)
		}
		g.Expect(ranks).To(HaveLen(s.size), "ranks running")
	}).WithTimeout(soakRecoveryBound).WithPolling(time.Second).Should(Succeed(), "LIVE: the group trains again")
	s.checks++
	return time.Now()
}

// checkCounted checks that the fault cost the group restarts it may
// (EXACT), and returns how many it cost.
func (s *soak) checkCounted(ctx context.Context, n int, f soakFault) int32 {
	status := getJobSet(ctx, s.r.js).Status
	now := status.InPlaceRestarts + status.RestartsCountTowardsMax
	cost := now - s.counted
	s.counted = now
	s.checks++
	if cost < f.lo || cost > f.hi {
		s.violate("EXACT", fmt.Sprintf("fault %d (%s %s): %d group restarts counted (inPlaceRestarts %d, restartsCountTowardsMax %d, restarts %d), want %d to %d; since the fault: %s",
			n, f.kind, f.detail, cost, status.InPlaceRestarts, status.RestartsCountTowardsMax, status.Restarts, f.lo, f.hi,
			strings.Join(s.restartEvents(ctx, f.at), "; ")))
	}
	return cost
}

// restartEvents are the notes of the JobSet's events that started a group
// restart (in place, or full) since a time.
func (s *soak) restartEvents(ctx context.Context, since time.Time) []string {
	var notes []string
	for _, e := range s.events(ctx) {
		if startsRestart(e) && !eventTime(e).Before(since.Add(-time.Second)) {
			notes = append(notes, fmt.Sprintf("%s %s: %s", eventTime(e).UTC().Format("15:04:05"), e.Reason, e.Note))
		}
	}
	return notes
}

// checkEvents checks that the events that started group restarts number as
// many as the status counts (EXACT): in place, and full (every attempt,
// counted toward maxRestarts or not).
func (s *soak) checkEvents(ctx context.Context) {
	s.checks++
	var inPlace, full int32
	var status jobset.JobSetStatus
	Eventually(func(g Gomega) {
		inPlace, full = 0, 0
		for _, e := range s.events(ctx) {
			n := max(1, ptr.Deref(e.Series, eventsv1.EventSeries{}).Count, e.DeprecatedCount)
			switch {
			case e.Reason == jobset.ReasonInPlaceRestartStarted:
				inPlace += n
			case e.Action == "Restart":
				full += n
			}
		}
		status = getJobSet(ctx, s.r.js).Status
		g.Expect([]int32{inPlace, full}).To(Equal([]int32{status.InPlaceRestarts, status.Restarts}))
	}).WithTimeout(time.Minute).Should(Succeed(), "events that started a group restart (in place, full), against the status's counts")
	if inPlace != status.InPlaceRestarts || full != status.Restarts {
		s.violate("EXACT", fmt.Sprintf("%d events started an in-place group restart and %d a full restart; the status counts %d and %d",
			inPlace, full, status.InPlaceRestarts, status.Restarts))
	}
}

// checkSafe checks the rank watch's finds since the last check (SAFE). A
// worker of a thawed node that runs until its agent or kubelet stops it is
// the window docs/controller.md states for a frozen node, reported apart.
func (s *soak) checkSafe() {
	_, found := s.ranks.sofar()
	s.checks++
	for _, t := range found[s.safeSeen:] {
		line := fmt.Sprintf("%s: rank %s runs in Pods %v", t.at.UTC().Format("15:04:05.0"), t.rank, t.uids)
		i := slices.IndexFunc(s.thaws, func(th soakThaw) bool {
			return slices.ContainsFunc(t.uids, th.uids.Has) && !t.at.Before(th.at) && !t.at.After(th.stoppedAt)
		})
		if i >= 0 {
			s.thawOverlaps = append(s.thawOverlaps, line)
			s.thawOverlapMax = max(s.thawOverlapMax, t.at.Sub(s.thaws[i].at))
			continue
		}
		s.violate("SAFE", line)
	}
	s.safeSeen = len(found)
}

// checkBlame checks every mark's event since the last check (BLAME): a Pod
// marked lost ran on a node the soak faulted, and a Pod replaced for
// repeated failures failed in place that often itself, within the
// controller's window (its defaults).
func (s *soak) checkBlame(ctx context.Context) {
	for _, e := range s.events(ctx) {
		if e.Related == nil || s.judged.Has(e.UID) {
			continue
		}
		uid := e.Related.UID
		switch e.Reason {
		case jobset.PodReasonNodeLost:
			s.judged.Insert(e.UID)
			s.checks++
			if _, ok := s.onFaultedNode[uid]; !ok {
				s.violate("BLAME", fmt.Sprintf("Pod %s (%s) marked lost, and its node had no fault while it ran there: %s", e.Related.Name, uid, e.Note))
			}
		case jobset.PodReasonRepeatedFailures:
			s.judged.Insert(e.UID)
			s.checks++
			own := 0
			for _, t := range s.ownFailures[uid] {
				if eventTime(e).Sub(t) < jobsetcontroller.DefaultRepeatedFailureWindow {
					own++
				}
			}
			if own < jobsetcontroller.DefaultRepeatedFailureLimit {
				s.violate("BLAME", fmt.Sprintf("Pod %s (%s) replaced for repeated failures after %d failures of its own: %s", e.Related.Name, uid, own, e.Note))
			}
		}
	}
}

// events are the events about the soak's JobSet.
func (s *soak) events(ctx context.Context) []eventsv1.Event {
	var events eventsv1.EventList
	Expect(k8sClient.List(ctx, &events, client.InNamespace(s.r.js.Namespace))).To(Succeed())
	var out []eventsv1.Event
	for _, e := range events.Items {
		if e.Regarding.Kind == "JobSet" && e.Regarding.Name == s.r.js.Name {
			out = append(out, e)
		}
	}
	return out
}

// startsRestart: the event says a group restart started, in place or full
// (the controller's action Restart).
func startsRestart(e eventsv1.Event) bool {
	return e.Reason == jobset.ReasonInPlaceRestartStarted || e.Action == "Restart"
}

func eventTime(e eventsv1.Event) time.Time {
	if !e.EventTime.IsZero() {
		return e.EventTime.Time
	}
	return e.DeprecatedFirstTimestamp.Time
}

func (s *soak) violate(invariant, what string) {
	line := invariant + ": " + what
	GinkgoWriter.Println("soak violation " + line)
	s.violations = append(s.violations, line)
}

// podStatesEqual: the same Pods, each container restarted as often.
func podStatesEqual(a, b map[string]podState) bool {
	if len(a) != len(b) {
		return false
	}
	for name, x := range a {
		y, ok := b[name]
		if !ok || x.uid != y.uid || len(x.restarts) != len(y.restarts) {
			return false
		}
		for c, n := range x.restarts {
			if y.restarts[c] != n {
				return false
			}
		}
	}
	return true
}

// report writes the soak's figures: the totals, by kind the faults and
// their recovery times, the faults in order, and what it found.
func (s *soak) report(seed int64, duration, ran time.Duration) {
	looks, _ := s.ranks.sofar()
	kinds := slices.Sorted(maps.Keys(s.byKind))
	var byKind, recovery []string
	faults := 0
	for _, k := range kinds {
		st := s.byKind[k]
		faults += st.injected
		byKind = append(byKind, fmt.Sprintf("%s:%d", k, st.injected))
		rs := slices.Clone(st.recovery)
		slices.Sort(rs)
		recovery = append(recovery, fmt.Sprintf("soak kind=%s injected=%d recovery_s_min=%.1f median=%.1f max=%.1f",
			k, st.injected, rs[0].Seconds(), rs[len(rs)/2].Seconds(), rs[len(rs)-1].Seconds()))
	}
	totals := fmt.Sprintf("soak seed=%d duration_s=%.0f ran_s=%.0f faults=%d by_kind=%s invariants_checked=%d rank_looks=%d thaw_overlaps=%d thaw_overlap_max_s=%.1f violations=%d",
		seed, duration.Seconds(), ran.Seconds(), faults, strings.Join(byKind, ","), s.checks, looks,
		len(s.thawOverlaps), s.thawOverlapMax.Seconds(), len(s.violations))
	GinkgoWriter.Println(totals)
	AddReportEntry("soak", ReportEntryVisibilityAlways, totals)
	AddReportEntry("soak recovery", ReportEntryVisibilityAlways, strings.Join(recovery, "\n"))
	AddReportEntry("soak faults", ReportEntryVisibilityAlways, strings.Join(s.log, "\n"))
	if len(s.thawOverlaps) > 0 {
		AddReportEntry("soak thaw overlaps", ReportEntryVisibilityAlways, strings.Join(s.thawOverlaps, "\n"))
	}
	if len(s.violations) > 0 {
		AddReportEntry("soak violations", ReportEntryVisibilityAlways, strings.Join(s.violations, "\n"))
	}
}
