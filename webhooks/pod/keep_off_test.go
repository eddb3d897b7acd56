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
	// fail marks the Pod Failed, as the controller does; replaced says it
	// failed in place again and again on its node.
	fail := func(pod *corev1.Pod, replaced bool) {
		pod.Status.Phase = corev1.PodFailed
		if replaced {
			pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
				Type: jobset.PodConditionReplacedOffNode, Status: corev1.ConditionTrue, Reason: "RepeatedFailures"})
		}
		Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
	}
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
		fail(replaced, true)
		// Created at once after the status write: the webhook's cache may
		// not show the predecessor Failed yet; it reads it from the API
		// server then.
		Expect(keptOff(create(0))).To(Equal([]string{"gpu-0"}))

		By("another index, and the replacement of a Pod that failed otherwise, go anywhere")
		Expect(keptOff(create(1))).To(BeEmpty())
		failed := create(2)
		fail(failed, false)
		Expect(keptOff(create(2))).To(BeEmpty())
	})
})
