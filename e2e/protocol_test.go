package e2e

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// The epoch protocol against the real kubelet and Job controller, where
// they differ from the happy path: a deleted worker that exits 0, a Pod
// that fails after it joined a gather, a group restart no controller saw.
var _ = Describe("Group membership under faults", Serial, func() {
	var ns string
	BeforeEach(func(ctx context.Context) {
		ns = agentNamespace(ctx)
	})

	// Story 1's worker exits 0 on SIGTERM, as many trainers do after a
	// checkpoint, and its Jobs replace only Failed Pods: a deleted Pod that
	// ends Succeeded has its index counted complete and is never replaced.
	// With the controller running, the group restart that the deletion
	// starts often wins the race (the victim's agent restarts its Pod's
	// containers before the kubelet terminates it, and the Pod ends
	// Failed): either way, the index comes back and one unit is counted.
	It("brings back the index of a deleted running worker, counted once: never a smaller group", func(ctx context.Context) {
		js, before := runningStory1(ctx, ns)
		epoch := syncedEpoch(ctx, js)
		victim := anyPod(before)

		By("kubectl delete pod " + victim)
		start := time.Now()
		deletePod(ctx, ns, victim)
		Eventually(func() int32 { return syncedEpoch(ctx, js) }).Should(BeNumerically(">", epoch))
		after := waitForSyncedWorkers(ctx, js, 4)
		AddReportEntry("deleted worker", ReportEntryVisibilityAlways,
			map[string]any{"victim": victim, "four workers synced again after": time.Since(start).Round(100 * time.Millisecond).String()})
		Expect(after).NotTo(HaveKey(victim))
		got := getJobSet(ctx, js)
		Expect(got.Status.RestartsCountTowardsMax+got.Status.InPlaceRestarts).To(Equal(int32(1)), "one failure, counted once")
		expectGone(ctx, ns, victim)
	})

	// The same with no controller to start a group restart: the worker
	// exits 0, the Pod ends Succeeded and its Job counts the index
	// complete. The group-member finalizer keeps the Pod until the
	// controller, back, has answered with a full restart.
	It("restarts fully, counted once, when a running worker is deleted and exits 0 while the controller is down", func(ctx context.Context) {
		js, before := runningStory1(ctx, ns)
		victim := anyPod(before)

		replicas := scaleController(ctx, 0)
		DeferCleanup(scaleController, replicas)
		By("kubectl delete pod " + victim + ": its worker exits 0")
		deletePod(ctx, ns, victim)
		Eventually(func(g Gomega) {
			pod := &corev1.Pod{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: victim}, pod)).To(Succeed(), "the finalizer holds the Pod")
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodSucceeded))
			job := &batchv1.Job{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: pod.Labels[batchv1.JobNameLabel]}, job)).To(Succeed())
			g.Expect(job.Status.CompletedIndexes).To(Equal(pod.Annotations[batchv1.JobCompletionIndexAnnotation]),
				"the Job counts the deleted Pod's index complete")
		}).Should(Succeed())

		By("the controller comes back and restarts fully")
		scaleController(ctx, replicas)
		Eventually(func() int32 { return getJobSet(ctx, js).Status.Restarts }).Should(Equal(int32(1)))
		after := waitForSyncedWorkers(ctx, js, 4)
		for name := range after {
			Expect(before).NotTo(HaveKey(name), "a full restart recreates every Pod")
		}
		got := getJobSet(ctx, js)
		Expect([]int32{got.Status.RestartsCountTowardsMax, got.Status.InPlaceRestarts}).To(Equal([]int32{1, 0}),
			"[restartsCountTowardsMax, inPlaceRestarts]: one failure, counted once")
		expectGone(ctx, ns, victim)
	})

	// A Pod that joined the new epoch and then failed (an eviction, a
	// deadline) before the group synced: its replacement was the member.
	// The cordoned node holds the replacements Pending so that the failure
	// falls inside the gather.
	It("does not restart again for a Pod that joined the gather and then failed", func(ctx context.Context) {
		js, before := runningStory1(ctx, ns)
		epoch := syncedEpoch(ctx, js)
		names := sortedNames(before)
		first, second := names[0], names[1]

		cordon(ctx, true)
		DeferCleanup(cordon, false)

		By("the kubelet fails " + first + " (activeDeadlineSeconds): a group restart; its replacement stays Pending")
		failByDeadline(ctx, ns, first)
		Eventually(func() int32 { return ptr.Deref(getJobSet(ctx, js).Status.DeprecatedEpoch, 0) }).Should(Equal(epoch))

		By(second + " joins the next epoch, then the kubelet fails it too")
		Eventually(func() string { return podEpoch(ctx, ns, second) }).Should(Equal(itoa(epoch + 1)))
		failByDeadline(ctx, ns, second)

		By("the replacements schedule and the group syncs once")
		cordon(ctx, false)
		Eventually(func() int32 { return syncedEpoch(ctx, js) }).Should(Equal(epoch + 1))
		waitForSyncedWorkers(ctx, js, 4)
		Consistently(func() int32 { return getJobSet(ctx, js).Status.InPlaceRestarts }, 10*time.Second, time.Second).
			Should(Equal(int32(1)), "the failed Pod at the synced epoch is old news: no second group restart")
		Expect(syncedEpoch(ctx, js)).To(Equal(epoch + 1))
	})

	// Every rank crashes at once (the NCCL pattern) while no controller
	// runs: every Pod restarts in place and rejoins before any reconcile
	// sees a failure, and the restart-all leaves no exit code behind.
	It("counts a group restart that happened while the controller was down", func(ctx context.Context) {
		js, before := runningStory1(ctx, ns)
		epoch := syncedEpoch(ctx, js)

		replicas := scaleController(ctx, 0)
		DeferCleanup(scaleController, replicas)

		By("every worker exits 1")
		for name := range before {
			exitWorker(ctx, ns, name, 1)
		}
		for name := range before {
			Eventually(func() string { return podEpoch(ctx, ns, name) }).Should(Equal(itoa(epoch+1)), "Pod %s rejoins", name)
		}

		By("the controller comes back")
		scaleController(ctx, replicas)
		Eventually(func() int32 { return syncedEpoch(ctx, js) }).Should(Equal(epoch + 1))
		after := waitForSyncedWorkers(ctx, js, 4)
		for name, b := range before {
			Expect(after).To(HaveKey(name), "Pod %s restarts in place", name)
			Expect(after[name].uid).To(Equal(b.uid), "Pod %s restarts in place", name)
		}
		Expect(getJobSet(ctx, js).Status.InPlaceRestarts).To(Equal(int32(1)), "the group restart nobody saw start counts once")
	})
})

// runningStory1 creates seed story 1 in ns and waits until its four
// workers run in sync.
func runningStory1(ctx context.Context, ns string) (*jobset.JobSet, map[string]podState) {
	js := example(ns, "story1-inplace.yaml")
	Expect(k8sClient.Create(ctx, js)).To(Succeed())
	return js, waitForSyncedWorkers(ctx, js, 4)
}

func sortedNames(states map[string]podState) []string {
	return slices.Sorted(maps.Keys(states))
}

func itoa(epoch int32) string { return strconv.Itoa(int(epoch)) }

func deletePod(ctx context.Context, ns, name string) {
	Expect(k8sClient.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
}

// expectGone waits until the Pod is gone: the controller released its
// group-member finalizer.
func expectGone(ctx context.Context, ns, name string) {
	Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Pod{}))
	}).Should(BeTrue(), "Pod %s goes once the controller released it", name)
}

// podEpoch reads the epoch annotation the Pod's agent wrote.
func podEpoch(ctx context.Context, ns, name string) string {
	pod := &corev1.Pod{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
		return ""
	}
	return pod.Annotations[jobset.EpochKey]
}

// failByDeadline lowers a running Pod's activeDeadlineSeconds (it may only
// go down), so that the kubelet fails the Pod, keeping its object: what an
// eviction or a graceful node shutdown does too.
func failByDeadline(ctx context.Context, ns, name string) {
	pod := &corev1.Pod{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod)).To(Succeed())
	patch := client.MergeFrom(pod.DeepCopy())
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](1)
	Expect(k8sClient.Patch(ctx, pod, patch)).To(Succeed())
	Eventually(func() corev1.PodPhase {
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		return pod.Status.Phase
	}).Should(Equal(corev1.PodFailed))
}

// cordon marks every node (un)schedulable, as kubectl cordon does: Pods
// that run keep running, new ones stay Pending.
func cordon(ctx context.Context, unschedulable bool) {
	var nodes corev1.NodeList
	Expect(k8sClient.List(ctx, &nodes)).To(Succeed())
	for i := range nodes.Items {
		node := &nodes.Items[i]
		patch := client.MergeFrom(node.DeepCopy())
		node.Spec.Unschedulable = unschedulable
		Expect(k8sClient.Patch(ctx, node, patch)).To(Succeed())
	}
}

// scaleController sets the controller Deployment's replicas, waits until
// exactly that many controller Pods exist, and returns the replicas it had.
func scaleController(ctx context.Context, replicas int32) int32 {
	d := &appsv1.Deployment{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "jobset-system", Name: "jobset-controller"}, d)).To(Succeed())
	was := ptr.Deref(d.Spec.Replicas, 1)
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To(replicas)
	Expect(k8sClient.Patch(ctx, d, patch)).To(Succeed())
	Eventually(func(g Gomega) {
		var pods corev1.PodList
		g.Expect(k8sClient.List(ctx, &pods, client.InNamespace("jobset-system"),
			client.MatchingLabels(d.Spec.Selector.MatchLabels))).To(Succeed())
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				running++
			}
		}
		g.Expect(pods.Items).To(HaveLen(int(replicas)), "controller Pods, gone ones included")
		g.Expect(running).To(Equal(int(replicas)))
	}).WithTimeout(2 * time.Minute).Should(Succeed())
	return was
}
