package e2e

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/images/manifest"
)

// On a real kubelet: with agent injection the
// worker holds no credentials, and the injected agent keeps a Guaranteed
// Pod Guaranteed and passes the restricted Pod Security Standard.
var _ = Describe("Security of injected agents", func() {
	var ns string
	BeforeEach(func(ctx context.Context) {
		ns = testNamespace(ctx)
	})

	It("leaves the worker container no token: it finds no credentials to touch a neighbour with", func(ctx context.Context) {
		Expect(manifest.Apply(ctx, k8sClient, agentRBAC, ns)).To(Succeed())
		js := example(ns, "story1-injected.yaml")
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		pods := waitForSyncedWorkers(ctx, js, 4)

		for name := range pods {
			workerStarts(ctx, ns, name) // it serves
			out, err := clientset.CoreV1().Pods(ns).ProxyGet("http", name, "8081", "/secrets", nil).DoRaw(ctx)
			Expect(err).NotTo(HaveOccurred(), "%s: %s", name, out)
			Expect(strings.TrimSpace(string(out))).To(BeEmpty(), "Pod %s: the worker container sees credentials", name)

			var pod corev1.Pod
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &pod)).To(Succeed())
			Expect(pod.Spec.AutomountServiceAccountToken).To(Equal(ptr.To(false)))
			for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
				for _, m := range c.VolumeMounts {
					if strings.HasPrefix(m.MountPath, "/var/run/secrets") {
						Expect(c.Name).To(Equal(agentspec.ContainerName), "Pod %s: container %s mounts %s", name, c.Name, m.MountPath)
					}
				}
			}
		}
	})

	It("keeps a Guaranteed Pod Guaranteed and restarts the group in place in a namespace that enforces restricted", func(ctx context.Context) {
		var namespace corev1.Namespace
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: ns}, &namespace)).To(Succeed())
		namespace.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
		Expect(k8sClient.Update(ctx, &namespace)).To(Succeed())
		Expect(manifest.Apply(ctx, k8sClient, agentRBAC, ns)).To(Succeed())

		js := podTier(example(ns, "story1-injected.yaml"))
		worker := &js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0]
		worker.SecurityContext = &corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}
		guaranteed := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
		worker.Resources = corev1.ResourceRequirements{Requests: guaranteed, Limits: guaranteed}

		expectInPlaceGroupRestart(ctx, js)

		var pods corev1.PodList
		Expect(k8sClient.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
		Expect(pods.Items).To(HaveLen(4))
		for _, p := range pods.Items {
			Expect(p.Status.QOSClass).To(Equal(corev1.PodQOSGuaranteed), "Pod %s", p.Name)
		}
	})
})
