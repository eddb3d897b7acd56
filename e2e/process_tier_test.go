package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// The process tier's escalation ladder (docs/controller.md, "The process
// tier"): the wrapper's stop first, the Pod tier (the kubelet's
// RestartAllContainers) when the stop cannot be confirmed or a piece of
// the machinery dies. The specs look at the node's processes from the
// host's /proc and through its containerd: the local cluster's nodes share
// the host's PID namespace (label local-cluster).
var _ = Describe("Process tier escalation", Label("local-cluster"), func() {
	var (
		ns    string
		plane *localControlPlane
	)
	BeforeEach(func(ctx context.Context) {
		plane = localPlane() // skips the spec off the local cluster
		ns = agentNamespace(ctx)
	})

	It("climbs the ladder in the process tier: strays and an exec session killed before the next epoch, an unkillable process, a killed wrapper and a killed agent each escalated to the Pod tier, every group restart counted once", func(ctx context.Context) {
		js := example(ns, "story1-injected.yaml")
		// The worker runs as a user of its own without capabilities, as
		// the restricted Pod Security Standard has it: then the wrapper
		// cannot signal a process of another user in its container.
		js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].SecurityContext = restrictedAs(1000)
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		before := waitForSyncedWorkers(ctx, js, 4)
		names := sortedNames(before)
		workers := map[string]string{} // Pod: worker container ID
		for _, name := range names {
			workers[name] = containerID(getPod(ctx, ns, name), "worker")
		}

		By("(1) every worker ignores SIGTERM and leaves two strays, one in a session of its own; one exits 1")
		tag := fmt.Sprintf("%s-%d", ns, time.Now().UnixNano())
		for _, name := range names {
			workerControl(ctx, ns, name, "/stray", map[string]string{"n": "2", "tag": tag})
		}
		old := workerTrees(slices.Collect(maps.Values(workers)), tag)
		// Each container: the worker and its two strays (the wrapper
		// stays, and is not counted).
		Expect(old).To(HaveLen(4*3), "the old trees, as the host sees them: %v", old)
		epoch := syncedEpoch(ctx, js)
		start := time.Now()
		exitWorker(ctx, ns, names[0], 1)
		expectOldGoneBeforeNext(ctx, js, epoch, workers, tag, old)
		took := time.Since(start)
		By("containerd lists none of the old processes in the worker containers, which did not restart")
		for _, name := range names {
			pids := taskPIDs(ctx, plane, getPod(ctx, ns, name).Spec.NodeName, workers[name])
			for id := range old {
				pid, _, _ := strings.Cut(id, "/")
				Expect(pids).NotTo(ContainElement(pid), "Pod %s: %s of the old tree", name, old[id])
			}
		}
		after := expectProcessTierRestart(ctx, js, before)
		Expect(getJobSet(ctx, js).Status.InPlaceRestarts).To(Equal(int32(1)))
		By("the completed restart's event says how its members came back")
		Eventually(func(g Gomega) []string {
			events, err := clientset.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			var messages []string
			for _, e := range events.Items {
				messages = append(messages, e.Message)
			}
			return messages
		}).Should(ContainElement(HaveSuffix("(" + inplace.Tiers{Process: 4}.String() + ")")))
		AddReportEntry("ladder (1) strays", ReportEntryVisibilityAlways,
			fmt.Sprintf("process_tier_strays_exit_to_synced_s=%.1f", took.Seconds()))

		By("(2) an exec session in " + names[0] + "'s worker container, as the worker's user, and a peer's worker exits 1")
		// Started through the node's containerd, as kubectl exec is: its
		// parent is the runtime's shim, outside the container, so it is
		// neither the wrapper's descendant nor in the worker's process
		// group. The wrapper, PID 1 of the container's PID namespace,
		// finds it there, on cgroup v1 as on v2.
		sessionTag := tag + "-session"
		plane.ctr(ctx, getPod(ctx, ns, names[0]).Spec.NodeName, "tasks", "exec", "--detach", "--user", "1000:1000",
			"--exec-id", "session-"+strconv.FormatInt(time.Now().UnixNano(), 36), workers[names[0]], "/worker", "-session", sessionTag)
		Eventually(func() []string { return nodeProcesses(nil, sessionTag) }).Should(HaveLen(1), "the exec session in %s's worker container", names[0])
		old = workerTrees(slices.Collect(maps.Values(workers)), sessionTag)
		Expect(old).To(HaveLen(4+1), "the workers and the exec session, as the host sees them: %v", old)
		epoch = syncedEpoch(ctx, js)
		exitWorker(ctx, ns, names[3], 1)
		expectOldGoneBeforeNext(ctx, js, epoch, workers, sessionTag, old)
		after = expectProcessTierRestart(ctx, js, after)
		Expect(getJobSet(ctx, js).Status.InPlaceRestarts).To(Equal(int32(2)))

		By("(3) a process the wrapper cannot kill in " + names[1] + "'s worker container, and a peer's worker exits 1")
		// A stray of root's, started through the node's containerd in the
		// worker's container, whose parent exits at once: it re-parents
		// to the wrapper, PID 1 of the container's PID namespace, which,
		// as another user without CAP_KILL, gets EPERM for it, as it would
		// get nothing out of a process in uninterruptible sleep. The
		// wrapper never confirms the stop, the agent escalates after its
		// bound, and the kubelet's restart of the Pod ends the PID
		// namespace and the stray with it.
		victim := names[1]
		node := getPod(ctx, ns, victim).Spec.NodeName
		rootTag := tag + "-root"
		plane.ctr(ctx, node, "tasks", "exec", "--detach", "--user", "0:0", "--exec-id", "orphan-"+strconv.FormatInt(time.Now().UnixNano(), 36),
			workers[victim], "/worker", "-orphan", rootTag)
		var unkillable []string
		Eventually(func() []string {
			unkillable = nodeProcesses(nil, rootTag)
			return unkillable
		}).Should(HaveLen(1), "root's stray in %s's worker container", victim)
		// The stray shows before its parent has exited: wait for the parent.
		Eventually(func() map[string]string { return workerTrees([]string{workers[victim]}, rootTag) }).
			Should(HaveLen(2), "%s's worker and root's stray, in the container's cgroup", victim)
		// The kubelet removes the restarted containers and their logs: the
		// victim's agent's is read as it is written.
		agentLog := followLog(ctx, ns, victim, agentspec.ContainerName)
		epoch, start = syncedEpoch(ctx, js), time.Now()
		exitWorker(ctx, ns, names[2], 1)
		Eventually(func() int32 { return syncedEpoch(ctx, js) }).WithTimeout(2 * time.Minute).Should(Equal(epoch + 1))
		took = time.Since(start)
		after = expectEscalated(ctx, js, after, victim)
		Expect(nodeProcesses(nil, rootTag)).To(BeEmpty(), "the kubelet's restart ended the process the wrapper could not")
		Expect(agentLog.wait()).To(ContainSubstring("The worker's wrapper did not confirm the stop in time"), "the agent of %s escalated for the stop it could not confirm", victim)
		Expect(getJobSet(ctx, js).Status.InPlaceRestarts).To(Equal(int32(3)))
		AddReportEntry("ladder (3) unkillable", ReportEntryVisibilityAlways,
			fmt.Sprintf("process_tier_unkillable_exit_to_synced_s=%.1f", took.Seconds()))

		By("(4) the wrapper of " + names[2] + " killed (SIGKILL through the node's containerd)")
		victim = names[2]
		epoch, start = syncedEpoch(ctx, js), time.Now()
		pod := getPod(ctx, ns, victim)
		plane.ctr(ctx, pod.Spec.NodeName, "tasks", "kill", "--signal", "SIGKILL", containerID(pod, "worker"))
		Eventually(func() int32 { return syncedEpoch(ctx, js) }).WithTimeout(2 * time.Minute).Should(Equal(epoch + 1))
		took = time.Since(start)
		after = expectEscalated(ctx, js, after, victim)
		Expect(getJobSet(ctx, js).Status.InPlaceRestarts).To(Equal(int32(4)))
		AddReportEntry("ladder (4) wrapper killed", ReportEntryVisibilityAlways,
			fmt.Sprintf("process_tier_wrapper_killed_to_synced_s=%.1f", took.Seconds()))

		By("(5) the agent of " + names[3] + " killed (SIGKILL through the node's containerd)")
		victim = names[3]
		epoch, start = syncedEpoch(ctx, js), time.Now()
		pod = getPod(ctx, ns, victim)
		plane.ctr(ctx, pod.Spec.NodeName, "tasks", "kill", "--signal", "SIGKILL", containerID(pod, agentspec.ContainerName))
		Eventually(func() int32 { return syncedEpoch(ctx, js) }).WithTimeout(2 * time.Minute).Should(Equal(epoch + 1))
		took = time.Since(start)
		expectEscalated(ctx, js, after, victim)
		Expect(getJobSet(ctx, js).Status.InPlaceRestarts).To(Equal(int32(5)))
		AddReportEntry("ladder (5) agent killed", ReportEntryVisibilityAlways,
			fmt.Sprintf("process_tier_agent_killed_to_synced_s=%.1f", took.Seconds()))
	})

	It("keeps story 2's exit codes in the process tier: the replace code replaces the Pod, the fatal code fails the JobSet, neither restarts its worker in place", func(ctx context.Context) {
		js := processTierStory2(ns)
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		before := waitForSyncedWorkers(ctx, js, 4)
		for name := range before {
			Expect(getPod(ctx, ns, name).Spec.Containers[0].Command[0]).To(Equal(agentspec.WrapperBinary), "Pod %s runs its worker under the wrapper", name)
		}
		names := sortedNames(before)

		By("exit 43: the Pod fails with its worker's code and is replaced; the others restart their workers' processes")
		epoch, start := syncedEpoch(ctx, js), time.Now()
		victim := names[0]
		exitWorker(ctx, ns, victim, 43)
		Eventually(func() int32 { return syncedEpoch(ctx, js) }).Should(BeNumerically(">", epoch))
		took := time.Since(start)
		after := waitForSyncedWorkers(ctx, js, 4)
		Expect(after).NotTo(HaveKey(victim), "the failed Pod is replaced")
		// The Job keeps its failed Pod: the replacement has a name of its own.
		failed := getPod(ctx, ns, victim)
		Expect(failed.UID).To(Equal(before[victim].uid))
		Expect(failed.Status.Phase).To(Equal(corev1.PodFailed))
		worker := containerStatus(failed, "worker")
		Expect(worker.State.Terminated).NotTo(BeNil(), "the worker container of the failed Pod ended")
		Expect(worker.State.Terminated.ExitCode).To(BeEquivalentTo(43), "the wrapper exits with its worker's code")
		Expect(worker.RestartCount).To(Equal(before[victim].restarts["worker"]), "not restarted in place")
		for _, name := range names[1:] {
			Expect(after).To(HaveKey(name), "Pod %s restarts in place", name)
			Expect(after[name].uid).To(Equal(before[name].uid), "Pod %s restarts in place", name)
			Expect(after[name].restarts).To(Equal(before[name].restarts), "Pod %s restarts its worker's process, no container", name)
			Expect(strings.Count(workerStarts(ctx, ns, name), "\n")).To(Equal(2), "Pod %s: a second start in the same container", name)
		}
		restarts := getJobSet(ctx, js).Status.InPlaceRestarts
		AddReportEntry("story 2 (43)", ReportEntryVisibilityAlways,
			fmt.Sprintf("process_tier_replace_code_to_synced_s=%.1f", took.Seconds()))

		By("exit 42: the JobSet fails at once, no group restart before")
		victim = sortedNames(after)[0]
		start = time.Now()
		exitWorker(ctx, ns, victim, 42)
		Eventually(func(g Gomega) {
			got := getJobSet(ctx, js)
			g.Expect(got.Status.TerminalState).To(Equal(string(jobset.JobSetFailed)))
			g.Expect(got.Status.InPlaceRestarts).To(Equal(restarts), "no group restart before failing")
		}).Should(Succeed())
		AddReportEntry("story 2 (42)", ReportEntryVisibilityAlways,
			fmt.Sprintf("process_tier_fatal_code_to_failed_s=%.1f", time.Since(start).Seconds()))
	})
})

// processTierStory2 is story 2 (docs/examples/story2-exit-codes.yaml) with
// the agent injected instead of written out, so that its worker, which
// names its command, runs under the wrapper: the process tier.
func processTierStory2(ns string) *jobset.JobSet {
	js := example(ns, "story2-exit-codes.yaml")
	if js.Annotations == nil {
		js.Annotations = map[string]string{}
	}
	js.Annotations[jobset.InjectAgentKey] = "true"
	pod := &js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
	pod.InitContainers = nil
	pod.ServiceAccountName = ""
	pod.AutomountServiceAccountToken = nil
	pod.Volumes = slices.DeleteFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == "jobset-agent-token" })
	pod.Containers[0].Command = []string{"/worker"}
	return js
}

// expectOldGoneBeforeNext waits until the group synced past epoch and
// every worker container runs the next attempt, and fails at once if a
// look finds a process of old beside either. Each look reads the epoch
// first: a process of old seen in a look that found the epoch synced, or
// a worker of the next attempt running, ran beside the next epoch.
func expectOldGoneBeforeNext(ctx context.Context, js *jobset.JobSet, epoch int32, workers map[string]string, tag string, old map[string]string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		synced := syncedEpoch(ctx, js) > epoch
		now := workerTrees(slices.Collect(maps.Values(workers)), tag)
		var left, next []string
		for id, argv := range now {
			if _, ok := old[id]; ok {
				left = append(left, id+" "+argv)
			} else if argv == "/worker" {
				next = append(next, id)
			}
		}
		if (synced || len(next) > 0) && len(left) > 0 {
			StopTrying(fmt.Sprintf("processes of the old trees %v run beside the next epoch (synced %t, next workers %v)", left, synced, next)).Now()
		}
		g.Expect(synced).To(BeTrue())
		g.Expect(next).To(HaveLen(len(workers)), "the next attempt's workers")
	}).WithTimeout(2 * time.Minute).WithPolling(50 * time.Millisecond).Should(Succeed())
	Expect(syncedEpoch(ctx, js)).To(Equal(epoch + 1))
}

// expectProcessTierRestart waits until the Pods of before run again, the
// same Pods with no container restarted, and returns their state.
func expectProcessTierRestart(ctx context.Context, js *jobset.JobSet, before map[string]podState) map[string]podState {
	after := waitForSyncedWorkers(ctx, js, len(before))
	for name, b := range before {
		Expect(after).To(HaveKey(name), "Pod %s was replaced", name)
		Expect(after[name].uid).To(Equal(b.uid), "Pod %s was recreated", name)
		Expect(after[name].restarts).To(Equal(b.restarts), "Pod %s: restartCounts", name)
	}
	expectJoinedBy(ctx, js, "")
	return after
}

// expectJoinedBy: every Pod of the JobSet reports, on its worker-restarts
// annotation, that it joined the synced epoch by restarting its worker's
// process, podTier's by a restart of its containers.
func expectJoinedBy(ctx context.Context, js *jobset.JobSet, podTier string) {
	GinkgoHelper()
	synced := syncedEpoch(ctx, js)
	var pods corev1.PodList
	Expect(k8sClient.List(ctx, &pods, client.InNamespace(js.Namespace), client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
	for _, pod := range pods.Items {
		value := pod.Annotations[agentspec.WorkerRestartsAnnotation]
		report, err := agentspec.ParseWorkerRestarts(value)
		Expect(err).NotTo(HaveOccurred(), "Pod %s: %s %q", pod.Name, agentspec.WorkerRestartsAnnotation, value)
		want := agentspec.TierProcess
		if pod.Name == podTier {
			want = agentspec.TierPod
		}
		Expect(report.Epoch).To(Equal(synced), "Pod %s: the epoch of its report %q", pod.Name, value)
		Expect(report.Tier).To(Equal(want), "Pod %s: how it joined, by its report %q", pod.Name, value)
	}
}

// expectEscalated waits until the Pods of before run again, the same
// Pods: victim's every container restarted once (the Pod tier), the
// others' none (the process tier). It returns their state.
func expectEscalated(ctx context.Context, js *jobset.JobSet, before map[string]podState, victim string) map[string]podState {
	var after map[string]podState
	Eventually(func(g Gomega) {
		after = runningWorkers(g, ctx, js)
		g.Expect(after).To(HaveLen(len(before)))
		for name, b := range before {
			a, ok := after[name]
			g.Expect(ok).To(BeTrue(), "Pod %s was replaced", name)
			g.Expect(a.uid).To(Equal(b.uid), "Pod %s was recreated", name)
			for c, n := range b.restarts {
				want := n
				if name == victim {
					want++
				}
				g.Expect(a.restarts[c]).To(Equal(want), "Pod %s container %s restarted %d times, want %d", name, c, a.restarts[c], want)
			}
		}
	}).WithTimeout(2 * time.Minute).Should(Succeed())
	expectJoinedBy(ctx, js, victim)
	return after
}

// restrictedAs is a container's security context under the restricted Pod
// Security Standard, running as uid.
func restrictedAs(uid int64) *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		RunAsUser:                ptr.To(uid),
		RunAsGroup:               ptr.To(uid),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// workerTrees lists, from the host's /proc, what runs of the workers in
// the containers (their runtime IDs name their cgroups) but their
// wrappers, and every stray tagged tag, by "pid/start time" (a PID the
// kernel gives again is another process) with its argv.
func workerTrees(containers []string, tag string) map[string]string {
	found := map[string]string{}
	for _, p := range nodeProcesses(containers, tag) {
		pid, argv, _ := strings.Cut(p, " ")
		if strings.HasPrefix(argv, agentspec.WrapperBinary) {
			continue
		}
		if started, ok := startTime(pid); ok {
			found[pid+"/"+started] = argv
		}
	}
	return found
}

// startTime is field 22 of /proc/<pid>/stat: when the process started, in
// clock ticks since boot.
func startTime(pid string) (string, bool) {
	stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return "", false
	}
	end := bytes.LastIndexByte(stat, ')')
	fields := strings.Fields(string(stat[end+1:]))
	if end < 0 || len(fields) < 20 {
		return "", false
	}
	return fields[19], true
}

// taskPIDs are the host PIDs that the node's containerd lists in a
// container's task.
func taskPIDs(ctx context.Context, plane *localControlPlane, node, container string) []string {
	var pids []string
	for _, line := range strings.Split(plane.ctr(ctx, node, "tasks", "ps", container), "\n")[1:] {
		if fields := strings.Fields(line); len(fields) > 0 {
			pids = append(pids, fields[0])
		}
	}
	Expect(pids).NotTo(BeEmpty(), "containerd lists no process of %s: not even its wrapper", container)
	return pids
}
