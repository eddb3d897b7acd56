package pod_test

import (
	"context"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/keepoff"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

var _ = Describe("Replacement off a failing node", func() {
	ctx := context.Background()
	var ns string
	BeforeEach(func() { ns = framework.TestNamespace(ctx, k8sClient, "keep-off") })

	// create creates the Pod at index of Job trainer-workers-0, as the Job
	// controller does, through the webhook.
	create := func(index int) *corev1.Pod {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				GenerateName: "trainer-workers-0-" + strconv.Itoa(index) + "-",
				Namespace:    ns,
				Labels:       map[string]string{jobset.JobSetNameKey: "trainer", batchv1.JobNameLabel: "trainer-workers-0"},
				Annotations:  map[string]string{batchv1.JobCompletionIndexAnnotation: strconv.Itoa(index)},
			},
			Spec: corev1.PodSpec{NodeName: "gpu-" + strconv.Itoa(index), Containers: []corev1.Container{{Name: "worker", Image: "worker:test"}}},
		}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		return pod
	}
	// fail marks the Pod Failed, with the controller's mark when there is
	// one.
	fail := func(pod *corev1.Pod, mark *corev1.PodCondition) {
		pod.Status.Phase = corev1.PodFailed
		if mark != nil {
			pod.Status.Conditions = append(pod.Status.Conditions, *mark)
		}
		Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
	}
	// replacedOffNode: it failed in place again and again on its node.
	replacedOffNode := &corev1.PodCondition{Type: jobset.PodConditionReplacedOffNode, Status: corev1.ConditionTrue, Reason: "RepeatedFailures"}
	// nodeLost: its node stopped renewing its Lease.
	nodeLost := &corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: jobset.PodReasonNodeLost}
	keptOff := func(pod *corev1.Pod) []string {
		a := pod.Spec.Affinity
		if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
			return nil
		}
		var nodes []string
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range term.MatchFields {
				if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpNotIn {
					nodes = append(nodes, f.Values...)
				}
			}
		}
		return nodes
	}

	It("keeps the replacement off the node of a Pod replaced for failing there again and again, whatever the cache shows", func() {
		replaced := create(0)
		fail(replaced, replacedOffNode)
		// Created at once after the status write: the webhook's cache may
		// not show the predecessor Failed yet; it reads it from the API
		// server then.
		Expect(keptOff(create(0))).To(Equal([]string{"gpu-0"}))

		By("another index, and the replacement of a Pod that failed otherwise, go anywhere")
		Expect(keptOff(create(1))).To(BeEmpty())
		failed := create(2)
		fail(failed, nil)
		Expect(keptOff(create(2))).To(BeEmpty())
	})

	// The controller taints a lost node so that the replacement lands
	// elsewhere; where it may not taint nodes (its RBAC, an admission
	// policy), the webhook keeps the replacement off instead.
	It("keeps the replacement off the node of a Pod marked Failed because its node was lost", func() {
		lost := create(0)
		fail(lost, nodeLost)
		Expect(keptOff(create(0))).To(Equal([]string{"gpu-0"}))

		By("another's disruption is no mark: the replacement goes anywhere")
		evicted := create(1)
		fail(evicted, &corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"})
		Expect(keptOff(create(1))).To(BeEmpty())
	})
})

var _ = Describe("Replacement off a failing node under exclusive placement", func() {
	ctx := context.Background()
	var ns string
	BeforeEach(func() { ns = framework.TestNamespace(ctx, k8sClient, "keep-off-exclusive") })

	// jobPod is Pod index of the exclusively placed Job trainer-workers-0,
	// as the Job controller creates it.
	jobPod := func(index int) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				GenerateName: "trainer-workers-0-" + strconv.Itoa(index) + "-",
				Namespace:    ns,
				Labels: map[string]string{
					jobset.JobSetNameKey: "trainer", jobset.JobKey: "key-" + ns,
					batchv1.JobNameLabel: "trainer-workers-0", batchv1.JobCompletionIndexAnnotation: strconv.Itoa(index),
				},
				Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: strconv.Itoa(index), jobset.ExclusiveKey: rack},
			},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "worker:test"}}},
		}
	}
	nodeIn := func(domain string) string {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{GenerateName: ns + "-", Labels: map[string]string{rack: domain}}}
		Expect(k8sClient.Create(ctx, node)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, node))).To(Succeed()) })
		return node.Name
	}
	schedule := func(pod *corev1.Pod, node string) {
		binding := &corev1.Binding{Target: corev1.ObjectReference{Kind: "Node", Name: node}}
		Expect(k8sClient.SubResource("binding").Create(ctx, pod, binding)).To(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
	}
	admitFollower := func(index int) *corev1.Pod {
		follower := jobPod(index)
		Eventually(func() error { return k8sClient.Create(ctx, follower) }).Should(Succeed())
		return follower
	}
	// mark marks the Pod Failed for replacement off its node, as the
	// controller does, with the reason of the mark.
	mark := func(pod *corev1.Pod, reason string) {
		pod.Status.Phase = corev1.PodFailed
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
			Type: jobset.PodConditionReplacedOffNode, Status: corev1.ConditionTrue, Reason: reason})
		Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
	}
	keptOutOf := func(pod *corev1.Pod) []string {
		var domains []string
		for _, term := range pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, r := range term.MatchExpressions {
				if r.Key == rack && r.Operator == corev1.NodeSelectorOpNotIn {
					domains = append(domains, r.Values...)
				}
			}
		}
		return domains
	}

	// A follower that failed again and again on its node cannot leave it
	// alone: it is pinned to its leader's domain, here that one node. The
	// controller replaces its whole Job.
	It("moves the Job as a whole: the leader's replacement out of the node's domain, the followers after it, and no failed leader leads", func() {
		nodeA, nodeB := nodeIn("rack-a"), nodeIn("rack-b")
		leader := jobPod(0)
		Expect(k8sClient.Create(ctx, leader)).To(Succeed())
		schedule(leader, nodeA)
		follower := admitFollower(1)
		Expect(follower.Spec.NodeSelector).To(HaveKeyWithValue(rack, "rack-a"))
		schedule(follower, nodeA)

		By("the follower failed in place again and again on node A: it, then its leader with it, are marked")
		mark(follower, jobset.PodReasonRepeatedFailures)
		mark(leader, jobset.PodReasonReplacedWithItsJob)

		By("the leader's replacement is kept off node A and out of its domain, whatever the cache shows")
		newLeader := jobPod(0)
		Expect(k8sClient.Create(ctx, newLeader)).To(Succeed())
		Expect(keepoff.Nodes(newLeader)).To(Equal([]string{nodeA}))
		Expect(keptOutOf(newLeader)).To(Equal([]string{"rack-a"}))

		By("no follower is admitted while the leader is the failed one or its unscheduled replacement")
		err := k8sClient.Create(ctx, jobPod(1))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)

		By("the leader's replacement is scheduled in rack-b: the follower's replacement follows it there, kept off node A")
		schedule(newLeader, nodeB)
		newFollower := admitFollower(1)
		Expect(newFollower.Spec.NodeSelector).To(HaveKeyWithValue(rack, "rack-b"))
		Expect(keepoff.Nodes(newFollower)).To(Equal([]string{nodeA}))
		Expect(newFollower.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions).
			To(BeEmpty(), "only the leader is kept out of the domain: a follower is pinned to its leader's")
		Consistently(func() error {
			return k8sClient.Get(ctx, client.ObjectKeyFromObject(newFollower), &corev1.Pod{})
		}).Should(Succeed(), "the failed leader in rack-a has no follower deleted")
	})
})
