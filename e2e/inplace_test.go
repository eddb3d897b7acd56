package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/images/manifest"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// podState is what an in-place restart must keep (the UID) and move on
// (restart counts).
type podState struct {
	uid      types.UID
	restarts map[string]int32
}

var _ = Describe("In-place group restart", func() {
	var ns string
	BeforeEach(func(ctx context.Context) {
		ns = agentNamespace(ctx)
	})

	It("restarts every Pod in place when one worker fails (seed story 1)", func(ctx context.Context) {
		js := example(ns, "story1-inplace.yaml")
		expectInPlaceGroupRestart(ctx, js)

		By("every Pod resolves every other Pod's JobSet DNS hostname, after the restart too")
		var pods corev1.PodList
		Expect(k8sClient.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
		for _, p := range pods.Items {
			workerStarts(ctx, ns, p.Name) // it serves
		}
		expectPeersResolve(ctx, Default, js)
	})

	It("does the same for a JobSet that only asks for InPlaceRestart and agent injection", func(ctx context.Context) {
		expectInPlaceGroupRestart(ctx, podTier(example(ns, "story1-injected.yaml")))
	})

	It("restarts the Pod of a crashed agent in place, and the group with it", func(ctx context.Context) {
		js := example(ns, "story1-inplace.yaml")
		// The worker crashes the agent: it has to see the agent's process.
		js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.ShareProcessNamespace = ptr.To(true)
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		before := waitForSyncedWorkers(ctx, js, 4)
		epoch := syncedEpoch(ctx, js)

		victim := anyPod(before)
		workerControl(ctx, ns, victim, "/kill", map[string]string{"name": "jobset-agent"})

		Eventually(func() int32 { return syncedEpoch(ctx, js) }).Should(Equal(epoch + 1))
		after := waitForSyncedWorkers(ctx, js, 4)
		for name, b := range before {
			Expect(after).To(HaveKey(name), "Pod %s restarts in place", name)
			Expect(after[name].uid).To(Equal(b.uid), "Pod %s restarts in place", name)
			Expect(after[name].restarts["worker"]).To(Equal(b.restarts["worker"]+1),
				"Pod %s: its worker restarts too, the crashed agent's included", name)
		}
	})

	It("fails the JobSet at once on the fatal exit code (seed story 2)", func(ctx context.Context) {
		js := example(ns, "story2-exit-codes.yaml")
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		pods := waitForSyncedWorkers(ctx, js, 4)

		exitWorker(ctx, ns, anyPod(pods), 42)
		Eventually(func(g Gomega) {
			got := getJobSet(ctx, js)
			g.Expect(got.Status.TerminalState).To(Equal(string(jobset.JobSetFailed)))
			g.Expect(got.Status.InPlaceRestarts).To(BeZero(), "no group restart before failing")
		}).Should(Succeed())
	})

	It("replaces the Pod whose worker exits with the recreate code and restarts the others in place (seed story 2)", func(ctx context.Context) {
		js := example(ns, "story2-exit-codes.yaml")
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		before := waitForSyncedWorkers(ctx, js, 4)
		epoch := syncedEpoch(ctx, js)

		victim := anyPod(before)
		exitWorker(ctx, ns, victim, 43)
		Eventually(func() int32 { return syncedEpoch(ctx, js) }).Should(BeNumerically(">", epoch))
		after := waitForSyncedWorkers(ctx, js, 4)
		Expect(after).NotTo(HaveKey(victim), "the failed Pod is replaced")
		for name, b := range before {
			if name == victim {
				continue
			}
			Expect(after).To(HaveKey(name), "Pod %s restarts in place", name)
			Expect(after[name].uid).To(Equal(b.uid), "Pod %s restarts in place", name)
			Expect(after[name].restarts["worker"]).To(Equal(b.restarts["worker"] + 1))
		}
	})

	It("fails the JobSet with the in-place message once the restart budget is spent", func(ctx context.Context) {
		js := example(ns, "story1-inplace.yaml")
		js.Spec.FailurePolicy.MaxRestarts = 0
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		pods := waitForSyncedWorkers(ctx, js, 4)

		exitWorker(ctx, ns, anyPod(pods), 1)
		Eventually(func(g Gomega) {
			got := getJobSet(ctx, js)
			g.Expect(got.Status.TerminalState).To(Equal(string(jobset.JobSetFailed)))
			failed := meta.FindStatusCondition(got.Status.Conditions, string(jobset.JobSetFailed))
			g.Expect(failed).NotTo(BeNil())
			g.Expect(failed.Reason).To(Equal(jobset.ReasonReachedMaxRestarts))
			// Community JobSet's message on the condition; ours, naming
			// in-place restarts, on the event.
			g.Expect(failed.Message).To(Equal(jobset.MessageReachedMaxRestarts))
			var events eventsv1.EventList
			g.Expect(k8sClient.List(ctx, &events, client.InNamespace(ns))).To(Succeed())
			g.Expect(events.Items).To(ContainElement(And(
				HaveField("Reason", jobset.ReasonReachedMaxRestarts),
				HaveField("Note", ContainSubstring("in-place group restart would exceed failurePolicy.maxRestarts")))))
		}).Should(Succeed())
	})

	It("still restarts by recreating every Pod with Recreate and backoffLimit 0", func(ctx context.Context) {
		rj := workerReplicatedJob("workers").Replicas(2).Pods(2).Obj()
		rj.Template.Spec.BackoffLimit = ptr.To[int32](0)
		js := wrappers.MakeJobSet("recreate", ns).MaxRestarts(3).ReplicatedJob(rj).Obj()
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		before := waitForSyncedWorkers(ctx, js, 4)

		exitWorker(ctx, ns, anyPod(before), 1)
		Eventually(func() int32 { return getJobSet(ctx, js).Status.Restarts }).Should(Equal(int32(1)))
		By("every Pod is recreated")
		for name := range before {
			Eventually(func() bool {
				var p corev1.Pod
				err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p)
				return apierrors.IsNotFound(err) || p.DeletionTimestamp != nil
			}).Should(BeTrue(), "Pod %s of the first attempt goes", name)
		}
		after := waitForSyncedWorkers(ctx, js, 4)
		for name := range before {
			Expect(after).NotTo(HaveKey(name))
		}
	})
})

// expectInPlaceGroupRestart runs js until its 4 workers are synced, makes
// one fail with code 1, and checks the group restarted in place: same Pod
// UIDs, every container's restart count + 1, syncedEpoch + 1, every worker
// running again, and the emptyDir kept.
func expectInPlaceGroupRestart(ctx context.Context, js *jobset.JobSet) {
	Expect(k8sClient.Create(ctx, js)).To(Succeed())
	after := restartGroupInPlace(ctx, js, waitForSyncedWorkers(ctx, js, 4))
	for name, state := range after {
		// Each line names the Pod UID of the worker that wrote it.
		starts := workerStarts(ctx, js.Namespace, name)
		Expect(strings.Count(starts, "\n")).To(Equal(2),
			"Pod %s (UID %s): the emptyDir keeps the first start's record; its worker's start log:\n%s", name, state.uid, starts)
	}
	Expect(getJobSet(ctx, js).Status.InPlaceRestarts).To(Equal(int32(1)))
}

// restartGroupInPlace makes one of the synced workers exit 1 and waits
// until the group re-synced at the next epoch with the same Pods, every
// container of each restarted once; returns their state then.
func restartGroupInPlace(ctx context.Context, js *jobset.JobSet, before map[string]podState) map[string]podState {
	epoch := syncedEpoch(ctx, js)
	By("one worker exits with code 1")
	exitWorker(ctx, js.Namespace, anyPod(before), 1)

	By("the group restarts in place and re-syncs at the next epoch")
	Eventually(func() int32 { return syncedEpoch(ctx, js) }).Should(Equal(epoch + 1))
	return waitForRestartedInPlace(ctx, js, before)
}

// waitForRestartedInPlace waits until the Pods of before run again, the
// same Pods, every container of each restarted once, and returns their
// state. A kubelet that could not reach the API server meanwhile posts the
// restart late: until then the Pods show their status from before it.
func waitForRestartedInPlace(ctx context.Context, js *jobset.JobSet, before map[string]podState) map[string]podState {
	var after map[string]podState
	Eventually(func(g Gomega) {
		after = waitForSyncedWorkers(ctx, js, len(before))
		for name, b := range before {
			a, ok := after[name]
			g.Expect(ok).To(BeTrue(), "Pod %s was replaced", name)
			g.Expect(a.uid).To(Equal(b.uid), "Pod %s was recreated", name)
			for c, n := range b.restarts {
				g.Expect(a.restarts[c]).To(Equal(n+1), "Pod %s container %s restarted %d times, want %d", name, c, a.restarts[c], n+1)
			}
		}
	}).WithTimeout(2 * time.Minute).Should(Succeed())
	return after
}

// workerReplicatedJob is a replicatedJob of the e2e worker alone (no
// agent), its start log on an emptyDir.
func workerReplicatedJob(name string) *wrappers.ReplicatedJobWrapper {
	rj := wrappers.MakeReplicatedJob(name)
	pod := &rj.Template.Spec.Template.Spec
	pod.TerminationGracePeriodSeconds = ptr.To[int64](5)
	pod.Containers[0].Image = "ghcr.io/fastjobset/e2e-worker:dev"
	pod.Containers[0].ImagePullPolicy = corev1.PullIfNotPresent
	pod.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	pod.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	return rj
}

func getJobSet(ctx context.Context, js *jobset.JobSet) *jobset.JobSet {
	got := &jobset.JobSet{}
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), got)).To(Succeed())
	return got
}

// example returns the JobSet of docs/examples/<file>, in namespace ns.
func example(ns, file string) *jobset.JobSet {
	root, err := framework.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	js := &jobset.JobSet{}
	Expect(manifest.ReadObject(filepath.Join(root, "docs", "examples", file), js)).To(Succeed())
	js.Namespace = ns
	return js
}

// waitForSyncedWorkers waits until want Pods of js run with every container
// started and the barrier lifted, and returns their state by name.
func waitForSyncedWorkers(ctx context.Context, js *jobset.JobSet, want int) map[string]podState {
	var states map[string]podState
	Eventually(func(g Gomega) {
		states = runningWorkers(g, ctx, js)
		g.Expect(states).To(HaveLen(want))
	}).Should(Succeed())
	return states
}

// runningWorkers is the state of js's running Pods by name, each with
// every container running and started (the barrier lifted), but for init
// containers that ran to completion before the others started (the worker
// wrapper's installer), which are left out.
func runningWorkers(g Gomega, ctx context.Context, js *jobset.JobSet) map[string]podState {
	var pods corev1.PodList
	g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(js.Namespace),
		client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
	states := map[string]podState{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		s := podState{uid: p.UID, restarts: map[string]int32{}}
		for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			if runsToCompletion(p, cs.Name) {
				g.Expect(cs.State.Terminated).NotTo(BeNil(), "%s/%s still runs", p.Name, cs.Name)
				g.Expect(cs.State.Terminated.ExitCode).To(BeZero(), "%s/%s failed", p.Name, cs.Name)
				continue
			}
			g.Expect(cs.State.Running).NotTo(BeNil(), "%s/%s not running", p.Name, cs.Name)
			g.Expect(ptr.Deref(cs.Started, false)).To(BeTrue(), "%s/%s not started (barrier)", p.Name, cs.Name)
			s.restarts[cs.Name] = cs.RestartCount
		}
		states[p.Name] = s
	}
	return states
}

// runsToCompletion: the Pod's container name is an init container that is
// not a sidecar.
func runsToCompletion(pod corev1.Pod, name string) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return ptr.Deref(c.RestartPolicy, "") != corev1.ContainerRestartPolicyAlways
		}
	}
	return false
}

func syncedEpoch(ctx context.Context, js *jobset.JobSet) int32 {
	return ptr.Deref(getJobSet(ctx, js).Status.SyncedEpoch, 0)
}

func anyPod(states map[string]podState) string {
	for name := range states {
		return name
	}
	Fail("no Pods")
	return ""
}

// exitWorker makes the worker of Pod name exit with code, through the API
// server's Pod proxy.
func exitWorker(ctx context.Context, ns, name string, code int) {
	workerControl(ctx, ns, name, "/exit", map[string]string{"code": strconv.Itoa(code)})
}

// workerControl sends one request to the worker's control port, once the
// worker serves it: a container counts as started when its process does,
// before its server listens (the API server's proxy then answers 503). The
// request itself is sent once, as /exit and /kill must not repeat.
func workerControl(ctx context.Context, ns, name, path string, params map[string]string) {
	workerStarts(ctx, ns, name)
	_, err := clientset.CoreV1().Pods(ns).ProxyGet("http", name, "8081", path, params).DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred(), "%s on the worker of Pod %s", path, name)
}

// workerStarts returns the worker's start log, kept on its emptyDir.
func workerStarts(ctx context.Context, ns, name string) string {
	var out []byte
	Eventually(func() error {
		var err error
		out, err = clientset.CoreV1().Pods(ns).ProxyGet("http", name, "8081", "/starts", nil).DoRaw(ctx)
		return err
	}).Should(Succeed())
	return string(out)
}

// agentNamespace is a testNamespace with the agent's RBAC applied, for
// specs whose JobSets run the agent.
func agentNamespace(ctx context.Context) string {
	ns := testNamespace(ctx)
	Expect(manifest.Apply(ctx, k8sClient, agentRBAC, ns)).To(Succeed())
	return ns
}

// testNamespace creates a namespace for one spec, deleted after it; when
// the spec failed, what it left there is written out first.
func testNamespace(ctx context.Context) string {
	ns := framework.TestNamespace(ctx, k8sClient, "e2e")
	DeferCleanup(func(ctx context.Context) {
		if CurrentSpecReport().Failed() {
			dumpNamespace(ctx, ns)
		}
		Expect(k8sClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	})
	return ns
}

// dumpNamespace writes what a failed spec leaves behind: the JobSets'
// status, each Pod's epoch and containers, and the events, in time order.
func dumpNamespace(ctx context.Context, ns string) {
	var jobSets jobset.JobSetList
	if err := k8sClient.List(ctx, &jobSets, client.InNamespace(ns)); err == nil {
		for _, js := range jobSets.Items {
			GinkgoWriter.Printf("JobSet %s: synced %d deprecated %d inPlaceRestarts %d restarts %d terminal %q\n",
				js.Name, ptr.Deref(js.Status.SyncedEpoch, 0), ptr.Deref(js.Status.DeprecatedEpoch, 0),
				js.Status.InPlaceRestarts, js.Status.Restarts, js.Status.TerminalState)
			for _, c := range js.Status.Conditions {
				GinkgoWriter.Printf("  %s=%s %s: %s (%s)\n", c.Type, c.Status, c.Reason, c.Message, c.LastTransitionTime.UTC().Format("15:04:05"))
			}
		}
	}
	var pods corev1.PodList
	if err := k8sClient.List(ctx, &pods, client.InNamespace(ns)); err == nil {
		for _, p := range pods.Items {
			deleting := ""
			if p.DeletionTimestamp != nil {
				deleting = " deleting since " + p.DeletionTimestamp.UTC().Format("15:04:05")
			}
			GinkgoWriter.Printf("Pod %s (uid %.8s) %s epoch %q%s finalizers %v\n", p.Name, p.UID, p.Status.Phase,
				p.Annotations[jobset.EpochKey], deleting, p.Finalizers)
			for _, c := range p.Status.Conditions {
				if c.Status == corev1.ConditionTrue && c.Type != corev1.PodScheduled && c.Type != corev1.PodInitialized {
					GinkgoWriter.Printf("  %s %s (%s)\n", c.Type, c.Reason, c.LastTransitionTime.UTC().Format("15:04:05"))
				}
			}
			for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
				last := ""
				if t := cs.LastTerminationState.Terminated; t != nil {
					last = fmt.Sprintf(" last: exit %d %s at %s", t.ExitCode, t.Reason, t.FinishedAt.UTC().Format("15:04:05"))
				}
				GinkgoWriter.Printf("  %s restarts %d started %v%s\n", cs.Name, cs.RestartCount, ptr.Deref(cs.Started, false), last)
			}
		}
	}
	var jobs batchv1.JobList
	if err := k8sClient.List(ctx, &jobs, client.InNamespace(ns)); err == nil {
		for _, j := range jobs.Items {
			GinkgoWriter.Printf("Job %s active %d ready %d terminating %d failed %d succeeded %d completed %q uncounted %v\n",
				j.Name, j.Status.Active, ptr.Deref(j.Status.Ready, 0), ptr.Deref(j.Status.Terminating, 0), j.Status.Failed,
				j.Status.Succeeded, j.Status.CompletedIndexes, j.Status.UncountedTerminatedPods)
		}
	}
	var nodes corev1.NodeList
	if err := k8sClient.List(ctx, &nodes); err == nil {
		for _, n := range nodes.Items {
			ready := corev1.ConditionUnknown
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					ready = c.Status
				}
			}
			var taints []string
			for _, t := range n.Spec.Taints {
				taints = append(taints, t.ToString())
			}
			GinkgoWriter.Printf("Node %s Ready=%s unschedulable %v taints %v\n", n.Name, ready, n.Spec.Unschedulable, taints)
		}
	}
	dumpControllerLog(ctx, ns)
	dumpWaitingAgentLogs(ctx, pods.Items)
	events, err := clientset.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err == nil {
		sort.Slice(events.Items, func(i, j int) bool { return events.Items[i].LastTimestamp.Before(&events.Items[j].LastTimestamp) })
		for _, e := range events.Items {
			GinkgoWriter.Printf("%s %s/%s %s: %s\n", e.LastTimestamp.UTC().Format("15:04:05"), e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
}

// dumpWaitingAgentLogs writes the last lines of the agent's log of each
// Pod whose agent has not lifted its barrier (no container started but
// the agent): why it did not join or lift is there; and of the agent
// before, of every Pod whose agent restarted: why the Pod restarted (a
// fence, a deprecation) is there, even once the Pod runs again.
func dumpWaitingAgentLogs(ctx context.Context, pods []corev1.Pod) {
	for _, p := range pods {
		if p.Status.Phase != corev1.PodPending && p.Status.Phase != corev1.PodRunning {
			continue
		}
		waiting := len(p.Status.ContainerStatuses) == 0
		for _, cs := range p.Status.ContainerStatuses {
			waiting = waiting || !ptr.Deref(cs.Started, false)
		}
		restarted := slices.ContainsFunc(append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...),
			func(cs corev1.ContainerStatus) bool { return cs.Name == agentspec.ContainerName && cs.RestartCount > 0 })
		for _, previous := range []bool{true, false} {
			if (previous && !restarted) || (!previous && !waiting) {
				continue
			}
			who := "agent of " + p.Name
			if previous {
				who = "previous " + who
			}
			dumpLog(ctx, who, p.Namespace, p.Name, agentspec.ContainerName, previous)
		}
	}
}

// dumpLogs writes the last lines of the log of each container named, of
// one Pod.
func dumpLogs(ctx context.Context, ns, pod string, containers ...string) {
	for _, c := range containers {
		dumpLog(ctx, c+" of "+pod, ns, pod, c, false)
	}
}

// dumpLog writes the last lines of a container's log, each after who.
func dumpLog(ctx context.Context, who, ns, pod, container string, previous bool) {
	const lines = 30
	log, err := podLog(ctx, ns, pod, container, previous)
	if err != nil {
		GinkgoWriter.Printf("%s: no log: %v\n", who, err)
		return
	}
	all := strings.Split(strings.TrimRight(log, "\n"), "\n")
	for _, line := range all[max(0, len(all)-lines):] {
		GinkgoWriter.Printf("%s: %s\n", who, line)
	}
}

// dumpControllerLog writes the controller replicas' log lines that name the
// namespace (what each reconcile decided, beside the objects' final state)
// and their leadership's: a term that ends starts the next with new caches
// and a node-loss tracker that has heard no node yet.
func dumpControllerLog(ctx context.Context, ns string) {
	var pods corev1.PodList
	if err := k8sClient.List(ctx, &pods, client.InNamespace("jobset-system")); err != nil {
		return
	}
	for _, p := range pods.Items {
		if !strings.HasPrefix(p.Name, "jobset-controller") {
			continue
		}
		log, err := podLog(ctx, p.Namespace, p.Name, "", false)
		if err != nil {
			GinkgoWriter.Printf("controller %s: no log: %v\n", p.Name, err)
			continue
		}
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, ns) || strings.Contains(line, `"logger":"leadership"`) {
				GinkgoWriter.Printf("controller %s: %s\n", p.Name, line)
			}
		}
	}
}
