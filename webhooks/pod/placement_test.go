package pod_test

import (
	"context"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/placementcontroller"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

const rack = "example.com/rack"

var _ = Describe("Exclusive placement", func() {
	ctx := context.Background()
	var ns string
	BeforeEach(func() { ns = framework.TestNamespace(ctx, k8sClient, "placement") })

	// jobPod is Pod index of Job trainer-workers-0, as the Job controller
	// creates it from the template the JobSet controller wrote.
	jobPod := func(index int, annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				GenerateName: "trainer-workers-0-" + strconv.Itoa(index) + "-",
				Namespace:    ns,
				Labels: map[string]string{
					jobset.JobSetNameKey:                 "trainer",
					jobset.JobKey:                        "key-" + ns,
					batchv1.JobNameLabel:                 "trainer-workers-0",
					batchv1.JobCompletionIndexAnnotation: strconv.Itoa(index),
				},
				Annotations: annotations,
			},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "worker:test"}}},
		}
	}
	exclusive := map[string]string{jobset.ExclusiveKey: rack}

	// nodeIn creates a node in the given rack and returns its name.
	nodeIn := func(domain string) string {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{GenerateName: ns + "-", Labels: map[string]string{rack: domain}}}
		Expect(k8sClient.Create(ctx, node)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, node))).To(Succeed()) })
		return node.Name
	}
	// schedule binds pod to node, as the scheduler does.
	schedule := func(pod *corev1.Pod, node string) {
		binding := &corev1.Binding{Target: corev1.ObjectReference{Kind: "Node", Name: node}}
		Expect(k8sClient.SubResource("binding").Create(ctx, pod, binding)).To(Succeed())
	}

	It("gives the leader a Pod affinity to its own Job and an anti-affinity to every other Job over the topology key", func() {
		leader := jobPod(0, exclusive)
		Expect(k8sClient.Create(ctx, leader)).To(Succeed())

		affinity := leader.Spec.Affinity
		Expect(affinity).NotTo(BeNil())
		Expect(affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution).To(ConsistOf(
			And(HaveField("TopologyKey", rack), HaveField("LabelSelector.MatchExpressions", ConsistOf(
				HaveField("Operator", metav1.LabelSelectorOpIn))))))
		Expect(affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution).To(ConsistOf(
			And(HaveField("TopologyKey", rack), HaveField("NamespaceSelector", Not(BeNil())))))
	})

	It("labels each Pod with its priority, as community JobSet does, and repels from a leader's domain only the Jobs of its own priority, which a higher priority can preempt", func() {
		leader := jobPod(0, exclusive)
		Expect(k8sClient.Create(ctx, leader)).To(Succeed())
		// The API server's Priority admission gives a Pod of no priority
		// class priority 0 before the webhooks see it.
		Expect(leader.Labels).To(HaveKeyWithValue(jobset.PriorityKey, "0"))
		Expect(leader.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution).To(ConsistOf(
			HaveField("LabelSelector.MatchExpressions", ContainElement(And(
				HaveField("Key", jobset.PriorityKey),
				HaveField("Operator", metav1.LabelSelectorOpIn),
				HaveField("Values", ConsistOf("0")))))))

		notExclusive := jobPod(1, nil)
		Expect(k8sClient.Create(ctx, notExclusive)).To(Succeed())
		Expect(notExclusive.Labels).To(HaveKeyWithValue(jobset.PriorityKey, "0"))
		nodeSelectorStrategy := jobPod(0, map[string]string{jobset.ExclusiveKey: rack, jobset.NodeSelectorStrategyKey: "true"})
		Expect(k8sClient.Create(ctx, nodeSelectorStrategy)).To(Succeed())
		Expect(nodeSelectorStrategy.Labels).NotTo(HaveKey(jobset.PriorityKey), "the node-selector strategy places by node labels alone")
	})

	It("refuses a follower while its leader does not exist, saying it waits for the leader", func() {
		err := k8sClient.Create(ctx, jobPod(1, exclusive))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("leader Pod of Job trainer-workers-0 (completion index 0) does not exist yet"))
	})

	It("refuses a follower while its leader is not scheduled", func() {
		Expect(k8sClient.Create(ctx, jobPod(0, exclusive))).To(Succeed())
		err := k8sClient.Create(ctx, jobPod(1, exclusive))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("is not scheduled yet"))
	})

	// admitFollower creates follower index, retrying as the Job controller
	// does: the webhook reads the leader from its cache, which follows the
	// binding shortly.
	admitFollower := func(index int) *corev1.Pod {
		follower := jobPod(index, exclusive)
		Eventually(func() error { return k8sClient.Create(ctx, follower) }).Should(Succeed())
		return follower
	}

	It("pins followers to the leader's domain once the leader is scheduled", func() {
		leader := jobPod(0, exclusive)
		Expect(k8sClient.Create(ctx, leader)).To(Succeed())
		schedule(leader, nodeIn("rack-a"))

		follower := admitFollower(1)
		Expect(follower.Spec.NodeSelector).To(HaveKeyWithValue(rack, "rack-a"))
		Expect(follower.Spec.Affinity).To(BeNil(), "only the leader carries affinities")
	})

	It("leaves Pods alone that do not ask for exclusive placement, or use the node-selector strategy", func() {
		for _, annotations := range []map[string]string{
			nil,
			{jobset.ExclusiveKey: rack, jobset.NodeSelectorStrategyKey: "true"},
		} {
			leader, follower := jobPod(0, annotations), jobPod(1, annotations)
			Expect(k8sClient.Create(ctx, leader)).To(Succeed())
			Expect(k8sClient.Create(ctx, follower)).To(Succeed(), "a follower needs no scheduled leader")
			Expect(leader.Spec.Affinity).To(BeNil())
			Expect(follower.Spec.NodeSelector).To(BeEmpty())
		}
	})

	It("deletes followers pinned to a domain their recreated leader no longer runs in", func() {
		leader := jobPod(0, exclusive)
		Expect(k8sClient.Create(ctx, leader)).To(Succeed())
		schedule(leader, nodeIn("rack-a"))
		follower := admitFollower(1)
		Expect(follower.Spec.NodeSelector).To(HaveKeyWithValue(rack, "rack-a"))
		Consistently(func() error {
			return k8sClient.Get(ctx, client.ObjectKeyFromObject(follower), &corev1.Pod{})
		}).Should(Succeed(), "a follower in its leader's domain stays")

		By("the leader is recreated and scheduled into rack-b")
		Expect(k8sClient.Delete(ctx, leader, client.GracePeriodSeconds(0))).To(Succeed())
		newLeader := jobPod(0, exclusive)
		Expect(k8sClient.Create(ctx, newLeader)).To(Succeed())
		schedule(newLeader, nodeIn("rack-b"))

		Eventually(func() bool {
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(follower), &corev1.Pod{})
			return apierrors.IsNotFound(err)
		}).Should(BeTrue(), "the follower pinned to rack-a is deleted, for the Job controller to recreate")
		Eventually(func() []eventsv1.Event {
			var events eventsv1.EventList
			Expect(k8sClient.List(ctx, &events, client.InNamespace(ns))).To(Succeed())
			return events.Items
		}).Should(ContainElement(And(
			HaveField("Reason", placementcontroller.ReasonFollowerMisplaced),
			HaveField("Regarding.Name", follower.Name),
		)))

		By("the Job controller's replacement is pinned to rack-b")
		replacement := admitFollower(1)
		Expect(replacement.Spec.NodeSelector).To(HaveKeyWithValue(rack, "rack-b"))
	})
})
