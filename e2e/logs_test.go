package e2e

import (
	"context"
	"io"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

var _ = Describe("Container logs", func() {
	var ns string
	BeforeEach(func(ctx context.Context) {
		ns = agentNamespace(ctx)
	})

	// `kubectl logs` asks the API server, which fetches the log from the
	// Pod's kubelet. What the user guide says about logs and in-place
	// restarts is checked here.
	It("serves the workers' logs through the API server, and after an in-place restart the new run's only", func(ctx context.Context) {
		js := example(ns, "story1-inplace.yaml")
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		before := waitForSyncedWorkers(ctx, js, 4)
		epoch := syncedEpoch(ctx, js)

		By("reading every worker's log")
		for name := range before {
			Eventually(func() (string, error) { return podLog(ctx, ns, name, "worker", false) }).
				Should(ContainSubstring("worker: running"), "Pod %s", name)
		}

		By("one worker exits with code 1 and the group restarts in place")
		victim := anyPod(before)
		exitWorker(ctx, ns, victim, 1)
		Eventually(func() int32 { return syncedEpoch(ctx, js) }).Should(Equal(epoch + 1))
		waitForSyncedWorkers(ctx, js, 4)

		By("the log is the new run's; the kubelet removed the failed run's containers, and their logs with them")
		for name := range before {
			Eventually(func() (string, error) { return podLog(ctx, ns, name, "worker", false) }).
				Should(ContainSubstring("worker: running"), "Pod %s runs again", name)
		}
		Expect(podLog(ctx, ns, victim, "worker", false)).NotTo(ContainSubstring("worker: exiting"))
		_, err := podLog(ctx, ns, victim, "worker", true)
		Expect(err).To(MatchError(ContainSubstring(`previous terminated container "worker"`)),
			"kubectl logs --previous after an in-place restart (docs/user-guide.md, Troubleshooting)")
	})
})

// podLog reads a container's log through the API server as `kubectl logs
// [--previous]` does, with a stream: its errors carry the API server's
// message, which DoRaw leaves in the body.
func podLog(ctx context.Context, ns, pod, container string, previous bool) (string, error) {
	stream, err := clientset.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container, Previous: previous}).Stream(ctx)
	if err != nil {
		return "", err
	}
	defer func() { _ = stream.Close() }()
	out, err := io.ReadAll(stream)
	return string(out), err
}
