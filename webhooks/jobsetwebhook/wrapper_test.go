package jobsetwebhook_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// The worker wrapper, put in place by agent injection where the worker
// names its command.
var _ = Describe("Worker wrapper injection", func() {
	var ns string
	BeforeEach(func(ctx context.Context) {
		ns = framework.TestNamespace(ctx, k8sClient, "wrapper")
		warnings.take()
	})

	injected := func(name string, annotations map[string]string, worker func(*corev1.Container)) *jobset.JobSet {
		rj := wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(2).Obj()
		worker(&rj.Template.Spec.Template.Spec.Containers[0])
		return wrappers.MakeJobSet(name, ns).RestartStrategy(jobset.InPlaceRestart).
			Annotations(annotations).ReplicatedJob(rj).Obj()
	}
	withCommand := func(c *corev1.Container) {
		c.Command = []string{"/train", "-config=$(CONFIG)"}
		c.Args = []string{"--epochs", "3"}
	}
	podOf := func(ctx context.Context, js *jobset.JobSet) corev1.PodSpec {
		got := &jobset.JobSet{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), got)).To(Succeed())
		return got.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
	}

	It("runs a worker that names its command under the wrapper, which an init container of the agent's image installs ahead of the agent", func(ctx context.Context) {
		js := injected("wrapped", map[string]string{jobset.InjectAgentKey: "true"}, withCommand)
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		Expect(warnings.take()).To(BeEmpty())

		pod := podOf(ctx, js)
		Expect(pod.InitContainers).To(HaveLen(2))
		installer, agent := pod.InitContainers[0], pod.InitContainers[1]
		Expect(installer.Name).To(Equal(agentspec.WrapperInstallerName))
		Expect(installer.Image).To(Equal("jobset-agent:test"))
		Expect(installer.Command).To(Equal([]string{"/jobset-wrapper", "-install=/var/run/jobset-wrapper/jobset-wrapper"}))
		Expect(installer.RestartPolicy).To(BeNil(), "the installer runs once, before the agent")
		Expect(installer.VolumeMounts).To(ConsistOf(HaveField("MountPath", "/var/run/jobset-wrapper")))
		Expect(agent.Name).To(Equal(agentspec.ContainerName))
		Expect(agent.Env).To(ContainElement(corev1.EnvVar{Name: "JOBSET_WRAPPER_CONTROL", Value: "/var/run/jobset-wrapper/control.sock"}))
		Expect(agent.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: agentspec.WrapperVolumeName, MountPath: "/var/run/jobset-wrapper", ReadOnly: true}))

		// Kubernetes runs command followed by args: the wrapper gets the
		// worker's command and then its args, $(VAR) expanded as before.
		worker := pod.Containers[0]
		Expect(worker.Command).To(Equal([]string{"/var/run/jobset-wrapper/jobset-wrapper", "-control=/var/run/jobset-wrapper/control.sock", "--", "/train", "-config=$(CONFIG)"}))
		Expect(worker.Args).To(Equal([]string{"--epochs", "3"}))
		Expect(worker.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: agentspec.WrapperVolumeName, MountPath: "/var/run/jobset-wrapper"}))
		Expect(pod.Volumes).To(ContainElement(And(HaveField("Name", agentspec.WrapperVolumeName), HaveField("EmptyDir", Not(BeNil())))))
	})

	It("adds nothing to a Pod that restricted Pod Security would refuse: the installer passes it as the agent does", func(ctx context.Context) {
		js := injected("restricted", map[string]string{jobset.InjectAgentKey: "true"}, withCommand)
		Expect(k8sClient.Create(ctx, js)).To(Succeed())

		namespace := &corev1.Namespace{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: ns}, namespace)).To(Succeed())
		namespace.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
		Expect(k8sClient.Update(ctx, namespace)).To(Succeed())
		spec := podOf(ctx, js)
		spec.Containers[0].SecurityContext = &corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}
		Expect(k8sClient.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "worker", Namespace: ns}, Spec: spec})).To(Succeed())
	})

	It("wraps once: an update, which the mutating webhook sees again, leaves the wrapped template as it is", func(ctx context.Context) {
		js := injected("once", map[string]string{jobset.InjectAgentKey: "true"}, withCommand)
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		before := podOf(ctx, js)

		got := &jobset.JobSet{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), got)).To(Succeed())
		patch := client.MergeFrom(got.DeepCopy())
		got.Labels = map[string]string{"touched": "yes"}
		Expect(k8sClient.Patch(ctx, got, patch)).To(Succeed())
		Expect(podOf(ctx, js)).To(Equal(before))
		Expect(before.InitContainers).To(HaveLen(2))
		Expect(before.Containers[0].Command).To(HaveLen(5))
	})

	It("wraps no worker without a command, and warns naming the fix", func(ctx context.Context) {
		js := injected("no-command", map[string]string{jobset.InjectAgentKey: "true"}, func(*corev1.Container) {})
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		Expect(warnings.take()).To(ConsistOf(And(
			ContainSubstring("spec.replicatedJobs[0].template.spec.template.spec.containers"),
			ContainSubstring(`container "worker" sets no command`),
			ContainSubstring("set command"),
			ContainSubstring(jobset.WorkerWrapperKey))))
		pod := podOf(ctx, js)
		Expect(pod.InitContainers).To(ConsistOf(HaveField("Name", agentspec.ContainerName)))
		Expect(pod.Containers[0].Command).To(BeEmpty())
		Expect(pod.InitContainers[0].Env).NotTo(ContainElement(HaveField("Name", "JOBSET_WRAPPER_CONTROL")))
	})

	It("wraps no worker of a Pod with several containers, and says why", func(ctx context.Context) {
		js := injected("two", map[string]string{jobset.InjectAgentKey: "true"}, withCommand)
		pod := &js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
		pod.Containers = append(pod.Containers, corev1.Container{Name: "helper", Image: "registry.k8s.io/pause:3.10", Command: []string{"/pause"}})
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		Expect(warnings.take()).To(ConsistOf(ContainSubstring("the Pod has 2 containers")))
		Expect(podOf(ctx, js).InitContainers).To(ConsistOf(HaveField("Name", agentspec.ContainerName)))
	})

	DescribeTable("keeps the Pod tier, without a warning, where the JobSet or the Pod template opts out",
		func(ctx context.Context, onJobSet bool) {
			annotations := map[string]string{jobset.InjectAgentKey: "true"}
			if onJobSet {
				annotations[jobset.WorkerWrapperKey] = "false"
			}
			js := injected("opted-out", annotations, withCommand)
			if !onJobSet {
				js.Spec.ReplicatedJobs[0].Template.Spec.Template.Annotations = map[string]string{jobset.WorkerWrapperKey: "false"}
			}
			Expect(k8sClient.Create(ctx, js)).To(Succeed())
			Expect(warnings.take()).To(BeEmpty())
			pod := podOf(ctx, js)
			Expect(pod.InitContainers).To(ConsistOf(HaveField("Name", agentspec.ContainerName)))
			Expect(pod.Containers[0].Command).To(Equal([]string{"/train", "-config=$(CONFIG)"}))
			Expect(pod.Volumes).NotTo(ContainElement(HaveField("Name", agentspec.WrapperVolumeName)))
		},
		Entry("on the JobSet", true),
		Entry("on the Pod template", false),
	)
})
