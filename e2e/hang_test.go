package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// Story 1's worker, under the injected wrapper, reports progress every half
// second until told to hang; then it runs on without progress, as a worker
// in a deadlocked collective does.
var _ = Describe("Hung worker", Label("local-cluster"), func() {
	It("restarts its group in place in the process tier once it stops reporting progress, with the reason Hang", func(ctx context.Context) {
		localPlane()
		ns := agentNamespace(ctx)
		const timeout = 5 * time.Second
		js := example(ns, "story1-injected.yaml")
		if js.Annotations == nil {
			js.Annotations = map[string]string{}
		}
		js.Annotations[agentspec.FirstProgressTimeoutAnnotation] = "2m"
		js.Annotations[agentspec.ProgressTimeoutAnnotation] = timeout.String()
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		before := waitForSyncedWorkers(ctx, js, 4)
		epoch := syncedEpoch(ctx, js)

		victim := anyPod(before)
		DeferCleanup(func(ctx context.Context) {
			if CurrentSpecReport().Failed() {
				dumpLogs(ctx, ns, victim, agentspec.ContainerName, "worker")
			}
		})
		hung := time.Now()
		workerControl(ctx, ns, victim, "/hang", nil)
		By("past its timeout, the victim's agent stops its worker and the group re-syncs at the next epoch, in place")
		Eventually(func() int32 { return syncedEpoch(ctx, js) }, timeout+30*time.Second, 100*time.Millisecond).Should(Equal(epoch + 1))
		synced := time.Since(hung)
		AddReportEntry("hung worker", ReportEntryVisibilityAlways,
			fmt.Sprintf("hang_to_resynced_s=%.2f progress_timeout_s=%.0f", synced.Seconds(), timeout.Seconds()))
		Expect(getPod(ctx, ns, victim).Annotations).To(HaveKeyWithValue(agentspec.HungAnnotation, agentspec.FormatEpoch(epoch)))
		after := waitForSyncedWorkers(ctx, js, 4)
		for name, b := range before {
			a, ok := after[name]
			Expect(ok).To(BeTrue(), "Pod %s was replaced", name)
			Expect(a.uid).To(Equal(b.uid), "Pod %s was recreated", name)
			Expect(a.restarts).To(Equal(b.restarts), "Pod %s: restartCounts (the process tier restarts no container)", name)
		}

		By("the restart is counted as any failure, and its event and condition say Hang")
		got := getJobSet(ctx, js)
		Expect(got.Status.InPlaceRestarts).To(Equal(int32(1)))
		Eventually(func() []string {
			events, err := clientset.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
			Expect(err).NotTo(HaveOccurred())
			var reasons []string
			for _, e := range events.Items {
				if e.InvolvedObject.Name == js.Name {
					reasons = append(reasons, e.Reason+": "+e.Message)
				}
			}
			return reasons
		}).Should(ContainElement(And(HavePrefix(jobset.ReasonHang+": "), ContainSubstring(victim))))
		Expect(containerLog(ctx, ns, victim, agentspec.ContainerName)).To(ContainSubstring("The worker is hung"))
	})
})
