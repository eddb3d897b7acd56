package pod_test

import (
	"context"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
