package e2e

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// The kubelet stops a container alone when its liveness probe fails or an
// in-place resize restarts it; the agent then exits 0 (SIGTERM). Stopping
// it through the node's containerd is the same from the kubelet's side.
var _ = Describe("Agent stopped alone", Label("local-cluster"), func() {
	var ns string
	BeforeEach(func(ctx context.Context) {
		ns = agentNamespace(ctx)
	})

	It("takes its worker with it when SIGTERM stops only the agent, and the group re-syncs once", func(ctx context.Context) {
		plane := localPlane()
		js, before := runningStory1(ctx, ns)
		epoch := syncedEpoch(ctx, js)
		restarts := getJobSet(ctx, js).Status.InPlaceRestarts

		victim := anyPod(before)
		var pod corev1.Pod
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: victim}, &pod)).To(Succeed())
		id := containerID(pod, agentspec.ContainerName)

		By("SIGTERM to the agent container of " + victim + " alone, through the node's containerd")
		start := time.Now()
		plane.ctr(ctx, pod.Spec.NodeName, "tasks", "kill", "--signal", "SIGTERM", id)

		Eventually(func() int32 { return syncedEpoch(ctx, js) }).Should(Equal(epoch + 1))
		resynced := time.Since(start)
		after := waitForSyncedWorkers(ctx, js, 4)
		AddReportEntry("agent SIGTERM", ReportEntryVisibilityAlways,
			map[string]any{
				"victim":                 victim,
				"worker restarts before": before[victim].restarts["worker"],
				"worker restarts after":  after[victim].restarts["worker"],
				"re-synced after":        resynced.Round(100 * time.Millisecond).String(),
			})

		Expect(after).To(HaveKey(victim))
		Expect(after[victim].uid).To(Equal(before[victim].uid), "the Pod restarts in place")
		Expect(after[victim].restarts["worker"]).To(BeNumerically(">", before[victim].restarts["worker"]),
			"the worker of the Pod whose agent stopped must restart with it, not run on from before the group restart")
		for name, b := range before {
			Expect(after).To(HaveKey(name), "Pod %s restarts in place", name)
			Expect(after[name].uid).To(Equal(b.uid), "Pod %s restarts in place", name)
			Expect(after[name].restarts["worker"]).To(Equal(b.restarts["worker"]+1), "Pod %s: one group restart", name)
		}
		Expect(getJobSet(ctx, js).Status.InPlaceRestarts).To(Equal(restarts+1), "one group restart, counted once")
	})
})

// containerID is the runtime's ID of the Pod's container name.
func containerID(pod corev1.Pod, name string) string {
	for _, cs := range append(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses...) {
		if cs.Name == name {
			_, id, ok := strings.Cut(cs.ContainerID, "://")
			Expect(ok).To(BeTrue(), "container %s of Pod %s: ID %q", name, pod.Name, cs.ContainerID)
			return id
		}
	}
	Fail("Pod " + pod.Name + " has no container " + name)
	return ""
}
