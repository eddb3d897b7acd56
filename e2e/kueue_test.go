package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/peers"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// Kueue as a client of ours: Kueue, built from the Go module proxy
// (tools/peers/kueue.sh), queues JobSets. Its objects are handled as
// unstructured ones: Kueue is not a Go dependency of this module.
//
// The Kueue specs skip unless tools/e2e.sh built Kueue (its full suite on
// the local cluster, or a Kueue target); each installs Kueue and removes it
// after, so that its JobSet webhook is not in the way of the other specs.
const (
	kueueQueueNameKey     = "kueue.x-k8s.io/queue-name"
	kueuePriorityClassKey = "kueue.x-k8s.io/priority-class"
	// kueueMultiKueue is Kueue's MultiKueue controller name, the value of
	// spec.managedBy on a manager cluster's JobSets.
	kueueMultiKueue = "kueue.x-k8s.io/multikueue"
	// kueueFlavorKey is the node label of the specs' ResourceFlavors.
	kueueFlavorKey = "e2e.fastjobset.io/kueue-flavor"
	// What Kueue's Workload reads from a JobSet that completed: community
	// JobSet's Completed message, and Kueue's own reason.
	kueueFinishedSucceeded = "Succeeded"
)

var kueueGV = schema.GroupVersion{Group: "kueue.x-k8s.io", Version: "v1beta2"}

var _ = Describe("Kueue", Serial, Label("kueue"), func() {
	// Kueue is installed for each spec and removed after it, once its
	// Workloads and ClusterQueues are gone.
	BeforeEach(func(ctx context.Context) {
		installPeer(ctx, peers.Kueue, kueueGV.WithKind("Workload"), kueueGV.WithKind("ClusterQueue"))
	}, NodeTimeout(10*time.Minute))

	It("admits a queued JobSet and reports its completion to Kueue as community JobSet does", func(ctx context.Context) {
		ns := testNamespace(ctx)
		q := kueueQueues(ctx, ns, "300m")
		js := kueueJobSet("queued", ns, q.localQueue, "", 2)
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		Expect(ptr.Deref(js.Spec.Suspend, false)).To(BeTrue(), "Kueue's webhook suspends a queued JobSet at creation")

		By("Kueue admits it on the flavor, and it runs with the flavor's node labels")
		wl := kueueAdmitted(ctx, js, q)
		Expect(ptr.Deref(getJobSet(ctx, js).Spec.Suspend, true)).To(BeFalse())
		pods := waitForSyncedWorkers(ctx, js, 2)
		kueueExpectFlavorOnPods(ctx, ns, pods, q.flavor)

		By("it completes, and Kueue finishes the Workload with community JobSet's message")
		for name := range pods {
			exitWorker(ctx, ns, name, 0)
		}
		kueueExpectFinished(ctx, js, wl)
	})

	It("lets a higher-priority JobSet preempt a running one, which Kueue re-admits later", func(ctx context.Context) {
		ns := testNamespace(ctx)
		// Two Pods of 100m each per JobSet, 300m of quota: one JobSet at a time.
		q := kueueQueues(ctx, ns, "300m")
		low := kueueJobSet("low", ns, q.localQueue, kueuePriorityClass(ctx, ns, "low", 100), 2)
		Expect(k8sClient.Create(ctx, low)).To(Succeed())
		lowWL := kueueAdmitted(ctx, low, q)
		lowPods := waitForSyncedWorkers(ctx, low, 2)
		kueueExpectFlavorOnPods(ctx, ns, lowPods, q.flavor)

		By("a higher-priority JobSet arrives: Kueue evicts the running one with one suspend-and-restore update")
		high := kueueJobSet("high", ns, q.localQueue, kueuePriorityClass(ctx, ns, "high", 1000), 2)
		Expect(k8sClient.Create(ctx, high)).To(Succeed())
		kueueEventuallyCondition(ctx, ns, lowWL, "Evicted", metav1.ConditionTrue, "Preempted",
			"Kueue preempts the lower-priority Workload")
		Eventually(func(g Gomega) {
			got := getJobSet(ctx, low)
			g.Expect(ptr.Deref(got.Spec.Suspend, false)).To(BeTrue(), "the preempted JobSet is suspended")
			for _, rj := range got.Spec.ReplicatedJobs {
				g.Expect(rj.Template.Spec.Template.Spec.NodeSelector).NotTo(HaveKey(kueueFlavorKey),
					"Kueue restored %s's Pod template in the same update", rj.Name)
			}
		}).Should(Succeed(), "our webhook admits Kueue's suspend-and-restore update")
		kueueExpectPodsGone(ctx, ns, lowPods)
		Eventually(func(g Gomega) {
			c := kueueCondition(g, ctx, ns, lowWL, "QuotaReserved")
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "the preempted Workload's quota is released")
		}).Should(Succeed())

		By("the higher-priority JobSet runs on the quota released, and completes")
		highWL := kueueAdmitted(ctx, high, q)
		highPods := waitForSyncedWorkers(ctx, high, 2)
		kueueExpectFlavorOnPods(ctx, ns, highPods, q.flavor)
		Expect(kueueCondition(Default, ctx, ns, lowWL, "QuotaReserved").Status).To(Equal(metav1.ConditionFalse),
			"the preempted JobSet waits while the other holds the quota")
		for name := range highPods {
			exitWorker(ctx, ns, name, 0)
		}
		kueueExpectFinished(ctx, high, highWL)

		By("the preempted JobSet is admitted again, runs with new Pods and completes")
		kueueAdmitted(ctx, low, q)
		again := waitForSyncedWorkers(ctx, low, 2)
		kueueExpectFlavorOnPods(ctx, ns, again, q.flavor)
		for name, s := range again {
			if old, ok := lowPods[name]; ok {
				Expect(s.uid).NotTo(Equal(old.uid), "Pod %s is new", name)
			}
			exitWorker(ctx, ns, name, 0)
		}
		kueueExpectFinished(ctx, low, lowWL)
	})
	// Kueue preempts by suspending: the Job controller deletes the Pods,
	// and a trainer that checkpoints on SIGTERM exits 0 (this suite's
	// worker does). The JobSet must neither complete nor resume a rank
	// short. (Kubernetes' Job controller takes its tracking finalizer off
	// the Pods of a suspended Job before it deletes them, so it counts no
	// index of a stopped worker complete; a Job controller that did is
	// answered with new Jobs: the envtest spec of the same name.)
	It("brings every rank of a preempted InPlaceRestart JobSet back when Kueue admits it again, its workers having exited 0 on the preemption", func(ctx context.Context) {
		ns := agentNamespace(ctx)
		// Two Pods of 110m each (worker and agent) per in-place JobSet,
		// two of 100m for the other: 300m holds one of them at a time.
		q := kueueQueues(ctx, ns, "300m")
		low := kueueInPlaceJobSet(ns, "low", q.localQueue, 0)
		low.Labels[kueuePriorityClassKey] = kueuePriorityClass(ctx, ns, "low", 100)
		Expect(k8sClient.Create(ctx, low)).To(Succeed())
		lowWL := kueueAdmitted(ctx, low, q)
		lowPods := waitForSyncedWorkers(ctx, low, 2)

		By("a higher-priority JobSet preempts it: its workers exit 0 on the SIGTERM")
		high := kueueJobSet("high", ns, q.localQueue, kueuePriorityClass(ctx, ns, "high", 1000), 2)
		Expect(k8sClient.Create(ctx, high)).To(Succeed())
		kueueEventuallyCondition(ctx, ns, lowWL, "Evicted", metav1.ConditionTrue, "Preempted", "Kueue preempts the in-place JobSet")
		kueueExpectPodsGone(ctx, ns, lowPods)

		By("the preemptor completes; Kueue admits the in-place JobSet again and every rank runs and syncs")
		highPods := waitForSyncedWorkers(ctx, high, 2)
		for name := range highPods {
			exitWorker(ctx, ns, name, 0)
		}
		kueueExpectFinished(ctx, high, kueueWorkload(ctx, high))
		kueueAdmitted(ctx, low, q)
		again := waitForSyncedWorkers(ctx, low, 2)
		for name := range again {
			Expect(lowPods).NotTo(HaveKey(name), "Pod %s is new", name)
		}
		got := getJobSet(ctx, low)
		Expect(meta.FindStatusCondition(got.Status.Conditions, string(jobset.JobSetCompleted))).To(BeNil(),
			"stopped workers did not finish the JobSet")
		Expect(got.Status.InPlaceRestarts).To(BeZero())
		Expect(got.Status.RestartsCountTowardsMax).To(BeZero(), "a preemption is not a failure")
		Expect(got.Status.TerminalState).To(BeEmpty())

		By("it completes once its workers finish")
		for name := range again {
			exitWorker(ctx, ns, name, 0)
		}
		kueueExpectFinished(ctx, low, lowWL)
	})

	// Kueue's waitForPodsReady reads the JobSet's replicatedJobsStatus
	// (ready + succeeded Jobs against replicas). During an in-place group
	// restart the workers wait at the barrier, not Ready: the Workload's
	// PodsReady turns False (WaitForRecovery) and Kueue evicts the JobSet if
	// the group is not Ready again within recoveryTimeout. Both sides, with
	// one configuration: a group restart of a few seconds stays admitted
	// (PodsReady back True, reason Recovered); one whose workers take longer
	// than recoveryTimeout to be Ready again is evicted (PodsReadyTimeout).
	It("keeps an InPlaceRestart JobSet admitted through a group restart shorter than waitForPodsReady's recoveryTimeout, and evicts one that is longer", func(ctx context.Context) {
		configurePeer(ctx, peers.Kueue, fmt.Sprintf("waitForPodsReady:\n  timeout: 5m\n  recoveryTimeout: %s\n", kueueRecoveryTimeout))
		ns := agentNamespace(ctx)
		q := kueueQueues(ctx, ns, "4")

		// Created first: its workers' readiness delay passes while the quick
		// one restarts.
		slow := kueueInPlaceJobSet(ns, "slow", q.localQueue, kueueSlowReadiness)
		Expect(k8sClient.Create(ctx, slow)).To(Succeed())
		quick := kueueInPlaceJobSet(ns, "quick", q.localQueue, 0)
		Expect(k8sClient.Create(ctx, quick)).To(Succeed())

		By("a group restart of a few seconds: PodsReady turns False and back to True, and the Workload stays admitted")
		quickWL := kueueAdmitted(ctx, quick, q)
		before := waitForSyncedWorkers(ctx, quick, 2)
		kueueExpectPodsReady(ctx, ns, quickWL, "Started")
		failed := time.Now()
		restartGroupInPlace(ctx, quick, before)
		recovered := kueueExpectPodsReady(ctx, ns, quickWL, "Recovered")
		AddReportEntry("kueue-recovery", fmt.Sprintf("kueue=recovered not_ready_to_ready_s=%.1f recovery_timeout=%s",
			recovered.Sub(failed).Seconds(), kueueRecoveryTimeout))
		Expect(kueueCondition(Default, ctx, ns, quickWL, "Evicted")).To(Or(BeNil(), HaveField("Status", metav1.ConditionFalse)),
			"a group restart shorter than recoveryTimeout does not evict")
		Expect(getJobSet(ctx, quick).Status.InPlaceRestarts).To(Equal(int32(1)))
		Expect(ptr.Deref(getJobSet(ctx, quick).Spec.Suspend, false)).To(BeFalse())

		By("a group restart whose workers are Ready again only after recoveryTimeout: Kueue evicts the JobSet")
		slowWL := kueueAdmitted(ctx, slow, q)
		slowPods := waitForSyncedWorkers(ctx, slow, 2)
		kueueExpectPodsReady(ctx, ns, slowWL, "Started")
		exitWorker(ctx, ns, anyPod(slowPods), 1)
		kueueEventuallyCondition(ctx, ns, slowWL, "PodsReady", metav1.ConditionFalse, "WaitForRecovery",
			"Kueue sees the group restart as a loss of readiness")
		kueueEventuallyCondition(ctx, ns, slowWL, "Evicted", metav1.ConditionTrue, "PodsReadyTimeout",
			"Kueue evicts the Workload once recoveryTimeout has passed")
		Eventually(func() bool { return ptr.Deref(getJobSet(ctx, slow).Spec.Suspend, false) }).Should(BeTrue(),
			"the evicted JobSet is suspended")
		kueueExpectPodsGone(ctx, ns, slowPods)
	})
})

// Kueue's MultiKueue sets spec.managedBy on the manager cluster's JobSets
// and mirrors the worker cluster's status onto them: our controller must
// create nothing for them and leave their status as written. Kueue need
// not run for this.
var _ = Describe("managedBy Kueue's MultiKueue", func() {
	It("leaves a JobSet managed by MultiKueue alone", func(ctx context.Context) {
		ns := testNamespace(ctx)
		managed := wrappers.MakeJobSet("multikueue", ns).ReplicatedJob(workerReplicatedJob("workers").Replicas(2).Obj()).Obj()
		managed.Spec.ManagedBy = ptr.To(kueueMultiKueue)
		Expect(k8sClient.Create(ctx, managed)).To(Succeed())

		By("MultiKueue mirrors a status onto it")
		mirrored := getJobSet(ctx, managed)
		mirrored.Status.ReplicatedJobsStatus = []jobset.ReplicatedJobStatus{{Name: "workers", Active: 2, Ready: 2}}
		mirrored.Status.Restarts = 1
		meta.SetStatusCondition(&mirrored.Status.Conditions, metav1.Condition{
			Type: string(jobset.JobSetStartupPolicyCompleted), Status: metav1.ConditionTrue,
			Reason: "MirroredByMultiKueue", Message: "written by the test as MultiKueue would",
		})
		Expect(k8sClient.Status().Update(ctx, mirrored)).To(Succeed())

		By("a JobSet of ours created after it is reconciled")
		control := wrappers.MakeJobSet("control", ns).ReplicatedJob(workerReplicatedJob("workers").Replicas(2).Obj()).Obj()
		Expect(k8sClient.Create(ctx, control)).To(Succeed())
		waitForSyncedWorkers(ctx, control, 2)
		Eventually(func(g Gomega) {
			g.Expect(getJobSet(ctx, control).Status.ReplicatedJobsStatus).NotTo(BeEmpty())
		}).Should(Succeed())

		By("the MultiKueue JobSet has no Job and the status MultiKueue wrote")
		Expect(kueueJobs(ctx, managed)).To(BeEmpty())
		got := getJobSet(ctx, managed)
		Expect(got.Status.ReplicatedJobsStatus).To(Equal(mirrored.Status.ReplicatedJobsStatus))
		Expect(got.Status.Restarts).To(Equal(int32(1)))
		Expect(got.Status.Conditions).To(HaveLen(1))
		Expect(got.Status.Conditions[0].Reason).To(Equal("MirroredByMultiKueue"))
		Expect(got.ResourceVersion).To(Equal(mirrored.ResourceVersion), "nothing wrote to it since")
		var events corev1.EventList
		Expect(k8sClient.List(ctx, &events, client.InNamespace(ns))).To(Succeed())
		for _, e := range events.Items {
			Expect(e.InvolvedObject.UID).NotTo(Equal(managed.UID), "event about the MultiKueue JobSet: %s %s", e.Reason, e.Message)
		}
	})
})

type kueueQueueSet struct {
	flavor, clusterQueue, localQueue string
}

// kueueQueues sets up, for namespace ns alone, a ResourceFlavor whose node
// label every node gets, a ClusterQueue of cpu quota (and ample memory) on it that preempts
// lower priorities, and a LocalQueue; all removed after the spec.
func kueueQueues(ctx context.Context, ns, cpu string) kueueQueueSet {
	kueueLabelNodes(ctx, map[string]string{kueueFlavorKey: ns})
	return kueueQueuesOnFlavor(ctx, ns, cpu, map[string]any{
		"nodeLabels": map[string]any{kueueFlavorKey: ns},
	})
}

// kueueQueuesOnFlavor sets up, for namespace ns alone, the ResourceFlavor
// of flavorSpec (its nodes labelled already), a ClusterQueue of cpu quota
// (and ample memory) on it that preempts lower priorities, and a
// LocalQueue; all removed after the spec.
func kueueQueuesOnFlavor(ctx context.Context, ns, cpu string, flavorSpec map[string]any) kueueQueueSet {
	q := kueueQueueSet{flavor: ns, clusterQueue: ns, localQueue: "queue"}
	kueueCreate(ctx, "ResourceFlavor", "", q.flavor, flavorSpec)
	kueueCreate(ctx, "ClusterQueue", "", q.clusterQueue, map[string]any{
		"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}},
		"preemption":        map[string]any{"withinClusterQueue": "LowerPriority"},
		"resourceGroups": []any{map[string]any{
			// Memory too: the injected agent sidecar requests some.
			"coveredResources": []any{"cpu", "memory"},
			"flavors": []any{map[string]any{
				"name": q.flavor,
				"resources": []any{
					map[string]any{"name": "cpu", "nominalQuota": cpu},
					map[string]any{"name": "memory", "nominalQuota": "8Gi"},
				},
			}},
		}},
	})
	kueueCreate(ctx, "LocalQueue", ns, q.localQueue, map[string]any{"clusterQueue": q.clusterQueue})
	return q
}

// kueuePriorityClass creates a WorkloadPriorityClass, removed after the spec.
func kueuePriorityClass(ctx context.Context, ns, name string, value int64) string {
	name = ns + "-" + name
	obj := kueueObject("WorkloadPriorityClass", "", name)
	obj.Object["value"] = value
	kueueCreateObject(ctx, obj)
	DeferCleanup(kueueDelete, obj)
	return name
}

func kueueObject(kind, ns, name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetGroupVersionKind(kueueGV.WithKind(kind))
	obj.SetNamespace(ns)
	obj.SetName(name)
	return obj
}

func kueueCreate(ctx context.Context, kind, ns, name string, spec map[string]any) {
	obj := kueueObject(kind, ns, name)
	obj.Object["spec"] = spec
	kueueCreateObject(ctx, obj)
	if ns == "" {
		DeferCleanup(kueueDelete, obj)
	}
}

// kueueCreateObject creates obj, retrying as kubectl's users do while
// Kueue's webhook cannot be reached: right after `configure` restarted
// Kueue's manager, its Service may still route to the Pod that is gone
// (seen in CI: "failed calling webhook ... context deadline exceeded" 10 s
// after a dry run had been admitted).
func kueueCreateObject(ctx context.Context, obj *unstructured.Unstructured) {
	Eventually(func() error {
		return client.IgnoreAlreadyExists(k8sClient.Create(ctx, obj.DeepCopy()))
	}).WithContext(ctx).WithTimeout(2*time.Minute).Should(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
}

func kueueDelete(ctx context.Context, obj *unstructured.Unstructured) {
	Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, obj))).To(Succeed())
}

// kueueLabelNodes gives the named nodes (every node when none is named)
// the labels, removed after the spec.
func kueueLabelNodes(ctx context.Context, labels map[string]string, names ...string) {
	var nodes corev1.NodeList
	Expect(k8sClient.List(ctx, &nodes)).To(Succeed())
	Expect(nodes.Items).NotTo(BeEmpty())
	labelled := 0
	for i := range nodes.Items {
		node := &nodes.Items[i]
		if len(names) > 0 && !slices.Contains(names, node.Name) {
			continue
		}
		labelled++
		patch := client.MergeFrom(node.DeepCopy())
		maps.Copy(node.Labels, labels)
		Expect(k8sClient.Patch(ctx, node, patch)).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			var n corev1.Node
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(node), &n)).To(Succeed())
			patch := client.MergeFrom(n.DeepCopy())
			for key := range labels {
				delete(n.Labels, key)
			}
			Expect(k8sClient.Patch(ctx, &n, patch)).To(Succeed())
		})
	}
	if len(names) > 0 {
		Expect(labelled).To(Equal(len(names)), "nodes %v", names)
	}
}

// The waitForPodsReady spec's settings: a recoveryTimeout well above an
// in-place group restart here (3 to 10 s), and a readiness delay of the
// slow JobSet's workers well above the recoveryTimeout.
const (
	kueueRecoveryTimeout = "30s"
	kueueSlowReadiness   = 60
)

// kueueInPlaceJobSet is seed story 1 with agent injection, one Job of two
// workers (InPlaceRestart), each worker asking for 10m of cpu (the agent
// asks for 100m: two such JobSets fit on the 2-core node beside the
// control plane), queued in localQueue. With readinessDelay, a worker is
// Ready only that many seconds after each start.
func kueueInPlaceJobSet(ns, name, localQueue string, readinessDelay int32) *jobset.JobSet {
	js := podTier(example(ns, "story1-injected.yaml"))
	js.Name = name
	js.Labels = map[string]string{kueueQueueNameKey: localQueue}
	js.Spec.ReplicatedJobs[0].Replicas = 1
	worker := &js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0]
	worker.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}
	if readinessDelay > 0 {
		worker.ReadinessProbe = &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/starts", Port: intstr.FromString("control"),
			}},
			InitialDelaySeconds: readinessDelay,
			PeriodSeconds:       1,
		}
	}
	return js
}

// kueueExpectPodsReady waits until the Workload's PodsReady is True with
// the reason, and returns when it turned so.
func kueueExpectPodsReady(ctx context.Context, ns, wl, reason string) time.Time {
	c := kueueEventuallyCondition(ctx, ns, wl, "PodsReady", metav1.ConditionTrue, reason, "Workload "+wl+" is PodsReady")
	Expect(c.LastTransitionTime.IsZero()).To(BeFalse(), "Workload %s PodsReady has a lastTransitionTime", wl)
	return c.LastTransitionTime.Time
}

// kueueJobSet is a JobSet of replicas Jobs of one worker Pod each, asking
// for 100m of cpu, queued in localQueue (with priorityClass, if any).
func kueueJobSet(name, ns, localQueue, priorityClass string, replicas int32) *jobset.JobSet {
	rj := workerReplicatedJob("workers").Replicas(replicas).Obj()
	rj.Template.Spec.BackoffLimit = ptr.To[int32](0)
	rj.Template.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("100m"),
	}
	js := wrappers.MakeJobSet(name, ns).ReplicatedJob(rj).Obj()
	js.Labels = map[string]string{kueueQueueNameKey: localQueue}
	if priorityClass != "" {
		js.Labels[kueuePriorityClassKey] = priorityClass
	}
	return js
}

// kueueJobs lists the Jobs of js.
func kueueJobs(ctx context.Context, js *jobset.JobSet) []batchv1.Job {
	var jobs batchv1.JobList
	Expect(k8sClient.List(ctx, &jobs, client.InNamespace(js.Namespace),
		client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
	return jobs.Items
}

// kueueWorkload returns the name of the Workload Kueue created for js (the
// one it owns).
func kueueWorkload(ctx context.Context, js *jobset.JobSet) string {
	uid := getJobSet(ctx, js).UID
	var name string
	Eventually(func(g Gomega) {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(kueueGV.WithKind("WorkloadList"))
		g.Expect(k8sClient.List(ctx, list, client.InNamespace(js.Namespace))).To(Succeed())
		var names []string
		for _, wl := range list.Items {
			for _, ref := range wl.GetOwnerReferences() {
				if ref.UID == uid {
					names = append(names, wl.GetName())
				}
			}
		}
		g.Expect(names).To(HaveLen(1), "Kueue's Workload for JobSet %s", js.Name)
		name = names[0]
	}).Should(Succeed())
	return name
}

func kueueGetWorkload(g Gomega, ctx context.Context, ns, name string) *unstructured.Unstructured {
	wl := kueueObject("Workload", ns, name)
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, wl)).To(Succeed())
	return wl
}

// kueueCondition returns the Workload's condition of type t, or nil.
func kueueCondition(g Gomega, ctx context.Context, ns, name, t string) *metav1.Condition {
	wl := kueueGetWorkload(g, ctx, ns, name)
	conditions, _, err := unstructured.NestedSlice(wl.Object, "status", "conditions")
	g.Expect(err).NotTo(HaveOccurred())
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != t {
			continue
		}
		s := func(k string) string { v, _ := m[k].(string); return v }
		c := &metav1.Condition{Type: t, Status: metav1.ConditionStatus(s("status")), Reason: s("reason"), Message: s("message")}
		if at := s("lastTransitionTime"); at != "" {
			parsed, err := time.Parse(time.RFC3339, at)
			g.Expect(err).NotTo(HaveOccurred(), "Workload %s %s lastTransitionTime", name, t)
			c.LastTransitionTime = metav1.NewTime(parsed)
		}
		return c
	}
	return nil
}

// kueueEventuallyCondition waits until the Workload's condition of type t
// has the status and reason, and returns it.
func kueueEventuallyCondition(ctx context.Context, ns, wl, t string, status metav1.ConditionStatus, reason, description string) *metav1.Condition {
	var c *metav1.Condition
	Eventually(func(g Gomega) {
		c = kueueCondition(g, ctx, ns, wl, t)
		g.Expect(c).NotTo(BeNil(), "Workload %s has %s", wl, t)
		g.Expect(c.Status).To(Equal(status), "Workload %s %s", wl, t)
		g.Expect(c.Reason).To(Equal(reason), "Workload %s %s", wl, t)
	}).Should(Succeed(), description)
	return c
}

// kueueAdmitted waits until Kueue has admitted js's Workload in the
// ClusterQueue, its cpu on the flavor, and js runs (unsuspended); returns
// the Workload's name.
func kueueAdmitted(ctx context.Context, js *jobset.JobSet, q kueueQueueSet) string {
	name := kueueWorkload(ctx, js)
	Eventually(func(g Gomega) {
		c := kueueCondition(g, ctx, js.Namespace, name, "Admitted")
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "Workload %s admitted", name)
		wl := kueueGetWorkload(g, ctx, js.Namespace, name)
		cq, _, _ := unstructured.NestedString(wl.Object, "status", "admission", "clusterQueue")
		g.Expect(cq).To(Equal(q.clusterQueue))
		assignments, _, _ := unstructured.NestedSlice(wl.Object, "status", "admission", "podSetAssignments")
		g.Expect(assignments).NotTo(BeEmpty())
		for _, a := range assignments {
			flavor, _, _ := unstructured.NestedString(a.(map[string]any), "flavors", "cpu")
			g.Expect(flavor).To(Equal(q.flavor))
		}
		g.Expect(ptr.Deref(getJobSet(ctx, js).Spec.Suspend, true)).To(BeFalse(), "JobSet %s resumed", js.Name)
	}).Should(Succeed())
	return name
}

// kueueExpectFlavorOnPods checks that the flavor's node label, which Kueue
// injected into the JobSet's Pod templates, is on every Pod.
func kueueExpectFlavorOnPods(ctx context.Context, ns string, pods map[string]podState, flavor string) {
	for name := range pods {
		var p corev1.Pod
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p)).To(Succeed())
		Expect(p.Spec.NodeSelector).To(HaveKeyWithValue(kueueFlavorKey, flavor), "Pod %s", name)
	}
}

func kueueExpectPodsGone(ctx context.Context, ns string, pods map[string]podState) {
	for name, s := range pods {
		Eventually(func() bool {
			var p corev1.Pod
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p)
			return apierrors.IsNotFound(err) || p.UID != s.uid
		}).Should(BeTrue(), "Pod %s of the preempted JobSet goes", name)
	}
}

// kueueExpectFinished waits until js is Completed with community JobSet's
// message and Kueue has finished its Workload with that message.
func kueueExpectFinished(ctx context.Context, js *jobset.JobSet, wl string) {
	Eventually(func(g Gomega) {
		c := meta.FindStatusCondition(getJobSet(ctx, js).Status.Conditions, string(jobset.JobSetCompleted))
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Message).To(Equal(jobset.MessageAllJobsCompleted))
	}).Should(Succeed(), "JobSet %s completes", js.Name)
	Eventually(func(g Gomega) {
		c := kueueCondition(g, ctx, js.Namespace, wl, "Finished")
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal(kueueFinishedSucceeded))
		g.Expect(c.Message).To(Equal("jobset completed successfully"))
	}).Should(Succeed(), "Kueue finishes Workload %s", wl)
}
