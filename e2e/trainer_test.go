package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// Kubeflow Trainer v2 as a client of ours (issue 17): Trainer, built from
// the Go module proxy by tools/trainer/build.sh, turns a TrainJob and its
// ClusterTrainingRuntime into a JobSet, written with server-side apply, and
// follows the JobSet's status. Its objects are handled as unstructured ones:
// Trainer is not a Go dependency of this module.
//
// The spec skips unless tools/e2e.sh passed the script (JOBSET_TRAINER_SH,
// with JOBSET_E2E_TRAINER=1 or a Trainer target); it installs Trainer and
// removes it after.
const (
	// trainerAncestorKey marks the replicatedJob of a training runtime that
	// runs the trainer (value trainerAncestorTrainer); Trainer sizes it from
	// numNodes and expects a container named trainerNode in it.
	trainerAncestorKey     = "trainer.kubeflow.org/trainjob-ancestor-step"
	trainerAncestorTrainer = "trainer"
	trainerNode            = "node"
	// trainerFieldManager is the field owner of Trainer's apply of a JobSet.
	trainerFieldManager = "trainer"
	// The TrainJob condition that Trainer copies from the JobSet's Completed.
	trainerComplete = "Complete"
	trainerFailed   = "Failed"
)

var trainerGV = schema.GroupVersion{Group: "trainer.kubeflow.org", Version: "v1alpha1"}

var _ = Describe("Kubeflow Trainer", Serial, Label("trainer"), func() {
	// Trainer is installed for the spec and removed after it, once its
	// TrainJobs and ClusterTrainingRuntimes are gone (the spec's namespace
	// and runtime are deleted first: cleanups run last registered first;
	// Trainer's finalizer on a runtime in use needs its manager).
	BeforeEach(func(ctx context.Context) {
		trainerScript()
		trainerRun(ctx, "install")
		DeferCleanup(func(ctx context.Context) {
			By("waiting until every TrainJob and ClusterTrainingRuntime of the spec is gone")
			for _, kind := range []string{"TrainJobList", "ClusterTrainingRuntimeList"} {
				Eventually(func(g Gomega) {
					list := &unstructured.UnstructuredList{}
					list.SetGroupVersionKind(trainerGV.WithKind(kind))
					g.Expect(k8sClient.List(ctx, list)).To(Succeed())
					g.Expect(list.Items).To(BeEmpty(), "%s left", kind)
				}).Should(Succeed())
			}
			trainerRun(ctx, "uninstall")
		}, NodeTimeout(10*time.Minute))
	}, NodeTimeout(10*time.Minute))

	It("runs a TrainJob on an InPlaceRestart JobSet whose failed worker restarts in place, and completes it", func(ctx context.Context) {
		ns := agentNamespace(ctx)
		runtime := trainerRuntime(ctx, ns)
		tj := trainerObject("TrainJob", ns, "train")
		tj.Object["spec"] = map[string]any{
			"runtimeRef": map[string]any{"name": runtime},
			"trainer":    map[string]any{"numNodes": int64(2)},
		}
		Expect(k8sClient.Create(ctx, tj)).To(Succeed())

		By("Trainer applies the JobSet, which our webhooks admit and complete with the agent")
		js := &jobset.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tj.GetName()}}
		Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKeyFromObject(js), js) }).Should(Succeed(),
			"Trainer creates JobSet %s", js.Name)
		trainerExpectApplied(js, tj)

		By("it runs with community JobSet's Job, Pod and Service names, which Trainer's endpoints are")
		pods := waitForSyncedWorkers(ctx, js, 2)
		trainerExpectNaming(ctx, js, pods)
		trainerExpectJobsStatus(ctx, js, tj, jobset.ReplicatedJobStatus{Name: trainerNode, Active: 1, Ready: 1})

		By("one worker exits with code 1: the group restarts in place")
		epoch := syncedEpoch(ctx, js)
		exitWorker(ctx, ns, anyPod(pods), 1)
		Eventually(func() int32 { return syncedEpoch(ctx, js) }).Should(Equal(epoch + 1))
		after := waitForSyncedWorkers(ctx, js, 2)
		for name, b := range pods {
			a, ok := after[name]
			Expect(ok).To(BeTrue(), "Pod %s was replaced", name)
			Expect(a.uid).To(Equal(b.uid), "Pod %s was recreated", name)
			for c, n := range b.restarts {
				Expect(a.restarts[c]).To(Equal(n+1), "Pod %s container %s restarted %d times, want %d", name, c, a.restarts[c], n+1)
			}
		}
		got := getJobSet(ctx, js)
		Expect(got.Status.InPlaceRestarts).To(Equal(int32(1)))
		Expect(got.Status.Restarts).To(BeZero(), "no Job was recreated")
		trainerExpectJobsStatus(ctx, js, tj, jobset.ReplicatedJobStatus{Name: trainerNode, Active: 1, Ready: 1})
		Expect(trainerCondition(Default, ctx, tj, trainerFailed)).To(BeNil(), "the TrainJob did not fail")
		Expect(trainerCondition(Default, ctx, tj, trainerComplete)).To(BeNil())

		By("the workers finish: the JobSet completes and the TrainJob follows with its condition")
		for name := range after {
			exitWorker(ctx, ns, name, 0)
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
		trainerExpectJobsStatus(ctx, js, tj, jobset.ReplicatedJobStatus{Name: trainerNode, Succeeded: 1})
	})
})

// trainerScript returns tools/trainer/build.sh, or skips.
func trainerScript() string {
	script := os.Getenv("JOBSET_TRAINER_SH")
	if script == "" {
		Skip("the Trainer spec needs tools/trainer/build.sh and Trainer's build (JOBSET_TRAINER_SH and JOBSET_TRAINER_DIR, set by JOBSET_E2E_TRAINER=1 tools/e2e.sh)")
	}
	return script
}

// trainerRun runs tools/trainer/build.sh install or uninstall.
func trainerRun(ctx context.Context, command string) {
	start := time.Now()
	cmd := exec.CommandContext(ctx, trainerScript(), command)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+os.Getenv("KUBECONFIG"))
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	Expect(cmd.Run()).To(Succeed(), "tools/trainer/build.sh %s", command)
	AddReportEntry("trainer", fmt.Sprintf("trainer=%s trainer_s=%.1f", command, time.Since(start).Seconds()))
}

func trainerObject(kind, ns, name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetGroupVersionKind(trainerGV.WithKind(kind))
	obj.SetNamespace(ns)
	obj.SetName(name)
	return obj
}

// trainerRuntime creates a ClusterTrainingRuntime named ns, deleted after
// the spec, whose JobSet template restarts in place with the agent
// injected by our webhook: one replicatedJob, the trainer's, of the e2e
// worker (container "node", as Trainer requires), numNodes 2 by default.
func trainerRuntime(ctx context.Context, ns string) string {
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
				"replicatedJobs": []any{map[string]any{
					"name": trainerNode,
					"template": map[string]any{
						"metadata": map[string]any{
							"labels": map[string]any{trainerAncestorKey: trainerAncestorTrainer},
						},
						"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
							"serviceAccountName":            agentspec.ServiceAccountName,
							"restartPolicy":                 string(corev1.RestartPolicyNever),
							"terminationGracePeriodSeconds": int64(5),
							"volumes": []any{map[string]any{
								"name": "data", "emptyDir": map[string]any{},
							}},
							"containers": []any{map[string]any{
								"name":            trainerNode,
								"image":           "ghcr.io/fastjobset/e2e-worker:dev",
								"imagePullPolicy": string(corev1.PullIfNotPresent),
								"env": []any{map[string]any{
									"name":      "POD_UID",
									"valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.uid"}},
								}},
								"ports":        []any{map[string]any{"name": "control", "containerPort": int64(8081)}},
								"volumeMounts": []any{map[string]any{"name": "data", "mountPath": "/data"}},
							}},
						}}},
					},
				}},
			},
		},
	}
	Expect(k8sClient.Create(ctx, obj)).To(Succeed(), "ClusterTrainingRuntime %s", ns)
	DeferCleanup(func(ctx context.Context) {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, obj))).To(Succeed())
	})
	return ns
}

// trainerExpectApplied checks the JobSet as Trainer wrote it and our
// webhooks admitted it: written by server-side apply under Trainer's field
// manager, controlled by the TrainJob, the runtime's in-place restart and
// annotation kept, the trainer's replicatedJob sized from numNodes, and
// the agent injected.
func trainerExpectApplied(js *jobset.JobSet, tj *unstructured.Unstructured) {
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
	Expect(js.Spec.ReplicatedJobs).To(HaveLen(1))
	rj := js.Spec.ReplicatedJobs[0]
	Expect(rj.Name).To(Equal(trainerNode))
	Expect(rj.Replicas).To(Equal(int32(1)))
	Expect(ptr.Deref(rj.Template.Spec.Parallelism, 0)).To(Equal(int32(2)), "parallelism from numNodes")
	Expect(ptr.Deref(rj.Template.Spec.Completions, 0)).To(Equal(int32(2)), "completions from numNodes")
	var agent bool
	for _, c := range rj.Template.Spec.Template.Spec.InitContainers {
		agent = agent || c.Name == agentspec.ContainerName
	}
	Expect(agent).To(BeTrue(), "our webhook injected the agent into Trainer's JobSet")
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
// want alone and Trainer has copied it into the TrainJob's jobsStatus.
func trainerExpectJobsStatus(ctx context.Context, js *jobset.JobSet, tj *unstructured.Unstructured, want jobset.ReplicatedJobStatus) {
	Eventually(func(g Gomega) {
		g.Expect(getJobSet(ctx, js).Status.ReplicatedJobsStatus).To(Equal([]jobset.ReplicatedJobStatus{want}))
	}).Should(Succeed(), "JobSet %s replicatedJobsStatus", js.Name)
	Eventually(func(g Gomega) {
		got := trainerGet(g, ctx, tj)
		statuses, _, err := unstructured.NestedSlice(got.Object, "status", "jobsStatus")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(statuses).To(HaveLen(1))
		s, ok := statuses[0].(map[string]any)
		g.Expect(ok).To(BeTrue())
		g.Expect(s).To(Equal(map[string]any{
			"name": want.Name, "active": int64(want.Active), "ready": int64(want.Ready),
			"succeeded": int64(want.Succeeded), "failed": int64(want.Failed), "suspended": int64(want.Suspended),
		}))
	}).Should(Succeed(), "Trainer copies the replicatedJobsStatus into TrainJob %s", tj.GetName())
}

func trainerGet(g Gomega, ctx context.Context, obj *unstructured.Unstructured) *unstructured.Unstructured {
	got := trainerObject(obj.GetKind(), obj.GetNamespace(), obj.GetName())
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), got)).To(Succeed())
	return got
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
