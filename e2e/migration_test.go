package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/peers"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// Drop-in migration: community JobSet v0.12.0 and ours serve the same API
// group, so one replaces the other on a cluster (peers.SwitchJobSet: the
// controllers, webhooks and RBAC are swapped, the CRD replaced, every
// JobSet, Job and Pod kept). JobSets running under one keep running under
// the other.
var _ = Describe("Drop-in migration", Serial, Label("migration"), func() {
	var ns string
	var ours, community *peers.Manifests
	// useCommunity and useOurs replace one with the other.
	useCommunity := func(ctx context.Context) { switchJobSet(ctx, "install-community", ours, community) }
	useOurs := func(ctx context.Context) { switchJobSet(ctx, "install-ours", community, ours) }
	BeforeEach(func(ctx context.Context) {
		community = loadPeer(peers.CommunityJobSet)
		ours = ourJobSet()
		ns = agentNamespace(ctx)
	})

	It("keeps the JobSets of community JobSet running when ours replaces it", func(ctx context.Context) {
		useCommunity(ctx)
		DeferCleanup(useOurs)
		m := startMigrationScenario(ctx, ns)
		m.midRecreate(ctx)
		By("ours replaces community JobSet")
		useOurs(ctx)
		m.expectKept(ctx)
	})

	It("keeps our JobSets running on a rollback to community JobSet", func(ctx context.Context) {
		m := startMigrationScenario(ctx, ns)
		inPlace := example(ns, "story1-inplace.yaml")
		Expect(k8sClient.Create(ctx, inPlace)).To(Succeed())
		inPlacePods := waitForSyncedWorkers(ctx, inPlace, 4)
		expectHeld(ctx, ns, inPlacePods)
		m.midRecreate(ctx)
		By("community JobSet replaces ours, once ours let go of the Pods it held")
		useCommunity(ctx)
		DeferCleanup(useOurs)
		m.expectKept(ctx)

		By("a Pod of the in-place JobSet deleted after the rollback goes: nothing holds it")
		deleted := anyPod(inPlacePods)
		Expect(k8sClient.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: deleted}})).To(Succeed())
		Eventually(func() bool {
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: deleted}, &corev1.Pod{})
			return apierrors.IsNotFound(err)
		}, 2*time.Minute).Should(BeTrue(), "Pod %s is deleted, not left Terminating", deleted)
	})
})

// switchJobSet replaces the JobSet controller leaving with arriving and
// reports how long it took, as migration=step switch_s=S.
func switchJobSet(ctx context.Context, step string, leaving, arriving *peers.Manifests) {
	start := time.Now()
	Expect(peers.SwitchJobSet(ctx, peerCluster(), leaving, arriving)).To(Succeed(), step)
	AddReportEntry("switch", fmt.Sprintf("migration=%s switch_s=%.1f", step, time.Since(start).Seconds()))
}

// migrationScenario is what runs when the controllers are swapped: a
// long-running JobSet that restarted once (Recreate) before, one whose
// Recreate restart has begun, and one finished with a TTL.
type migrationScenario struct {
	long, mid, ttl       *jobset.JobSet
	longPods, midPods    map[string]podState
	ttlFinished          time.Time
	ttlSeconds           int32
	longRestarts         int32
	midRestartsBeforeCut int32
}

func recreateJobSet(name, ns string) *jobset.JobSet {
	rj := workerReplicatedJob("workers").Replicas(2).Pods(2).Obj()
	rj.Template.Spec.BackoffLimit = ptr.To[int32](0)
	return wrappers.MakeJobSet(name, ns).MaxRestarts(3).ReplicatedJob(rj).Obj()
}

func startMigrationScenario(ctx context.Context, ns string) *migrationScenario {
	m := &migrationScenario{ttlSeconds: 45}
	m.long = recreateJobSet("long", ns)
	m.mid = recreateJobSet("mid", ns)
	ttlJob := workerReplicatedJob("once").Replicas(1).Pods(1).Obj()
	m.ttl = wrappers.MakeJobSet("ttl", ns).ReplicatedJob(ttlJob).Obj()
	m.ttl.Spec.TTLSecondsAfterFinished = ptr.To(m.ttlSeconds)
	for _, js := range []*jobset.JobSet{m.long, m.mid, m.ttl} {
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
	}

	By("the long-running JobSet restarts once (Recreate) and runs again")
	first := waitForSyncedWorkers(ctx, m.long, 4)
	exitWorker(ctx, ns, anyPod(first), 1)
	Eventually(func() int32 { return getJobSet(ctx, m.long).Status.Restarts }).Should(Equal(int32(1)))
	waitForPodsGone(ctx, ns, first)
	m.longPods = waitForSyncedWorkers(ctx, m.long, 4)
	m.longRestarts = getJobSet(ctx, m.long).Status.Restarts

	By("the TTL JobSet finishes")
	once := waitForSyncedWorkers(ctx, m.ttl, 1)
	exitWorker(ctx, ns, anyPod(once), 0)
	Eventually(func(g Gomega) {
		c := meta.FindStatusCondition(conditionsOf(getJobSet(ctx, m.ttl)), string(jobset.JobSetCompleted))
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(BeEquivalentTo("True"))
		m.ttlFinished = c.LastTransitionTime.Time
	}).Should(Succeed())

	m.midPods = waitForSyncedWorkers(ctx, m.mid, 4)
	return m
}

// midRecreate fails a worker of mid and returns once its controller has
// begun the Recreate restart (counted it), before the new Pods run.
func (m *migrationScenario) midRecreate(ctx context.Context) {
	By("a worker of the third JobSet fails: its Recreate restart begins")
	m.midRestartsBeforeCut = getJobSet(ctx, m.mid).Status.Restarts
	exitWorker(ctx, m.mid.Namespace, anyPod(m.midPods), 1)
	Eventually(func() int32 { return getJobSet(ctx, m.mid).Status.Restarts }).Should(Equal(m.midRestartsBeforeCut + 1))
}

func (m *migrationScenario) expectKept(ctx context.Context) {
	By("the long-running JobSet's Pods are the same, not restarted, its restart count kept")
	now := waitForSyncedWorkers(ctx, m.long, 4)
	Expect(now).To(HaveLen(len(m.longPods)))
	for name, b := range m.longPods {
		a, ok := now[name]
		Expect(ok).To(BeTrue(), "Pod %s was replaced", name)
		Expect(a.uid).To(Equal(b.uid), "Pod %s was recreated", name)
		Expect(a.restarts).To(Equal(b.restarts), "Pod %s's containers restarted", name)
	}
	long := getJobSet(ctx, m.long)
	Expect(long.Status.Restarts).To(Equal(m.longRestarts))
	Expect(meta.FindStatusCondition(conditionsOf(long), string(jobset.JobSetFailed))).To(BeNil())

	By("the JobSet caught mid-restart runs again at that restart, counted once")
	waitForPodsGone(ctx, m.mid.Namespace, m.midPods)
	after := waitForSyncedWorkers(ctx, m.mid, 4)
	for name := range m.midPods {
		Expect(after).NotTo(HaveKey(name))
	}
	Expect(getJobSet(ctx, m.mid).Status.Restarts).To(Equal(m.midRestartsBeforeCut + 1))
	// A second restart would be written now, if at all.
	Consistently(func() int32 { return getJobSet(ctx, m.mid).Status.Restarts }, 5*time.Second).
		Should(Equal(m.midRestartsBeforeCut + 1))

	By("the finished JobSet is deleted when its TTL expires, not before")
	deadline := m.ttlFinished.Add(time.Duration(m.ttlSeconds) * time.Second)
	Eventually(func() bool {
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(m.ttl), &jobset.JobSet{})
		return apierrors.IsNotFound(err)
	}, time.Duration(m.ttlSeconds)*time.Second+2*time.Minute, 250*time.Millisecond).Should(BeTrue())
	gone := time.Now()
	// Completed's lastTransitionTime has a one-second resolution.
	Expect(gone).To(BeTemporally(">=", deadline.Add(-time.Second)), "deleted before its TTL expired")
	AddReportEntry("ttl", fmt.Sprintf("migration_ttl_late_s=%.1f", gone.Sub(deadline).Seconds()))

	By("the long-running JobSet completes")
	for name := range m.longPods {
		exitWorker(ctx, m.long.Namespace, name, 0)
	}
	Eventually(func(g Gomega) {
		c := meta.FindStatusCondition(conditionsOf(getJobSet(ctx, m.long)), string(jobset.JobSetCompleted))
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(BeEquivalentTo("True"))
	}).Should(Succeed())
	Expect(getJobSet(ctx, m.long).Status.Restarts).To(Equal(m.longRestarts))
}

func conditionsOf(js *jobset.JobSet) []metav1.Condition { return js.Status.Conditions }

// waitForPodsGone waits until each Pod of pods is deleted or being deleted.
func waitForPodsGone(ctx context.Context, ns string, pods map[string]podState) {
	for name := range pods {
		Eventually(func() bool {
			var p corev1.Pod
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p)
			return apierrors.IsNotFound(err) || p.DeletionTimestamp != nil
		}).Should(BeTrue(), "Pod %s of the earlier attempt goes", name)
	}
}

// expectHeld waits until our controller holds each Pod with the
// group-member finalizer, as it holds every member of an in-place group.
func expectHeld(ctx context.Context, ns string, pods map[string]podState) {
	for name := range pods {
		Eventually(func(g Gomega) {
			var p corev1.Pod
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p)).To(Succeed())
			g.Expect(p.Finalizers).To(ContainElement(jobset.GroupMemberFinalizer))
		}).Should(Succeed(), "Pod %s is held", name)
	}
}
