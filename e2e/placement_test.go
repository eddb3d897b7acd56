package e2e

import (
	"context"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// rackKey is the topology label the exclusive placement spec puts on every
// node (one domain per node) and takes off again.
const rackKey = "e2e.fastjobset.io/rack"

var _ = Describe("Exclusive placement", func() {
	var ns string
	BeforeEach(func(ctx context.Context) { ns = testNamespace(ctx) })

	It("runs one Job per topology domain, its followers with the leader, and the next Job once the domain is free", func(ctx context.Context) {
		domains := labelNodes(ctx)

		// One Job more than there are domains: it must wait.
		rj := workerReplicatedJob("workers").Replicas(int32(len(domains)) + 1).Pods(2).Obj()
		js := wrappers.MakeJobSet("exclusive", ns).ReplicatedJob(rj).
			Annotations(map[string]string{jobset.ExclusiveKey: rackKey}).Obj()
		Expect(k8sClient.Create(ctx, js)).To(Succeed())

		By("every domain runs both Pods of exactly one Job; the Job left over has its leader unschedulable and no followers")
		var placed []string
		var waiting string
		Eventually(func(g Gomega) {
			jobs := podsByJob(ctx, g, js)
			g.Expect(jobs).To(HaveLen(len(domains) + 1))
			placed, waiting = nil, ""
			used := map[string]string{}
			for job, pods := range jobs {
				leader, ok := pods[0]
				g.Expect(ok).To(BeTrue(), "Job %s has its leader", job)
				if leader.Spec.NodeName == "" {
					g.Expect(waiting).To(BeEmpty(), "one Job waits: %s and %s", waiting, job)
					g.Expect(leader.Status.Conditions).To(ContainElement(And(
						HaveField("Type", corev1.PodScheduled), HaveField("Status", corev1.ConditionFalse),
						HaveField("Reason", corev1.PodReasonUnschedulable))), "Job %s's leader", job)
					g.Expect(pods).To(HaveLen(1), "Job %s: followers wait for their leader", job)
					waiting = job
					continue
				}
				domain := domains[leader.Spec.NodeName]
				g.Expect(used).NotTo(HaveKey(domain), "Jobs %s and %s share domain %s", used[domain], job, domain)
				used[domain] = job
				g.Expect(pods).To(HaveLen(2), "Job %s", job)
				for _, p := range pods {
					g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "Pod %s", p.Name)
					g.Expect(domains[p.Spec.NodeName]).To(Equal(domain), "Pod %s runs with its leader", p.Name)
				}
				g.Expect(pods[1].Spec.NodeSelector).To(HaveKeyWithValue(rackKey, domain), "the follower is pinned to its leader's domain")
				placed = append(placed, job)
			}
			g.Expect(waiting).NotTo(BeEmpty())
		}).Should(Succeed())

		By("the placed Jobs complete, and the waiting Job takes a free domain")
		for _, job := range placed {
			for _, p := range podsByJob(ctx, Default, js)[job] {
				exitWorker(ctx, ns, p.Name, 0)
			}
		}
		Eventually(func(g Gomega) {
			pods := podsByJob(ctx, g, js)[waiting]
			g.Expect(pods).To(HaveLen(2))
			leaderNode := pods[0].Spec.NodeName
			for _, p := range pods {
				g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "Pod %s", p.Name)
				g.Expect(domains[p.Spec.NodeName]).To(Equal(domains[leaderNode]), "Pod %s runs with its leader", p.Name)
			}
		}).Should(Succeed())
		for _, p := range podsByJob(ctx, Default, js)[waiting] {
			exitWorker(ctx, ns, p.Name, 0)
		}
		Eventually(func() string { return getJobSet(ctx, js).Status.TerminalState }).Should(Equal(string(jobset.JobSetCompleted)))
	})
})

// labelNodes puts every node in a domain of its own under rackKey, for the
// spec's duration, and returns the domain of each node by name.
func labelNodes(ctx context.Context) map[string]string {
	var nodes corev1.NodeList
	Expect(k8sClient.List(ctx, &nodes)).To(Succeed())
	Expect(nodes.Items).NotTo(BeEmpty())
	domains := map[string]string{}
	for i := range nodes.Items {
		node := &nodes.Items[i]
		domain := "rack-" + strconv.Itoa(i)
		patch := client.MergeFrom(node.DeepCopy())
		node.Labels[rackKey] = domain
		Expect(k8sClient.Patch(ctx, node, patch)).To(Succeed())
		domains[node.Name] = domain
		DeferCleanup(func(ctx context.Context) {
			var n corev1.Node
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(node), &n)).To(Succeed())
			patch := client.MergeFrom(n.DeepCopy())
			delete(n.Labels, rackKey)
			Expect(k8sClient.Patch(ctx, &n, patch)).To(Succeed())
		})
	}
	return domains
}

// podsByJob returns js's live Pods, by Job name and completion index.
func podsByJob(ctx context.Context, g Gomega, js *jobset.JobSet) map[string]map[int]corev1.Pod {
	var pods corev1.PodList
	g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(js.Namespace),
		client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
	jobs := map[string]map[int]corev1.Pod{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		index, err := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
		g.Expect(err).NotTo(HaveOccurred(), "Pod %s's completion index", p.Name)
		job := p.Labels[batchv1.JobNameLabel]
		if jobs[job] == nil {
			jobs[job] = map[int]corev1.Pod{}
		}
		jobs[job][index] = p
	}
	return jobs
}
