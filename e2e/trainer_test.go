package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/peers"
)

// Kubeflow Trainer v2 as a client of ours: Trainer, built from the Go
// module proxy (tools/peers/trainer.sh), turns a TrainJob and its
// ClusterTrainingRuntime into a JobSet, written with server-side apply, and
// follows the JobSet's status. Its objects are handled as unstructured ones:
// Trainer is not a Go dependency of this module.
//
// The specs skip unless tools/e2e.sh built Trainer (its full suite on the
// local cluster, or a Trainer target); each installs Trainer and removes it
// after.
const (
	// trainerAncestorKey marks the replicatedJob of a training runtime that
	// runs the trainer (value trainerAncestorTrainer); Trainer sizes it from
	// numNodes and expects a container named trainerNode in it.
	trainerAncestorKey     = "trainer.kubeflow.org/trainjob-ancestor-step"
	trainerAncestorTrainer = "trainer"
	trainerNode            = "node"
	// The initializers of Trainer's torch runtimes: replicatedJobs of these
	// names (and ancestor steps) that the trainer dependsOn to Complete.
	trainerDatasetInitializer = "dataset-initializer"
	trainerModelInitializer   = "model-initializer"
	// trainerFieldManager is the field owner of Trainer's apply of a JobSet.
	trainerFieldManager = "trainer"
	// TrainJob conditions: Complete and Failed are copied from the JobSet's
	// Completed and Failed; Suspended follows spec.suspend (reason
	// trainerResumed once False).
	trainerComplete  = "Complete"
	trainerFailed    = "Failed"
	trainerSuspended = "Suspended"
	trainerResumed   = "Resumed"
	// trainerPatchManager names the spec's runtime patch, as a queue names its own.
	trainerPatchManager = "e2e.fastjobset.io/resume"
)

var trainerGV = schema.GroupVersion{Group: "trainer.kubeflow.org", Version: "v1alpha1"}

var _ = Describe("Kubeflow Trainer", Serial, Label("trainer"), func() {
	// Trainer is installed for the spec and removed after it, once its
	// TrainJobs and ClusterTrainingRuntimes are gone (Trainer's finalizer
	// on a runtime in use needs its manager).
	BeforeEach(func(ctx context.Context) {
		installPeer(ctx, peers.Trainer, trainerGV.WithKind("TrainJob"), trainerGV.WithKind("ClusterTrainingRuntime"))
	}, NodeTimeout(10*time.Minute))

	It("runs a TrainJob on an InPlaceRestart JobSet whose failed worker restarts in place, and completes it", func(ctx context.Context) {
		ns := agentNamespace(ctx)
		tj := trainerTrainJob(ctx, ns, trainerRuntime(ctx, ns), false)

		By("Trainer applies the JobSet, which our webhooks admit and complete with the agent")
		js := trainerJobSet(ctx, tj)
		trainerExpectApplied(js, tj)

		By("it runs with community JobSet's Job, Pod and Service names, which Trainer's endpoints are")
		pods := waitForSyncedWorkers(ctx, js, 2)
		trainerExpectNaming(ctx, js, pods)
		trainerExpectJobsStatus(ctx, js, tj, jobset.ReplicatedJobStatus{Name: trainerNode, Active: 1, Ready: 1})

		after := restartGroupInPlace(ctx, js, pods)
		got := getJobSet(ctx, js)
		Expect(got.Status.InPlaceRestarts).To(Equal(int32(1)))
		Expect(got.Status.Restarts).To(BeZero(), "no Job was recreated")
		trainerExpectJobsStatus(ctx, js, tj, jobset.ReplicatedJobStatus{Name: trainerNode, Active: 1, Ready: 1})
		Expect(trainerCondition(Default, ctx, tj, trainerFailed)).To(BeNil(), "the TrainJob did not fail")
		Expect(trainerCondition(Default, ctx, tj, trainerComplete)).To(BeNil())

		trainerExpectCompletes(ctx, js, tj, after)
	})

	It("runs a TrainJob whose in-place trainer nodes wait for its initializers (Trainer's torch shape)", func(ctx context.Context) {
		ns := agentNamespace(ctx)
		initializers := []string{trainerDatasetInitializer, trainerModelInitializer}
		tj := trainerTrainJob(ctx, ns, trainerRuntime(ctx, ns, initializers...), false)

		By("Trainer applies a JobSet whose trainer depends on the initializers; our webhook admits it and injects the agent into the trainer alone")
		js := trainerJobSet(ctx, tj)
		trainerExpectApplied(js, tj, initializers...)

		By("the initializers run first, outside the in-place group; the trainer's Job waits for them")
		for _, name := range initializers {
			pod := trainerRunningPod(ctx, js, name)
			Expect(trainerJobsOf(ctx, js, trainerNode)).To(BeEmpty(), "no trainer Job while initializer %s runs", name)
			exitWorker(ctx, ns, pod, 0)
			Eventually(func(g Gomega) {
				jobs := trainerJobsOf(ctx, js, name)
				g.Expect(jobs).To(HaveLen(1))
				g.Expect(jobs[0].Status.Succeeded).To(Equal(int32(1)), "initializer %s completes", name)
			}).Should(Succeed())
		}

		By("then the trainer's nodes run with the agent and sync; one fails: they restart in place, the initializers not again")
		after := restartGroupInPlace(ctx, js, waitForSyncedWorkers(ctx, js, 2))
		got := getJobSet(ctx, js)
		Expect(got.Status.InPlaceRestarts).To(Equal(int32(1)))
		Expect(got.Status.Restarts).To(BeZero(), "no Job was recreated")
		for _, name := range initializers {
			jobs := trainerJobsOf(ctx, js, name)
			Expect(jobs).To(HaveLen(1))
			Expect(jobs[0].Status.Succeeded).To(Equal(int32(1)), "initializer %s is not run again", name)
		}

		trainerExpectCompletes(ctx, js, tj, after, initializers...)
	})

	It("resumes a suspended TrainJob whose JobSet Trainer applies again with a runtime patch", func(ctx context.Context) {
		ns := agentNamespace(ctx)
		tj := trainerTrainJob(ctx, ns, trainerRuntime(ctx, ns), true)

		By("Trainer applies the JobSet suspended, and our controller holds it")
		js := trainerJobSet(ctx, tj)
		trainerExpectApplied(js, tj)
		Expect(ptr.Deref(js.Spec.Suspend, false)).To(BeTrue())
		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(getJobSet(ctx, js).Status.Conditions, string(jobset.JobSetSuspended))
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			c = trainerCondition(g, ctx, tj, trainerSuspended)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed(), "JobSet %s and its TrainJob suspended", js.Name)
		trainerExpectJobsStatus(ctx, js, tj, jobset.ReplicatedJobStatus{Name: trainerNode, Suspended: 1})
		var pods corev1.PodList
		Expect(k8sClient.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
		Expect(pods.Items).To(BeEmpty(), "a suspended JobSet runs no Pod")

		By("resumed with a nodeSelector in a runtime patch, as a queue resumes it: Trainer applies the JobSet again")
		patch := map[string]any{"spec": map[string]any{
			"suspend": false,
			"runtimePatches": []any{map[string]any{
				"manager": trainerPatchManager,
				"trainingRuntimeSpec": map[string]any{"template": map[string]any{"spec": map[string]any{
					"replicatedJobs": []any{map[string]any{
						"name": trainerNode,
						"template": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
							"nodeSelector": map[string]any{corev1.LabelOSStable: "linux"},
						}}}},
					}},
				}}},
			}},
		}}
		data, err := json.Marshal(patch)
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Patch(ctx, tj, client.RawPatch(types.MergePatchType, data))).To(Succeed())
		Eventually(func(g Gomega) {
			got := getJobSet(ctx, js)
			g.Expect(ptr.Deref(got.Spec.Suspend, true)).To(BeFalse(), "JobSet %s resumed", js.Name)
			g.Expect(got.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.NodeSelector).To(
				HaveKeyWithValue(corev1.LabelOSStable, "linux"), "the runtime patch's nodeSelector in the Pod template")
		}).Should(Succeed(), "our webhook admits Trainer's second apply")
		resumed := getJobSet(ctx, js)
		trainerExpectApplied(resumed, tj)

		By("it runs with the agent and the nodeSelector, and completes")
		running := waitForSyncedWorkers(ctx, js, 2)
		Expect(syncedEpoch(ctx, js)).To(BeNumerically(">=", 1), "the agents joined and synced")
		for name := range running {
			var p corev1.Pod
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p)).To(Succeed())
			Expect(p.Spec.NodeSelector).To(HaveKeyWithValue(corev1.LabelOSStable, "linux"), "Pod %s", name)
			Expect(p.Spec.InitContainers).To(ContainElement(HaveField("Name", agentspec.ContainerName)), "Pod %s runs the agent", name)
		}
		Eventually(func(g Gomega) {
			c := trainerCondition(g, ctx, tj, trainerSuspended)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(trainerResumed))
		}).Should(Succeed(), "Trainer marks TrainJob %s resumed", tj.GetName())
		trainerExpectCompletes(ctx, js, tj, running)
	})
})

func trainerObject(kind, ns, name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetGroupVersionKind(trainerGV.WithKind(kind))
	obj.SetNamespace(ns)
	obj.SetName(name)
	return obj
}

// trainerTrainJob creates TrainJob "train" in ns on the runtime, with
// numNodes 2, suspended or not.
func trainerTrainJob(ctx context.Context, ns, runtime string, suspend bool) *unstructured.Unstructured {
	tj := trainerObject("TrainJob", ns, "train")
	tj.Object["spec"] = map[string]any{
		"runtimeRef": map[string]any{"name": runtime},
		"trainer":    map[string]any{"numNodes": int64(2)},
		"suspend":    suspend,
	}
	Expect(k8sClient.Create(ctx, tj)).To(Succeed())
	return tj
}

// trainerJobSet waits until Trainer has created the TrainJob's JobSet, of
// the same name, and returns it.
func trainerJobSet(ctx context.Context, tj *unstructured.Unstructured) *jobset.JobSet {
	js := &jobset.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: tj.GetNamespace(), Name: tj.GetName()}}
	Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKeyFromObject(js), js) }).Should(Succeed(),
		"Trainer creates JobSet %s", js.Name)
	return js
}

// trainerExpectCompletes lets every worker exit 0 and waits until the
// JobSet is Completed and Trainer has copied that into the TrainJob's
// Complete condition and jobsStatus (the trainer's Job succeeded, and the
// initializers' before it).
func trainerExpectCompletes(ctx context.Context, js *jobset.JobSet, tj *unstructured.Unstructured, pods map[string]podState, initializers ...string) {
	By("the workers finish: the JobSet completes and the TrainJob follows with its condition")
	for name := range pods {
		exitWorker(ctx, js.Namespace, name, 0)
	}
	Eventually(func(g Gomega) {
		c := meta.FindStatusCondition(getJobSet(ctx, js).Status.Conditions, string(jobset.JobSetCompleted))
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed(), "JobSet %s completes", js.Name)
	Eventually(func(g Gomega) {
		c := trainerCondition(g, ctx, tj, trainerComplete)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal(jobset.ReasonAllJobsCompleted))
		g.Expect(c.Message).To(Equal(jobset.MessageAllJobsCompleted))
	}).Should(Succeed(), "Trainer marks TrainJob %s Complete", tj.GetName())
	Expect(trainerCondition(Default, ctx, tj, trainerFailed)).To(BeNil())
	want := []jobset.ReplicatedJobStatus{{Name: trainerNode, Succeeded: 1}}
	for _, name := range initializers {
		want = append(want, jobset.ReplicatedJobStatus{Name: name, Succeeded: 1})
	}
	trainerExpectJobsStatus(ctx, js, tj, want...)
}

// trainerRuntime creates a ClusterTrainingRuntime named ns, deleted after
// the spec, whose JobSet template restarts in place with the agent
// injected by our webhook: the trainer's replicatedJob of the e2e worker
// (container "node", as Trainer requires), numNodes 2 by default, and
// before it, in Trainer's torch shape, one replicatedJob per initializer
// (a worker of its own name, which the spec tells to exit) that the
// trainer's dependsOn waits for to Complete.
func trainerRuntime(ctx context.Context, ns string, initializers ...string) string {
	var replicatedJobs []any
	var dependsOn []any
	for _, name := range initializers {
		replicatedJobs = append(replicatedJobs, trainerReplicatedJob(name, name, ""))
		dependsOn = append(dependsOn, map[string]any{"name": name, "status": string(jobset.DependencyComplete)})
	}
	node := trainerReplicatedJob(trainerNode, trainerAncestorTrainer, agentspec.ServiceAccountName)
	if len(dependsOn) > 0 {
		node["dependsOn"] = dependsOn
	}
	replicatedJobs = append(replicatedJobs, node)

	obj := trainerObject("ClusterTrainingRuntime", "", ns)
	obj.Object["spec"] = map[string]any{
		"mlPolicy": map[string]any{"numNodes": int64(2)},
		"template": map[string]any{
			"metadata": map[string]any{
				"annotations": map[string]any{jobset.InjectAgentKey: "true"},
			},
			"spec": map[string]any{
				"failurePolicy": map[string]any{
					"restartStrategy": string(jobset.InPlaceRestart),
					"maxRestarts":     int64(3),
				},
				"replicatedJobs": replicatedJobs,
			},
		},
	}
	Expect(k8sClient.Create(ctx, obj)).To(Succeed(), "ClusterTrainingRuntime %s", ns)
	DeferCleanup(func(ctx context.Context) {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, obj))).To(Succeed())
	})
	return ns
}

// trainerReplicatedJob is a runtime's replicatedJob of one e2e worker
// container of the same name, its Jobs labelled as Trainer's ancestor step,
// its Pods run as serviceAccount (the default one if empty).
func trainerReplicatedJob(name, ancestorStep, serviceAccount string) map[string]any {
	podSpec := map[string]any{
		"restartPolicy":                 string(corev1.RestartPolicyNever),
		"terminationGracePeriodSeconds": int64(5),
		"volumes": []any{map[string]any{
			"name": "data", "emptyDir": map[string]any{},
		}},
		"containers": []any{map[string]any{
			"name":            name,
			"image":           "ghcr.io/fastjobset/e2e-worker:dev",
			"imagePullPolicy": string(corev1.PullIfNotPresent),
			"env": []any{map[string]any{
				"name":      "POD_UID",
				"valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.uid"}},
			}},
			"ports":        []any{map[string]any{"name": "control", "containerPort": int64(8081)}},
			"volumeMounts": []any{map[string]any{"name": "data", "mountPath": "/data"}},
		}},
	}
	if serviceAccount != "" {
		podSpec["serviceAccountName"] = serviceAccount
	}
	return map[string]any{
		"name": name,
		"template": map[string]any{
			"metadata": map[string]any{
				"labels": map[string]any{trainerAncestorKey: ancestorStep},
			},
			"spec": map[string]any{"template": map[string]any{"spec": podSpec}},
		},
	}
}

// trainerExpectApplied checks the JobSet as Trainer wrote it and our
// webhooks admitted it: written by server-side apply under Trainer's field
// manager, controlled by the TrainJob, the runtime's in-place restart and
// annotation kept, the trainer's replicatedJob sized from numNodes, and
// the agent injected.
func trainerExpectApplied(js *jobset.JobSet, tj *unstructured.Unstructured, initializers ...string) {
	var applied bool
	for _, mf := range js.ManagedFields {
		if mf.Manager == trainerFieldManager && mf.Operation == metav1.ManagedFieldsOperationApply {
			applied = true
		}
	}
	Expect(applied).To(BeTrue(), "JobSet %s written by server-side apply as %q: %v", js.Name, trainerFieldManager, js.ManagedFields)
	owner := metav1.GetControllerOf(js)
	Expect(owner).NotTo(BeNil(), "JobSet %s has a controller", js.Name)
	Expect(owner.Kind).To(Equal("TrainJob"))
	Expect(owner.Name).To(Equal(tj.GetName()))
	Expect(js.Annotations).To(HaveKeyWithValue(jobset.InjectAgentKey, "true"), "Trainer propagates the runtime template's annotations")
	Expect(js.Spec.FailurePolicy).NotTo(BeNil())
	Expect(js.Spec.FailurePolicy.RestartStrategy).To(Equal(jobset.InPlaceRestart))
	Expect(js.Spec.ReplicatedJobs).To(HaveLen(len(initializers) + 1))
	runsAgent := func(rj jobset.ReplicatedJob) bool {
		for _, c := range rj.Template.Spec.Template.Spec.InitContainers {
			if c.Name == agentspec.ContainerName {
				return true
			}
		}
		return false
	}
	for i, name := range initializers {
		rj := js.Spec.ReplicatedJobs[i]
		Expect(rj.Name).To(Equal(name))
		Expect(runsAgent(rj)).To(BeFalse(), "initializer %s is outside the in-place group: no agent", name)
	}
	rj := js.Spec.ReplicatedJobs[len(initializers)]
	Expect(rj.Name).To(Equal(trainerNode))
	Expect(rj.Replicas).To(Equal(int32(1)))
	Expect(ptr.Deref(rj.Template.Spec.Parallelism, 0)).To(Equal(int32(2)), "parallelism from numNodes")
	Expect(ptr.Deref(rj.Template.Spec.Completions, 0)).To(Equal(int32(2)), "completions from numNodes")
	Expect(rj.DependsOn).To(HaveLen(len(initializers)), "the trainer waits for every initializer")
	Expect(runsAgent(rj)).To(BeTrue(), "our webhook injected the agent into Trainer's JobSet")
}

// trainerExpectNaming checks what Trainer relies on without reading it:
// the Job <jobset>-<replicatedJob>-<index>, its Pods' hostnames
// <job>-<completion index> under the subdomain of the headless Service
// named after the JobSet, which are the endpoints Trainer hands to the
// training framework (<trainjob>-<replicatedJob>-<job>-<pod>.<subdomain>),
// and that every Pod resolves every other's endpoint.
func trainerExpectNaming(ctx context.Context, js *jobset.JobSet, pods map[string]podState) {
	ns := js.Namespace
	var jobs batchv1.JobList
	Expect(k8sClient.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
	Expect(jobs.Items).To(HaveLen(1))
	job := jobs.Items[0]
	Expect(job.Name).To(Equal(js.Name + "-" + trainerNode + "-0"))
	Expect(job.Labels).To(HaveKeyWithValue(jobset.ReplicatedJobNameKey, trainerNode))
	Expect(job.Labels).To(HaveKeyWithValue(jobset.JobIndexKey, "0"))

	var svc corev1.Service
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: js.Name}, &svc)).To(Succeed(), "the JobSet's headless Service")
	Expect(svc.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))
	Expect(svc.Spec.Selector).To(Equal(map[string]string{jobset.JobSetNameKey: js.Name}))

	want := map[string]bool{}
	for i := range 2 {
		want[fmt.Sprintf("%s-%s-0-%d.%s", js.Name, trainerNode, i, js.Name)] = true
	}
	endpoints := map[string]string{} // endpoint -> Pod IP
	for name := range pods {
		var p corev1.Pod
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p)).To(Succeed())
		Expect(p.Name).To(HavePrefix(job.Name+"-"), "Pod %s of Job %s", p.Name, job.Name)
		Expect(p.Spec.Hostname).To(Equal(job.Name+"-"+p.Annotations[batchv1.JobCompletionIndexAnnotation]), "Pod %s", p.Name)
		Expect(p.Spec.Subdomain).To(Equal(svc.Name), "Pod %s", p.Name)
		endpoints[p.Spec.Hostname+"."+p.Spec.Subdomain] = p.Status.PodIP
	}
	Expect(endpoints).To(HaveLen(len(want)))
	for endpoint := range endpoints {
		Expect(want).To(HaveKey(endpoint), "Trainer's endpoints are %v", want)
	}
	for from := range pods {
		for endpoint, ip := range endpoints {
			Eventually(func(g Gomega) {
				out, err := clientset.CoreV1().Pods(ns).ProxyGet("http", from, "8081", "/resolve",
					map[string]string{"host": endpoint}).DoRaw(ctx)
				g.Expect(err).NotTo(HaveOccurred(), "%s resolving %s: %s", from, endpoint, out)
				g.Expect(strings.TrimSpace(string(out))).To(Equal(ip), "%s resolving %s", from, endpoint)
			}).Should(Succeed())
		}
	}
}

// trainerExpectJobsStatus waits until the JobSet's replicatedJobsStatus is
// want and Trainer has copied it into the TrainJob's jobsStatus.
func trainerExpectJobsStatus(ctx context.Context, js *jobset.JobSet, tj *unstructured.Unstructured, want ...jobset.ReplicatedJobStatus) {
	Eventually(func(g Gomega) {
		g.Expect(getJobSet(ctx, js).Status.ReplicatedJobsStatus).To(ConsistOf(want))
	}).Should(Succeed(), "JobSet %s replicatedJobsStatus", js.Name)
	var wantStatuses []any
	for _, w := range want {
		wantStatuses = append(wantStatuses, map[string]any{
			"name": w.Name, "active": int64(w.Active), "ready": int64(w.Ready),
			"succeeded": int64(w.Succeeded), "failed": int64(w.Failed), "suspended": int64(w.Suspended),
		})
	}
	Eventually(func(g Gomega) {
		got := trainerGet(g, ctx, tj)
		statuses, _, err := unstructured.NestedSlice(got.Object, "status", "jobsStatus")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(statuses).To(ConsistOf(wantStatuses...))
	}).Should(Succeed(), "Trainer copies the replicatedJobsStatus into TrainJob %s", tj.GetName())
}

func trainerGet(g Gomega, ctx context.Context, obj *unstructured.Unstructured) *unstructured.Unstructured {
	got := trainerObject(obj.GetKind(), obj.GetNamespace(), obj.GetName())
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), got)).To(Succeed())
	return got
}

// trainerJobsOf lists js's Jobs of the replicatedJob.
func trainerJobsOf(ctx context.Context, js *jobset.JobSet, replicatedJob string) []batchv1.Job {
	var jobs batchv1.JobList
	Expect(k8sClient.List(ctx, &jobs, client.InNamespace(js.Namespace), client.MatchingLabels{
		jobset.JobSetNameKey: js.Name, jobset.ReplicatedJobNameKey: replicatedJob,
	})).To(Succeed())
	return jobs.Items
}

// trainerRunningPod waits until the one Pod of js's replicatedJob runs, and
// returns its name.
func trainerRunningPod(ctx context.Context, js *jobset.JobSet, replicatedJob string) string {
	var name string
	Eventually(func(g Gomega) {
		var pods corev1.PodList
		g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(js.Namespace), client.MatchingLabels{
			jobset.JobSetNameKey: js.Name, jobset.ReplicatedJobNameKey: replicatedJob,
		})).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(1), "the Pod of %s", replicatedJob)
		g.Expect(pods.Items[0].Status.Phase).To(Equal(corev1.PodRunning), "the Pod of %s", replicatedJob)
		name = pods.Items[0].Name
	}).Should(Succeed())
	return name
}

// trainerCondition returns the TrainJob's condition of type t, or nil.
func trainerCondition(g Gomega, ctx context.Context, tj *unstructured.Unstructured, t string) *metav1.Condition {
	got := trainerGet(g, ctx, tj)
	conditions, _, err := unstructured.NestedSlice(got.Object, "status", "conditions")
	g.Expect(err).NotTo(HaveOccurred())
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != t {
			continue
		}
		s := func(k string) string { v, _ := m[k].(string); return v }
		return &metav1.Condition{Type: t, Status: metav1.ConditionStatus(s("status")), Reason: s("reason"), Message: s("message")}
	}
	return nil
}
