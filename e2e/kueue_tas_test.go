package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/peers"
)

// Kueue's topology-aware scheduling (TAS) places each Pod of an admitted
// Workload itself: the Pods are created with its scheduling gate, and Kueue
// ungates each onto a node of the Workload's topology assignment (a node
// selector of that node's hostname). A rank replaced after its node is lost
// is a new Pod of the same Workload, gated as well: it runs only if Kueue
// moves that share of the assignment off the lost node. Kueue v0.19 does so
// with its defaults (TASFailedNodeReplacement, TASReplaceNodeOnNodeTaints,
// TASReplaceNodeOnPodTermination, all beta and on): the node-lost taint our
// controller puts on the node, with the lost rank's Pod marked Failed,
// makes the node unhealthy for the Workload; Kueue keeps the replacement
// gated meanwhile and finds the share a node elsewhere in the topology.
// One gate of the same family has to be off: kueueTASConfig says why.
const (
	// kueueBlockKey is the node label of the Topology's upper level.
	kueueBlockKey = "e2e.fastjobset.io/kueue-block"
	// kueueRequiredTopologyKey is the Pod template annotation that has
	// Kueue place the PodSet within one domain of a topology level.
	kueueRequiredTopologyKey = "kueue.x-k8s.io/podset-required-topology"
	// kueueTopologyGate is the scheduling gate Kueue puts on a TAS Pod and
	// takes off once it has chosen the Pod's node.
	kueueTopologyGate = "kueue.x-k8s.io/topology"
	// kueueTerminatedByKueue is the Pod condition Kueue writes on a Pod it
	// marks Failed, one ungated onto a node it cannot run on.
	kueueTerminatedByKueue = "TerminatedByKueue"
	// ballastImage is the local cluster's pause image, on every node.
	ballastImage = "localhost/jobset-cluster/pause:v1"
)

// kueueTASConfig turns Kueue's TASFailedNodeReplacementFailFast off (beta,
// on by default): with it, one second pass that finds no replacement for
// the lost node evicts the Workload, and a pass can run on a stale copy of
// the Workload. Kueue queues a second pass on every update of a Workload
// that holds an unhealthy node; the update that writes PodsReady False
// (waitForPodsReady is on by default), from the group restart our
// controller starts as it marks the lost rank's Pod Failed, can land
// between a pass that found the replacement and the write of its
// admission. The next pass reads the Workload as it was, its replacement
// already counted on the surviving node, finds no room, and evicts it:
// every rank recreated (seen here in one run of two). Off, such a pass
// only requeues.
const kueueTASConfig = "featureGates:\n  TASFailedNodeReplacementFailFast: false\n"

// A rank's worker asks for so much cpu that two ranks fit a node as the
// kubelet counts (2 cores each), while the ballast leaves the topology room
// for one rank a node when Kueue admits the JobSet; the ballast gone, the
// surviving node takes the replacement beside its own rank.
var (
	kueueTASWorkerCPU  = resource.MustParse("700m")
	kueueTASRoomForOne = resource.MustParse("1100m")
)

var _ = Describe("Kueue with topology-aware scheduling", Serial, Label("kueue", "local-cluster", "nodes"), func() {
	const systemNode = "jobset-node-1"
	BeforeEach(func(ctx context.Context) {
		installPeer(ctx, peers.Kueue, kueueGV.WithKind("Workload"), kueueGV.WithKind("ClusterQueue"),
			kueueGV.WithKind("ResourceFlavor"), kueueGV.WithKind("Topology"))
		// Kueue's manager places the replacement: on the node killed, it
		// would be lost with the rank.
		pinComponents(ctx, systemNode)
		if pinDeployment(ctx, client.ObjectKey{Namespace: peers.Kueue.Namespace, Name: peers.Kueue.Deployments[0]}, systemNode) {
			Expect(peers.Kueue.WaitServing(ctx, peerCluster())).To(Succeed())
		}
		configurePeer(ctx, peers.Kueue, kueueTASConfig)
	}, NodeTimeout(10*time.Minute))

	It("brings every rank of an admitted InPlaceRestart JobSet back when a node of its topology is killed, Kueue placing the replacement on a live node", func(ctx context.Context) {
		ns := agentNamespace(ctx)
		waitForNodesSettled(ctx)
		workers := workerNodes(ctx, systemNode)
		Expect(workers).To(HaveLen(2), "the spec needs two worker nodes beside %s", systemNode)
		q := kueueTASQueues(ctx, ns, "4", workers)

		By(fmt.Sprintf("ballast on %v: the topology has room for one rank a node, so Kueue spreads the two", workers))
		ballast := make([]corev1.Pod, 0, len(workers))
		for _, node := range workers {
			ballast = append(ballast, startBallast(ctx, ns, node))
		}
		r := startNodeScenario(ctx, ns, "kueue-tas-killed", systemNode, func(js *jobset.JobSet) {
			js.Labels = map[string]string{kueueQueueNameKey: q.localQueue}
			tmpl := &js.Spec.ReplicatedJobs[0].Template.Spec.Template
			if tmpl.Annotations == nil {
				tmpl.Annotations = map[string]string{}
			}
			tmpl.Annotations[kueueRequiredTopologyKey] = kueueBlockKey
			tmpl.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: kueueTASWorkerCPU}
		})
		wl := kueueAdmitted(ctx, r.js, q)
		By("Kueue placed each rank on a node of its own, through its gate and a node selector")
		for _, job := range kueueJobs(ctx, r.js) {
			Expect(job.Spec.Template.Spec.SchedulingGates).To(ContainElement(HaveField("Name", kueueTopologyGate)),
				"Kueue gates the Pods of Job %s, a replacement's too", job.Name)
		}
		placed := map[string]string{} // node by Pod
		for name := range r.before {
			p := getPod(ctx, ns, name)
			Expect(p.Spec.SchedulingGates).To(BeEmpty(), "Pod %s ungated", name)
			Expect(p.Spec.NodeSelector).To(HaveKeyWithValue(corev1.LabelHostname, p.Spec.NodeName), "Kueue chose the node of Pod %s", name)
			placed[name] = p.Spec.NodeName
		}
		survivor := r.otherRank(ctx).Spec.NodeName
		for _, b := range ballast {
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, &b, client.GracePeriodSeconds(0)))).To(Succeed())
		}
		for _, b := range ballast {
			Eventually(func() bool {
				return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(&b), &corev1.Pod{}))
			}).Should(BeTrue(), "ballast Pod %s is gone", b.Name)
		}

		faultAt := r.fault(ctx, "kill")
		Eventually(func() int32 { return syncedEpoch(ctx, r.js) }).WithTimeout(3*time.Minute).Should(BeNumerically(">", r.epoch),
			"the group syncs again")
		// Before expectRecovered, which would only find the survivor's Pod
		// new: say so if Kueue evicted the Workload meanwhile, recreating
		// every rank.
		if c := kueueCondition(Default, ctx, ns, wl, "Evicted"); c != nil {
			Expect(c.LastTransitionTime.Time).To(BeTemporally("<", faultAt),
				"Kueue evicted the Workload after the node was lost: %s %s: %s", c.Status, c.Reason, c.Message)
		}
		r.expectRecovered(ctx, faultAt)

		By(fmt.Sprintf("Kueue ungated the replacement onto %s, the node left in the block, and the JobSet stays admitted", survivor))
		after := waitForSyncedWorkers(ctx, r.js, 2)
		var replacement corev1.Pod
		for name := range after {
			if _, kept := r.before[name]; !kept {
				replacement = getPod(ctx, ns, name)
			}
		}
		Expect(replacement.Name).NotTo(BeEmpty(), "a replacement of Pod %s runs", r.victim.Name)
		Expect(replacement.Spec.SchedulingGates).To(BeEmpty())
		Expect(replacement.Spec.NodeSelector).To(HaveKeyWithValue(corev1.LabelHostname, survivor))
		Expect(replacement.Spec.NodeName).To(Equal(survivor))
		Expect(kueueCondition(Default, ctx, ns, wl, "Admitted")).To(HaveField("Status", metav1.ConditionTrue))
		Expect(kueueCondition(Default, ctx, ns, wl, "Evicted")).To(Or(BeNil(), HaveField("Status", metav1.ConditionFalse)),
			"losing a node does not evict the Workload")
		got := getJobSet(ctx, r.js)
		Expect(got.Status.TerminalState).To(BeEmpty())
		Expect(ptr.Deref(got.Spec.Suspend, false)).To(BeFalse())

		// Pods Kueue marked Failed had been ungated onto the lost node: each
		// would have cost the group one more restart.
		terminated := kueueTerminatedPods(ctx, r.js)
		unhealthy := kueueUnhealthyNodes(ctx, ns, wl)
		// A second pass that found no room (on a stale Workload, or with no
		// room left) says so in an event: kueueTASConfig.
		var events eventsv1.EventList
		Expect(k8sClient.List(ctx, &events, client.InNamespace(ns))).To(Succeed())
		secondPassFailed := 0
		for _, e := range events.Items {
			if e.Regarding.Name == wl && e.Reason == "SecondPassFailed" {
				secondPassFailed++
			}
		}
		AddReportEntry("kueue tas", fmt.Sprintf("kueue=tas-node-killed lost=%s replaced_on=%s placed=%v terminated_by_kueue=%d unhealthy_nodes=%v second_pass_failed=%d",
			r.node, survivor, placed, len(terminated), unhealthy, secondPassFailed))
		Expect(terminated).To(BeEmpty(), "Kueue ungated no replacement onto the lost node")
	})
})

// workerNodes names the nodes but the system node.
func workerNodes(ctx context.Context, systemNode string) []string {
	var nodes corev1.NodeList
	Expect(k8sClient.List(ctx, &nodes)).To(Succeed())
	var names []string
	for _, n := range nodes.Items {
		if n.Name != systemNode {
			names = append(names, n.Name)
		}
	}
	slices.Sort(names)
	return names
}

// kueueTASQueues sets up kueueQueuesOnFlavor's queues on a TAS flavor: a
// Topology of two levels, one block and the node, whose nodes are the
// named ones, labelled for it (and for the flavor) until the spec ends.
func kueueTASQueues(ctx context.Context, ns, cpu string, nodes []string) kueueQueueSet {
	kueueLabelNodes(ctx, map[string]string{kueueFlavorKey: ns, kueueBlockKey: "block-a"}, nodes...)
	kueueCreate(ctx, "Topology", "", ns, map[string]any{
		"levels": []any{
			map[string]any{"nodeLabel": kueueBlockKey},
			map[string]any{"nodeLabel": corev1.LabelHostname},
		},
	})
	return kueueQueuesOnFlavor(ctx, ns, cpu, map[string]any{
		"nodeLabels":   map[string]any{kueueFlavorKey: ns},
		"topologyName": ns,
	})
}

// startBallast runs on node a Pod that Kueue does not manage, asking for
// the node's allocatable cpu but kueueTASRoomForOne and what the Pods on it
// ask for already: TAS counts such a Pod against the node's capacity.
func startBallast(ctx context.Context, ns, node string) corev1.Pod {
	var n corev1.Node
	Expect(k8sClient.Get(ctx, client.ObjectKey{Name: node}, &n)).To(Succeed())
	free := n.Status.Allocatable.Cpu().DeepCopy()
	var pods corev1.PodList
	Expect(k8sClient.List(ctx, &pods, client.MatchingFields{"spec.nodeName": node})).To(Succeed())
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, c := range append(slices.Clone(p.Spec.InitContainers), p.Spec.Containers...) {
			free.Sub(*c.Resources.Requests.Cpu())
		}
	}
	free.Sub(kueueTASRoomForOne)
	Expect(free.Sign()).To(BeNumerically(">", 0), "node %s has room for the ballast", node)
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ballast-" + strings.TrimPrefix(node, "jobset-")},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{
				Name: "ballast", Image: ballastImage, ImagePullPolicy: corev1.PullNever,
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: free}},
			}},
		},
	}
	Expect(k8sClient.Create(ctx, &p)).To(Succeed())
	Eventually(func() corev1.PodPhase { return getPod(ctx, ns, p.Name).Status.Phase }).Should(Equal(corev1.PodRunning), "ballast Pod %s runs", p.Name)
	return p
}

// kueueTerminatedPods names the JobSet's Pods that Kueue marked Failed.
func kueueTerminatedPods(ctx context.Context, js *jobset.JobSet) []string {
	var pods corev1.PodList
	Expect(k8sClient.List(ctx, &pods, client.InNamespace(js.Namespace), client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
	var names []string
	for _, p := range pods.Items {
		if slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == kueueTerminatedByKueue }) {
			names = append(names, p.Name)
		}
	}
	return names
}

// kueueUnhealthyNodes names the nodes the Workload's status holds as
// failed, awaiting a replacement in its topology assignment.
func kueueUnhealthyNodes(ctx context.Context, ns, wl string) []string {
	nodes, _, err := unstructured.NestedSlice(kueueGetWorkload(Default, ctx, ns, wl).Object, "status", "unhealthyNodes")
	Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, n := range nodes {
		if m, ok := n.(map[string]any); ok {
			name, _ := m["name"].(string)
			names = append(names, name)
		}
	}
	return names
}
