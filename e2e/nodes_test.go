package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/webhooks/jobsetwebhook"
)

// Node faults on the local cluster's nodes (tools/cluster/cluster.sh node
// kill|freeze|cut|back): a worker's node dies, hangs or drops off the
// network, its Node object kept. The controller and the webhook run on the
// first node, which no fault touches; the workers on the others. Each spec
// reports the time from the fault to every rank training again; the bounds
// asserted are generous (the controller's bound is under 30 s with the
// defaults).
var _ = Describe("Lost nodes", Serial, Label("local-cluster", "nodes"), func() {
	const systemNode = "jobset-node-1"
	var ns string
	BeforeEach(func(ctx context.Context) {
		pinComponents(ctx, systemNode)
		ns = agentNamespace(ctx)
	})

	It("replaces the rank of a killed node on another node and restarts the rest in place, counted once", func(ctx context.Context) {
		r := startNodeScenario(ctx, ns, "killed", systemNode)
		faultAt := r.fault(ctx, "kill")
		r.expectRecovered(ctx, faultAt)
	})

	It("replaces the rank of a frozen node, and stops its worker within seconds of the thaw", func(ctx context.Context) {
		r := startNodeScenario(ctx, ns, "frozen", systemNode)
		faultAt := r.fault(ctx, "freeze")
		r.expectRecovered(ctx, faultAt)

		By("the node thaws: its stale worker stops, and its Pod goes")
		thawed := r.back(ctx)
		stopped := r.waitWorkerStopped(ctx)
		AddReportEntry("thaw", fmt.Sprintf("nodes=frozen thawed_worker_ran_s=%.1f", stopped.Sub(thawed).Seconds()))
		Expect(stopped.Sub(thawed)).To(BeNumerically("<", time.Minute), "the thawed worker is stopped")
	})

	It("fences the worker of a cut-off node before the group syncs without it, and runs no rank twice once the node is back", func(ctx context.Context) {
		r := startNodeScenario(ctx, ns, "cut", systemNode)
		faultAt := r.fault(ctx, "cut")
		By("the node's own containerd: its worker stops before the group syncs the next epoch")
		stopped := r.waitWorkerStopped(ctx)
		synced := r.expectRecovered(ctx, faultAt)
		AddReportEntry("fence", fmt.Sprintf("nodes=cut fence_s=%.1f fenced_before_sync_s=%.1f",
			stopped.Sub(faultAt).Seconds(), synced.Sub(stopped).Seconds()))
		Expect(stopped).To(BeTemporally("<", synced), "the cut-off worker stopped before the group synced without it")

		By("the link comes back: the old Pod is removed, and only the replacement runs that rank")
		r.back(ctx)
		Eventually(func() bool { return r.workerRunning(ctx) }).WithTimeout(time.Minute).Should(BeFalse())
		Consistently(func() bool { return r.workerRunning(ctx) }, 10*time.Second).Should(BeFalse(), "the old worker stays stopped")
		Expect(waitForSyncedWorkers(ctx, r.js, 2)).To(HaveLen(2))
	})

	// The kubelet alone down (crash-looping, being upgraded): the node's
	// Lease lapses while its containers and network stay up, and its agent
	// stays in contact. Under the worker wrapper the agent stops its worker
	// itself: with the injected default, on its node's Lease before the
	// controller marks the Pod lost; fencing on its own silence alone, on
	// the deprecation that follows the mark, a stop it confirms on its Pod
	// while the controller holds the group's sync. The processes are read
	// from the host's /proc (local-cluster).
	for _, leaseFence := range []bool{true, false} {
		title := "stops the worker of a node whose kubelet alone is down before its rank is replaced, and runs no rank twice"
		if !leaseFence {
			title = "stops the worker of a node whose kubelet alone is down on the deprecation, its agent fencing on its own silence alone, and runs no rank twice"
		}
		It(title, func(ctx context.Context) {
			name := "kubelet-down"
			var adjust []func(*jobset.JobSet)
			if !leaseFence {
				name = "kubelet-down-contact"
				adjust = append(adjust, injectedAs(ctx, sidecar.Options{FenceNodeLease: false}))
			}
			r := startNodeScenario(ctx, ns, name, systemNode, adjust...)
			worker := containerID(r.victim, "worker")
			Expect(r.victim.Spec.Containers[0].Command).To(ContainElement(agentspec.WrapperBinary), "the worker runs under the wrapper")
			// The group syncs once every agent passed the barrier; the
			// wrapper forks the worker only when its agent's start reaches
			// it after.
			Eventually(func() []string { return workerProcesses(worker, ns) }).WithTimeout(time.Minute).WithPolling(200*time.Millisecond).
				ShouldNot(BeEmpty(), "the worker's processes, as the host sees them")

			By(fmt.Sprintf("the kubelet of node %s stops; its containers and network stay up", r.node))
			faultAt := time.Now()
			r.plane.run(ctx, "kill", "kubelet", "--node", r.node)
			r.faulted = true

			By("the old worker stops before the group syncs without it: no look that finds the next epoch synced finds it running")
			var stopped, marked time.Time
			Eventually(func(g Gomega) {
				synced := syncedEpoch(ctx, r.js) > r.epoch
				running := workerProcesses(worker, ns)
				if synced && len(running) > 0 {
					StopTrying(fmt.Sprintf("the worker of Pod %s runs beside the next epoch: %v", r.victim.Name, running)).Now()
				}
				if len(running) == 0 && stopped.IsZero() {
					stopped = time.Now()
				}
				var pod corev1.Pod
				if marked.IsZero() && k8sClient.Get(ctx, client.ObjectKeyFromObject(&r.victim), &pod) == nil && jobset.ControllerMark(&pod) != nil {
					marked = time.Now()
				}
				g.Expect(synced).To(BeTrue(), "the group synced without the lost rank")
			}).WithTimeout(3 * time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
			synced := time.Now()
			r.expectRecovered(ctx, faultAt)

			old := getPod(ctx, ns, r.victim.Name) // held while its agent's promises may bind
			if leaseFence {
				By("its agent stopped the worker on its node's Lease, before the controller marked the Pod lost")
				Expect(marked).NotTo(BeZero(), "the Pod was seen marked lost")
				Expect(stopped).To(BeTemporally("<", marked), "the worker stopped before the mark")
			} else {
				By("its agent confirmed the stop on the Pod the controller marked lost")
				Expect(old.Annotations).To(HaveKeyWithValue(agentspec.WorkerStoppedAnnotation, strconv.Itoa(int(r.epoch))))
			}
			AddReportEntry("kubelet down", fmt.Sprintf("nodes=%s worker_stopped_s=%.1f marked_s=%.1f stopped_before_sync_s=%.1f",
				name, stopped.Sub(faultAt).Seconds(), marked.Sub(faultAt).Seconds(), synced.Sub(stopped).Seconds()))
		})
	}

	It("replaces off its node a rank that fails in place again and again", func(ctx context.Context) {
		r := startNodeScenario(ctx, ns, "failing", systemNode)
		start := time.Now()
		for i := range 3 {
			By(fmt.Sprintf("the worker on %s fails in place (%d)", r.node, i+1))
			epoch := syncedEpoch(ctx, r.js)
			exitWorker(ctx, ns, r.victim.Name, 1)
			Eventually(func() int32 { return syncedEpoch(ctx, r.js) }).WithTimeout(2 * time.Minute).Should(BeNumerically(">", epoch))
			if i < 2 {
				waitForSyncedWorkers(ctx, r.js, 2)
			}
		}
		By("its replacement runs on another node")
		var replacement corev1.Pod
		Eventually(func(g Gomega) {
			var pods corev1.PodList
			g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{jobset.JobSetNameKey: r.js.Name})).To(Succeed())
			found := false
			for _, p := range pods.Items {
				if p.Labels["batch.kubernetes.io/job-name"] == r.victim.Labels["batch.kubernetes.io/job-name"] &&
					p.UID != r.victim.UID && p.Status.Phase == corev1.PodRunning {
					replacement, found = p, true
				}
			}
			g.Expect(found).To(BeTrue(), "a replacement of %s runs", r.victim.Name)
		}).WithTimeout(3 * time.Minute).Should(Succeed())
		Expect(replacement.Spec.NodeName).NotTo(Equal(r.node), "the replacement keeps off the failing node")
		waitForSyncedWorkers(ctx, r.js, 2)
		AddReportEntry("repeated", fmt.Sprintf("nodes=failing three_failures_to_replaced_s=%.1f", time.Since(start).Seconds()))
		Expect(getJobSet(ctx, r.js).Status.InPlaceRestarts).To(Equal(int32(3)), "three group restarts, each counted once")
	})
})

// workerProcesses lists the processes of a worker container but its
// wrapper, from the host's /proc: what is left of the worker.
func workerProcesses(containerID, tag string) []string {
	var worker []string
	for _, p := range nodeProcesses([]string{containerID}, tag) {
		if _, argv, _ := strings.Cut(p, " "); !strings.HasPrefix(argv, agentspec.WrapperBinary) {
			worker = append(worker, p)
		}
	}
	return worker
}

// pinComponents keeps our controller and webhook on node, which no node
// fault touches, so that the specs measure the loss of a worker's node.
func pinComponents(ctx context.Context, node string) {
	for _, name := range []string{"jobset-controller", "jobset-webhook"} {
		if pinDeployment(ctx, client.ObjectKey{Namespace: "jobset-system", Name: name}, node) {
			waitForRollout(ctx, name)
		}
	}
}

// pinDeployment keeps the Deployment's Pods on node, and tells whether
// that changed it: its Pods then roll.
func pinDeployment(ctx context.Context, key client.ObjectKey, node string) bool {
	var d appsv1.Deployment
	Expect(k8sClient.Get(ctx, key, &d)).To(Succeed())
	if d.Spec.Template.Spec.NodeSelector[corev1.LabelHostname] == node {
		return false
	}
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Template.Spec.NodeSelector = map[string]string{corev1.LabelHostname: node}
	Expect(k8sClient.Patch(ctx, &d, patch)).To(Succeed())
	return true
}

// nodeScenario is a JobSet of two ranks on two nodes other than the
// system node, and the rank whose node the spec faults.
type nodeScenario struct {
	plane  *localControlPlane
	js     *jobset.JobSet
	victim corev1.Pod
	node   string
	before map[string]podState
	epoch  int32
	// faulted: the node is frozen, cut or killed until back.
	faulted bool
}

// startNodeScenario runs story1-injected.yaml in that shape, changed by
// adjust (each in turn) before it is created.
func startNodeScenario(ctx context.Context, ns, name, systemNode string, adjust ...func(*jobset.JobSet)) *nodeScenario {
	r := &nodeScenario{plane: localPlane()}
	// A node an earlier spec faulted may still be NotReady or tainted: the
	// scheduler would then put both ranks on one node, which the specs
	// cannot use.
	waitForNodesSettled(ctx)
	js := podTier(example(ns, "story1-injected.yaml"))
	js.Name = name
	rj := &js.Spec.ReplicatedJobs[0]
	rj.Replicas = 2
	rj.Template.Spec.Parallelism, rj.Template.Spec.Completions = ptr.To[int32](1), ptr.To[int32](1)
	pod := &rj.Template.Spec.Template.Spec
	pod.Affinity = &corev1.Affinity{
		NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpNotIn, Values: []string{systemNode}}}}}}},
		// Spread over the nodes, but a replacement may join its peer.
		PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{jobset.JobSetNameKey: name}}}}}},
	}
	for _, f := range adjust {
		f(js)
	}
	Expect(k8sClient.Create(ctx, js)).To(Succeed())
	r.js = js
	r.before = waitForSyncedWorkers(ctx, js, 2)
	r.epoch = syncedEpoch(ctx, js)
	Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: anyPod(r.before)}, &r.victim)).To(Succeed())
	r.node = r.victim.Spec.NodeName
	Expect(r.node).NotTo(Equal(systemNode))
	DeferCleanup(func(ctx context.Context) {
		if r.faulted {
			r.back(ctx)
		}
	})
	return r
}

// fault brings the fault (kill, freeze or cut) to the victim's node and
// returns when.
func (r *nodeScenario) fault(ctx context.Context, action string) time.Time {
	By(fmt.Sprintf("%s node %s, which runs Pod %s", action, r.node, r.victim.Name))
	at := time.Now()
	r.plane.run(ctx, "node", action, r.node)
	r.faulted = true
	return at
}

// back ends the fault, and waits until the node is Ready again and no
// longer tainted as lost; it returns when the fault ended.
func (r *nodeScenario) back(ctx context.Context) time.Time {
	at := time.Now()
	r.plane.run(ctx, "node", "back", r.node)
	r.faulted = false
	waitNodesBack(ctx, r.node)
	return at
}

// waitNodesBack waits until each node is Ready again and no longer
// tainted as lost.
func waitNodesBack(ctx context.Context, nodes ...string) {
	Eventually(func(g Gomega) {
		for _, node := range nodes {
			var n corev1.Node
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: node}, &n)).To(Succeed())
			ready := false
			for _, c := range n.Status.Conditions {
				ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
			}
			g.Expect(ready).To(BeTrue(), "node %s is Ready", node)
			for _, t := range n.Spec.Taints {
				g.Expect(t.Key).NotTo(Equal("jobset.sigs.k8s.io/node-lost"))
			}
		}
	}).WithTimeout(3 * time.Minute).Should(Succeed())
}

// expectRecovered waits until the group trains again at a later epoch,
// the victim replaced on another node and the other rank restarted in
// place, one group restart counted; it reports and returns when the
// group synced.
func (r *nodeScenario) expectRecovered(ctx context.Context, faultAt time.Time) time.Time {
	By("the lost rank is replaced on another node, the other restarts in place, and the group syncs")
	Eventually(func() int32 { return syncedEpoch(ctx, r.js) }).WithTimeout(3 * time.Minute).Should(BeNumerically(">", r.epoch))
	synced := time.Now()
	after := waitForSyncedWorkers(ctx, r.js, 2)
	training := time.Now()
	Expect(after).NotTo(HaveKey(r.victim.Name), "the lost rank's Pod was replaced")
	for name, b := range r.before {
		if name == r.victim.Name {
			continue
		}
		Expect(after[name].uid).To(Equal(b.uid), "Pod %s restarted in place", name)
	}
	for name := range after {
		var p corev1.Pod
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: r.js.Namespace, Name: name}, &p)).To(Succeed())
		Expect(p.Spec.NodeName).NotTo(Equal(r.node), "Pod %s runs on the lost node", name)
	}
	got := getJobSet(ctx, r.js)
	Expect(got.Status.InPlaceRestarts).To(Equal(int32(1)), "one group restart, counted once")
	AddReportEntry("recovery", fmt.Sprintf("nodes=%s fault_to_training_s=%.1f", r.js.Name, training.Sub(faultAt).Seconds()))
	Expect(training.Sub(faultAt)).To(BeNumerically("<", 3*time.Minute))
	return synced
}

// workerRunning reports whether the victim's worker container runs on its
// node, as that node's own containerd says.
func (r *nodeScenario) workerRunning(ctx context.Context) bool {
	out := r.plane.output(ctx, "exec", "--node", r.node, "ctr", "--address", r.plane.socket(ctx, r.node), "--namespace", "k8s.io",
		"containers", "ls", "--quiet",
		fmt.Sprintf("labels.%q==%s,labels.%q==worker", "io.kubernetes.pod.uid", r.victim.UID, "io.kubernetes.container.name"))
	ids := strings.Fields(out)
	if len(ids) == 0 {
		return false
	}
	tasks := r.plane.output(ctx, "exec", "--node", r.node, "ctr", "--address", r.plane.socket(ctx, r.node), "--namespace", "k8s.io", "tasks", "ls")
	for _, line := range strings.Split(tasks, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 3 && fields[2] == "RUNNING" {
			for _, id := range ids {
				if fields[0] == id {
					return true
				}
			}
		}
	}
	return false
}

// waitWorkerStopped waits until the victim's worker no longer runs on its
// node and returns when that was seen.
func (r *nodeScenario) waitWorkerStopped(ctx context.Context) time.Time {
	Eventually(func() bool { return r.workerRunning(ctx) }).WithTimeout(2*time.Minute).WithPolling(200*time.Millisecond).
		Should(BeFalse(), "the worker of Pod %s on node %s stops", r.victim.Name, r.node)
	return time.Now()
}

// injectedAs injects the agent as the webhook would with options o (its
// agent image), so that the webhook leaves it as it is: a JobSet whose
// agents need other settings than the webhook's.
func injectedAs(ctx context.Context, o sidecar.Options) func(*jobset.JobSet) {
	var webhook appsv1.Deployment
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "jobset-system", Name: "jobset-webhook"}, &webhook)).To(Succeed())
	for _, arg := range webhook.Spec.Template.Spec.Containers[0].Args {
		if image, ok := strings.CutPrefix(arg, "--agent-image="); ok {
			o.Image = image
		}
	}
	Expect(o.Image).NotTo(BeEmpty(), "the webhook's --agent-image")
	return func(js *jobset.JobSet) { jobsetwebhook.InjectAgent(js, o) }
}
