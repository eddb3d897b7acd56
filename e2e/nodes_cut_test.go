package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// Node faults beyond one node lost whole: a node cut off from the API
// server alone, its Pod network to the other nodes kept (cluster.sh node
// cut-api), two nodes cut off together (a rack), and a node killed while a
// full restart deletes its Pod. As for the lost nodes, the controller and
// the webhook run on the first node, which no fault touches, and the two
// ranks of the group on the others. Every spec watches the workers'
// processes from the host (the nodes are namespaces of this machine:
// local-cluster) and fails on any look that finds one rank running in two
// Pods at once.
var _ = Describe("Nodes cut off", Serial, Label("local-cluster", "nodes"), func() {
	const systemNode = "jobset-node-1"
	var ns string
	BeforeEach(func(ctx context.Context) {
		pinComponents(ctx, systemNode)
		ns = agentNamespace(ctx)
	})

	// The node's agent cannot reach the API server, but can reach its peer
	// on the other node, which is in contact and says so: the silence is
	// not shared, and the agent stops its worker before the controller
	// (which hears nothing from the node's kubelet) replaces the rank.
	It("fences the worker of a node cut off from the API server alone, on the word of its peer in contact, before the group syncs without it", func(ctx context.Context) {
		r := startNodeScenario(ctx, ns, "cut-api", systemNode)
		peer := r.otherRank(ctx)
		ranks := watchRanks(ctx, r.js)
		agentLog := r.plane.containerLog(ctx, r.victim, agentspec.ContainerName)

		faultAt := r.fault(ctx, "cut-api")
		By("the node's worker stops before the group syncs the next epoch")
		stopped := r.waitWorkerStopped(ctx)
		synced := r.expectRecovered(ctx, faultAt)
		AddReportEntry("fence", fmt.Sprintf("nodes=cut-api fence_s=%.1f fenced_before_sync_s=%.1f",
			stopped.Sub(faultAt).Seconds(), synced.Sub(stopped).Seconds()))
		Expect(stopped).To(BeTemporally("<", synced), "the cut-off worker stopped before the group synced without it")

		By(fmt.Sprintf("its agent stopped it because its peer %s on %s, in contact, said so over the Pod network", peer.Name, peer.Spec.NodeName))
		Expect(agentLog()).To(ContainSubstring(peerInContactLog), "the agent's log on node %s", r.node)

		By("the API server reaches the node again: the old Pod is removed, and only the replacement runs that rank")
		r.back(ctx)
		Eventually(func() bool { return r.workerRunning(ctx) }).WithTimeout(time.Minute).Should(BeFalse())
		Consistently(func() bool { return r.workerRunning(ctx) }, 10*time.Second).Should(BeFalse(), "the old worker stays stopped")
		Expect(waitForSyncedWorkers(ctx, r.js, 2)).To(HaveLen(2))
		Expect(ranks.stop()).To(BeEmpty(), "no rank runs in two Pods at once")
	})

	// Both nodes of the group go off the network at once (a rack's
	// switch): each agent, silent, finds no peer to vouch for it and stops
	// its worker; the controller sees two silent nodes of the group, more
	// than the one witness its agents ask for, and may replace their
	// members only past the agents' defer limit (docs/controller.md,
	// "Shared silence"). Back well before that, the group syncs again,
	// each rank once. The kubelets renew one after the other: as soon as
	// the first does, one node is silent, past its ordinary bound, and the
	// rule may replace its member then (its agent fenced, so that is safe).
	It("replaces no member of two nodes cut off together while they are cut, and their group syncs again once they are back", func(ctx context.Context) {
		// Past the ordinary bound (under 30 s with the defaults) by as much again:
		// a controller that did not defer would have replaced both ranks.
		const cutFor = 60 * time.Second
		r := startNodeScenario(ctx, ns, "rack", systemNode)
		rack := []string{r.node, r.otherRank(ctx).Spec.NodeName}
		want := map[string]string{} // Pod by rank
		for name := range r.before {
			want[rankOf(getPod(ctx, ns, name))] = name
		}
		ranks := watchRanks(ctx, r.js)

		By(fmt.Sprintf("cutting nodes %v off together for %s", rack, cutFor))
		cutAt := time.Now()
		r.plane.run(ctx, append([]string{"node", "cut"}, rack...)...)
		cut := true
		DeferCleanup(func(ctx context.Context) {
			if cut {
				r.plane.run(ctx, append([]string{"node", "back"}, rack...)...)
				waitNodesBack(ctx, rack...)
			}
		})

		By("each agent, silent and with no peer to vouch for it, stops its worker")
		Eventually(func(g Gomega) {
			running := workerUIDs()
			for name, b := range r.before {
				g.Expect(running).NotTo(HaveKey(b.uid), "the worker of Pod %s runs", name)
			}
		}).WithTimeout(2 * time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
		stopped := time.Now()

		By("the controller replaces neither: no Pod of the group is marked lost or deleted while the cut lasts")
		Consistently(func(g Gomega) {
			var pods corev1.PodList
			g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{jobset.JobSetNameKey: r.js.Name})).To(Succeed())
			g.Expect(pods.Items).To(HaveLen(len(r.before)), "no replacement was created")
			for _, p := range pods.Items {
				g.Expect(r.before).To(HaveKey(p.Name), "Pod %s is new", p.Name)
				g.Expect(r.before[p.Name].uid).To(Equal(p.UID), "Pod %s was recreated", p.Name)
				g.Expect(p.DeletionTimestamp).To(BeNil(), "Pod %s is being deleted", p.Name)
				g.Expect(jobset.ControllerMark(&p)).To(BeNil(), "Pod %s is marked", p.Name)
			}
		}).WithTimeout(time.Until(cutAt.Add(cutFor))).WithPolling(time.Second).Should(Succeed())

		By(fmt.Sprintf("nodes %v back together", rack))
		backAt := time.Now()
		r.plane.run(ctx, append([]string{"node", "back"}, rack...)...)
		cut = false
		waitNodesBack(ctx, rack...)

		By("the group syncs again at a later epoch, every rank in one Pod: its own, restarted in place, or a replacement of the node lost")
		Eventually(func() int32 { return syncedEpoch(ctx, r.js) }).WithTimeout(3 * time.Minute).Should(BeNumerically(">", r.epoch))
		// A kubelet back from a cut reports its Pods' restarts when its
		// status writes get through, which may be after the agents, back
		// too, synced the group: until then the Pods show the status
		// written before the cut, every container running.
		var after map[string]podState
		Eventually(func(g Gomega) {
			after = runningWorkers(g, ctx, r.js)
			g.Expect(after).To(HaveLen(len(r.before)))
			for name, a := range after {
				if b, kept := r.before[name]; kept {
					g.Expect(a.restarts["worker"]).To(BeNumerically(">", b.restarts["worker"]), "the worker of Pod %s, stopped by its agent, started again", name)
				}
			}
		}).WithTimeout(2 * time.Minute).Should(Succeed())
		training := time.Now()
		got := map[string]string{}
		for name, a := range after {
			got[rankOf(getPod(ctx, ns, name))] = name
			if b, kept := r.before[name]; kept {
				Expect(a.uid).To(Equal(b.uid), "Pod %s was recreated", name)
			}
		}
		Expect(got).To(HaveLen(len(want)), "every rank runs once")
		for rank, name := range want {
			Expect(got).To(HaveKey(rank), "rank %s (Pod %s) runs again", rank, name)
			if got[rank] != name {
				By(fmt.Sprintf("Pod %s was replaced by %s once its node alone was silent", name, got[rank]))
				var events eventsv1.EventList
				Expect(k8sClient.List(ctx, &events, client.InNamespace(ns))).To(Succeed())
				Expect(events.Items).To(ContainElement(And(HaveField("Reason", jobset.PodReasonNodeLost),
					HaveField("Note", ContainSubstring("Pod %s marked Failed", name)))), "Pod %s was replaced as lost", name)
			}
		}
		// The kubelets renew one after the other, the group already in sync:
		// the node still silent is replaced only if it stays silent a
		// bound after the other came back (docs/controller.md, "Shared
		// silence").
		By("both kubelets renew their nodes' Leases again")
		renewedAt := map[string]time.Time{}
		Eventually(func(g Gomega) {
			for _, node := range rack {
				var lease coordinationv1.Lease
				g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: corev1.NamespaceNodeLease, Name: node}, &lease)).To(Succeed())
				if _, seen := renewedAt[node]; !seen && lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(backAt) {
					renewedAt[node] = time.Now()
				}
				g.Expect(renewedAt).To(HaveKey(node), "node %s renewed its Lease after the cut", node)
			}
		}).WithTimeout(3 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
		renewedApart := renewedAt[rack[0]].Sub(renewedAt[rack[1]]).Abs()
		var lostAfter []string
		var lostEvents eventsv1.EventList
		Expect(k8sClient.List(ctx, &lostEvents, client.InNamespace(ns))).To(Succeed())
		for _, e := range lostEvents.Items {
			if e.Reason == jobset.PodReasonNodeLost && e.CreationTimestamp.After(backAt) {
				lostAfter = append(lostAfter, e.Note)
			}
		}
		status := getJobSet(ctx, r.js).Status
		Expect(status.Restarts).To(BeZero(), "no full restart")
		Expect(status.TerminalState).To(BeEmpty())
		AddReportEntry("rack", fmt.Sprintf("nodes=rack-cut cut_s=%.0f fence_s=%.1f back_to_training_s=%.1f renewed_apart_s=%.1f replaced_after_back=%d in_place_restarts=%d",
			backAt.Sub(cutAt).Seconds(), stopped.Sub(cutAt).Seconds(), training.Sub(backAt).Seconds(), renewedApart.Seconds(), len(lostAfter), status.InPlaceRestarts))
		for _, note := range lostAfter {
			AddReportEntry("rack replaced after back", note)
		}
		// What started each group restart, for the report.
		var events eventsv1.EventList
		Expect(k8sClient.List(ctx, &events, client.InNamespace(ns))).To(Succeed())
		for _, e := range events.Items {
			if e.Reason == jobset.ReasonInPlaceRestartStarted || e.Reason == jobset.PodReasonNodeLost {
				AddReportEntry("rack event", fmt.Sprintf("%s %s: %s", e.CreationTimestamp.UTC().Format("15:04:05"), e.Reason, e.Note))
			}
		}
		Expect(ranks.stop()).To(BeEmpty(), "no rank runs in two Pods at once")
	})

	// A full restart deletes the Jobs in the foreground; the Pod of the
	// killed node is deleted with its Job but stays Terminating, as its
	// kubelet never confirms the end, and the new Job of that name waits
	// for it. Its agent fences, so the controller removes it past the
	// agent's defer limit and a promise (docs/controller.md, "Node loss"):
	// lowered here to 60 s from the default 600, so that the spec takes
	// minutes, not eleven.
	It("runs every rank again after a full restart whose Pod on a killed node is held Terminating", func(ctx context.Context) {
		const deferLimit = 60 * time.Second
		r := startNodeScenario(ctx, ns, "full-restart", systemNode, fullRestartOnExit42(ns, deferLimit))
		other := r.otherRank(ctx)
		ranks := watchRanks(ctx, r.js)

		faultAt := r.fault(ctx, "kill")
		By(fmt.Sprintf("the worker of %s, on %s, exits 42: its Job fails, and the JobSet restarts fully", other.Name, other.Spec.NodeName))
		exitWorker(ctx, ns, other.Name, 42)
		Eventually(func() int32 { return getJobSet(ctx, r.js).Status.Restarts }).Should(Equal(int32(1)))

		By(fmt.Sprintf("Pod %s, deleted with its Job, is held Terminating by its dead kubelet, then removed", r.victim.Name))
		held := false
		Eventually(func(g Gomega) {
			var p corev1.Pod
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(&r.victim), &p)
			if apierrors.IsNotFound(err) {
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			held = held || p.DeletionTimestamp != nil
			g.Expect(p.UID).NotTo(Equal(r.victim.UID), "Pod %s is still there (Terminating: %v)", p.Name, p.DeletionTimestamp != nil)
		}).WithTimeout(6 * time.Minute).WithPolling(time.Second).Should(Succeed())
		removed := time.Now()
		Expect(held).To(BeTrue(), "Pod %s was seen Terminating before it went", r.victim.Name)
		var events eventsv1.EventList
		Expect(k8sClient.List(ctx, &events, client.InNamespace(ns))).To(Succeed())
		Expect(events.Items).To(ContainElement(And(
			HaveField("Reason", jobset.PodReasonNodeLost),
			HaveField("Note", ContainSubstring("Pod %s of an earlier restart attempt", r.victim.Name)))))

		By("the new attempt's Jobs run every rank")
		var after map[string]podState
		Eventually(func(g Gomega) {
			after = runningWorkers(g, ctx, r.js)
			g.Expect(after).To(HaveLen(len(r.before)))
		}).WithTimeout(3 * time.Minute).Should(Succeed())
		training := time.Now()
		for name := range after {
			Expect(r.before).NotTo(HaveKey(name), "Pod %s is of the first attempt", name)
			p := getPod(ctx, ns, name)
			Expect(p.Labels).To(HaveKeyWithValue(jobset.RestartsKey, "1"), "Pod %s is of the new attempt", name)
			Expect(p.Spec.NodeName).NotTo(Equal(r.node), "Pod %s runs on the killed node", name)
		}
		got := getJobSet(ctx, r.js)
		Expect(got.Status.Restarts).To(Equal(int32(1)), "one full restart")
		AddReportEntry("full restart", fmt.Sprintf("nodes=full-restart-kill defer_limit_s=%.0f held_s=%.1f fault_to_training_s=%.1f",
			deferLimit.Seconds(), removed.Sub(faultAt).Seconds(), training.Sub(faultAt).Seconds()))
		Expect(ranks.stop()).To(BeEmpty(), "no rank runs in two Pods at once")
	})
})

// peerInContactLog is what the agent logs when a peer it asked is in
// contact with the API server: the reason it stops its worker.
const peerInContactLog = "A peer is in contact with the API server"

// otherRank returns the Pod of the scenario's rank that is not the
// victim's, and checks that it runs on another node: the specs need the
// group on two nodes.
func (r *nodeScenario) otherRank(ctx context.Context) corev1.Pod {
	Expect(r.before).To(HaveLen(2))
	for name := range r.before {
		if name == r.victim.Name {
			continue
		}
		p := getPod(ctx, r.js.Namespace, name)
		Expect(p.Spec.NodeName).NotTo(Equal(r.node), "the two ranks run on one node, %s: the spec needs one on each of two", r.node)
		return p
	}
	Fail("no other rank than " + r.victim.Name)
	return corev1.Pod{}
}

// fullRestartOnExit42 gives the scenario's Pods the agent as
// story1-inplace.yaml writes it out, its defer limit lowered to
// deferLimit, and fails the worker's Job when it exits 42 (podFailurePolicy
// FailJob), which the JobSet answers with a full restart.
func fullRestartOnExit42(ns string, deferLimit time.Duration) func(*jobset.JobSet) {
	return func(js *jobset.JobSet) {
		delete(js.Annotations, jobset.InjectAgentKey)
		rj := &js.Spec.ReplicatedJobs[0]
		job := example(ns, "story1-inplace.yaml").Spec.ReplicatedJobs[0].Template.Spec
		job.Parallelism, job.Completions = rj.Template.Spec.Parallelism, rj.Template.Spec.Completions
		pod := &job.Template.Spec
		pod.Affinity = rj.Template.Spec.Template.Spec.Affinity
		job.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action: batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				ContainerName: ptr.To("worker"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
		}}}
		worker := &pod.Containers[0]
		Expect(worker.RestartPolicyRules).To(HaveLen(1))
		worker.RestartPolicyRules[0].ExitCodes.Values = []int32{0, 42} // 42 fails the Pod, and its Job
		i := slices.IndexFunc(pod.InitContainers, func(c corev1.Container) bool { return c.Name == agentspec.ContainerName })
		Expect(i).NotTo(BeNumerically("<", 0), "story1-inplace.yaml's agent")
		pod.InitContainers[i].Env = append(pod.InitContainers[i].Env,
			corev1.EnvVar{Name: agentspec.EnvFenceDeferLimitSeconds, Value: strconv.Itoa(int(deferLimit.Seconds()))})
		rj.Template.Spec = job
	}
}

// containerLog opens the log file of a container's current run on its
// node, through the node's mount namespace (its kubelet's root), and
// returns a function that reads all of it: the open file outlives the
// kubelet's removal of a restarted container's log, and the API server
// cannot fetch logs from a node cut off from it.
func (p *localControlPlane) containerLog(ctx context.Context, pod corev1.Pod, container string) func() string {
	kubelet := strings.TrimSpace(p.output(ctx, "pid", "kubelet", "--node", pod.Spec.NodeName))
	run := int32(-1)
	for _, cs := range append(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses...) {
		if cs.Name == container {
			run = cs.RestartCount
		}
	}
	Expect(run).NotTo(BeNumerically("<", 0), "Pod %s has no container %s", pod.Name, container)
	path := filepath.Join("/proc", kubelet, "root", "var", "log", "pods",
		fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID), container, fmt.Sprintf("%d.log", run))
	f, err := os.Open(path)
	Expect(err).NotTo(HaveOccurred(), "the log of %s/%s on node %s", pod.Name, container, pod.Spec.NodeName)
	DeferCleanup(f.Close)
	return func() string {
		_, err := f.Seek(0, io.SeekStart)
		Expect(err).NotTo(HaveOccurred())
		out, err := io.ReadAll(f)
		Expect(err).NotTo(HaveOccurred())
		return string(out)
	}
}

// workerUIDs returns the UIDs of the Pods whose e2e worker process runs on
// this machine, read from the host's /proc: the local cluster's nodes are
// its namespaces. A worker is a process whose command is /worker, its
// Pod's UID in its environment (POD_UID, as the examples set it).
func workerUIDs() map[types.UID][]string {
	entries, err := os.ReadDir("/proc")
	Expect(err).NotTo(HaveOccurred())
	running := map[types.UID][]string{}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.HasPrefix(cmdline, []byte("/worker\x00")) || frozen(e.Name()) {
			continue // ended meanwhile, not a worker, or on a frozen node: it runs nothing
		}
		environ, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, v := range bytes.Split(environ, []byte{0}) {
			if uid, ok := bytes.CutPrefix(v, []byte("POD_UID=")); ok {
				running[types.UID(uid)] = append(running[types.UID(uid)], e.Name())
			}
		}
	}
	return running
}

// frozen reports whether the process is stopped by the cgroup freezer,
// as cluster.sh node freeze stops every process of a node: it is there,
// and runs nothing until the thaw.
func frozen(pid string) bool {
	cgroups, err := os.ReadFile(filepath.Join("/proc", pid, "cgroup"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(cgroups), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case slices.Contains(strings.Split(parts[1], ","), "freezer"): // cgroup v1
			state, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/freezer", parts[2], "freezer.state"))
			return err == nil && strings.TrimSpace(string(state)) != "THAWED"
		case parts[0] == "0" && parts[1] == "": // cgroup v2, when no v1 freezer is mounted
			events, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", parts[2], "cgroup.events"))
			if err == nil && strings.Contains(string(events), "frozen 1") {
				return true
			}
		}
	}
	return false
}

// rankOf names a Pod's rank: its replicatedJob, Job index and completion
// index, the same for every Pod that stands for it (a replacement, the
// next restart attempt).
func rankOf(p corev1.Pod) string {
	return fmt.Sprintf("%s/%s/%s", p.Labels[jobset.ReplicatedJobNameKey], p.Labels[jobset.JobIndexKey],
		p.Annotations[batchv1.JobCompletionIndexAnnotation])
}

// rankWatch looks at the workers of a JobSet's Pods every half second
// (workerUIDs) until stopped, and keeps every look that finds one rank's
// worker running in two Pods at once, of any restart attempt.
type rankWatch struct {
	once  sync.Once
	done  chan struct{}
	ended chan struct{}
	twice []string
	// mu guards what a spec may read while the watch runs.
	mu sync.Mutex
	// looks counts the looks taken; found holds each that found a rank
	// twice, with the Pods it found it in.
	looks int
	found []rankTwice
}

// rankTwice is a look that found one rank's worker running in two Pods or
// more.
type rankTwice struct {
	at   time.Time
	rank string
	uids []types.UID
}

// watchRanks starts a rankWatch of js; it stops when the spec ends at the
// latest.
func watchRanks(ctx context.Context, js *jobset.JobSet) *rankWatch {
	w := &rankWatch{done: make(chan struct{}), ended: make(chan struct{})}
	// A Pod's rank, kept after it is gone: a worker may outlive its Pod
	// object on a node cut off.
	ranks := map[types.UID]string{}
	learn := func() {
		var pods corev1.PodList
		if k8sClient.List(ctx, &pods, client.InNamespace(js.Namespace), client.MatchingLabels{jobset.JobSetNameKey: js.Name}) != nil {
			return // looked at again next time
		}
		for _, p := range pods.Items {
			ranks[p.UID] = rankOf(p)
		}
	}
	go func() {
		defer GinkgoRecover()
		defer close(w.ended)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			running := workerUIDs()
			learn()
			pods := map[string][]string{}
			uids := map[string][]types.UID{}
			for uid, pids := range running {
				if rank, ok := ranks[uid]; ok {
					pods[rank] = append(pods[rank], fmt.Sprintf("%s (pids %s)", uid, strings.Join(pids, ",")))
					uids[rank] = append(uids[rank], uid)
				}
			}
			now := time.Now()
			w.mu.Lock()
			w.looks++
			for rank, in := range pods {
				if len(in) > 1 {
					w.twice = append(w.twice, fmt.Sprintf("%s: rank %s runs in Pods %v", now.UTC().Format("15:04:05.0"), rank, in))
					w.found = append(w.found, rankTwice{at: now, rank: rank, uids: uids[rank]})
				}
			}
			w.mu.Unlock()
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
		}
	}()
	DeferCleanup(w.stop)
	return w
}

// stop ends the watch and returns the looks that found a rank twice.
func (w *rankWatch) stop() []string {
	w.once.Do(func() { close(w.done) })
	<-w.ended
	return w.twice
}

// sofar returns how many looks the running watch took, and those that
// found a rank twice.
func (w *rankWatch) sofar() (int, []rankTwice) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.looks, slices.Clone(w.found)
}
