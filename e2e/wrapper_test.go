package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// Story 1 with agent injection, whose worker names its command, runs each
// worker under the worker wrapper. The specs read the node's processes
// from the host's /proc: the local cluster's nodes share the host's PID
// namespace (label local-cluster; elsewhere the host sees no node's
// processes).
var _ = Describe("Worker wrapper", Label("local-cluster"), func() {
	var ns string
	BeforeEach(func(ctx context.Context) {
		localPlane() // skips the spec off the local cluster
		ns = agentNamespace(ctx)
	})

	It("restarts the worker's process in the process tier: a worker killed, the group re-syncs with every container's restartCount unchanged and every agent's process the same", func(ctx context.Context) {
		js := example(ns, "story1-injected.yaml")
		Expect(js.Annotations).NotTo(HaveKey(jobset.RestartTierKey), "the example runs the process tier by default")
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		before := waitForSyncedWorkers(ctx, js, 4)
		agents := map[string]string{}
		for name := range before {
			agents[name] = containerID(getPod(ctx, ns, name), agentspec.ContainerName)
			Expect(strings.Count(workerStarts(ctx, ns, name), "\n")).To(Equal(1), name)
		}

		epoch := syncedEpoch(ctx, js)
		victim := anyPod(before)
		killed := time.Now()
		workerControl(ctx, ns, victim, "/sigkill", nil)
		By("the group re-syncs at the next epoch, and every worker starts again in its running container")
		Eventually(func() int32 { return syncedEpoch(ctx, js) }).Should(Equal(epoch + 1))
		lastStart := time.Time{}
		for name := range before {
			var starts []string
			Eventually(func() []string {
				starts = strings.Fields(workerStarts(ctx, ns, name))
				return starts
			}).Should(HaveLen(4), "Pod %s: two starts, each a Pod UID and a time", name)
			at, err := time.Parse(time.RFC3339Nano, starts[3])
			Expect(err).NotTo(HaveOccurred())
			if at.After(lastStart) {
				lastStart = at
			}
		}
		AddReportEntry("process tier: worker killed", ReportEntryVisibilityAlways,
			fmt.Sprintf("process_tier_worker_killed_to_every_worker_started_s=%.2f", lastStart.Sub(killed).Seconds()))

		By("no container restarted, the agents are the same processes, the Pods the same")
		after := waitForSyncedWorkers(ctx, js, 4)
		for name, b := range before {
			a, ok := after[name]
			Expect(ok).To(BeTrue(), "Pod %s was replaced", name)
			Expect(a.uid).To(Equal(b.uid), "Pod %s was recreated", name)
			Expect(a.restarts).To(Equal(b.restarts), "Pod %s: restartCounts", name)
			Expect(containerID(getPod(ctx, ns, name), agentspec.ContainerName)).To(Equal(agents[name]), "Pod %s: the agent's container", name)
		}
		Expect(getJobSet(ctx, js).Status.InPlaceRestarts).To(Equal(int32(1)), "one group restart, counted once")
		By("the agents tell their restarts in their logs, the wrapper in the worker's")
		for name := range before {
			Expect(containerLog(ctx, ns, name, agentspec.ContainerName)).To(ContainSubstring("The worker stopped; joining the next epoch"), name)
			Expect(containerLog(ctx, ns, name, "worker")).To(ContainSubstring("jobset-wrapper: starting attempt 2 of the worker (restarted in place by the agent)"), name)
		}
	})

	It("restarts story 1 in place under injected wrappers: after a worker killed, and after workers that ignore SIGTERM and leave strays, none of which outlives its attempt", func(ctx context.Context) {
		js := podTier(example(ns, "story1-injected.yaml"))
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		before := waitForSyncedWorkers(ctx, js, 4)
		By("every worker runs under the wrapper that injection installed")
		for name := range before {
			pod := getPod(ctx, ns, name)
			Expect(pod.Spec.Containers[0].Command).To(HaveExactElements(agentspec.WrapperBinary, "-control="+agentspec.WrapperControl, "--", "/worker"), name)
			Expect(pod.Spec.InitContainers[0].Name).To(Equal(agentspec.WrapperInstallerName), name)
		}

		By("(a) a worker killed (SIGKILL): the group restarts in place and re-syncs, every worker running again")
		killed := time.Now()
		epoch := syncedEpoch(ctx, js)
		victim := anyPod(before)
		workerControl(ctx, ns, victim, "/sigkill", nil)
		Eventually(func() int32 { return syncedEpoch(ctx, js) }).Should(Equal(epoch + 1))
		after := waitForRestartedInPlace(ctx, js, before)
		AddReportEntry("worker killed", ReportEntryVisibilityAlways,
			fmt.Sprintf("wrapper_worker_killed_to_running_s=%.1f", time.Since(killed).Seconds()))
		last := containerStatus(getPod(ctx, ns, victim), "worker").LastTerminationState.Terminated
		Expect(last).NotTo(BeNil())
		Expect(last.ExitCode).To(BeEquivalentTo(128+9), "the wrapper exits as its worker did: killed by SIGKILL, as a shell reports it")
		for name := range after {
			Expect(strings.Count(workerStarts(ctx, ns, name), "\n")).To(Equal(2), "Pod %s: in place, the emptyDir keeps the first start", name)
		}

		By("(b) every worker ignores SIGTERM and leaves two strays behind, one outside its process group")
		tag := fmt.Sprintf("%s-%d", ns, time.Now().UnixNano())
		var attempt []string
		for name := range after {
			workerControl(ctx, ns, name, "/stray", map[string]string{"n": "2", "tag": tag})
			attempt = append(attempt, containerID(getPod(ctx, ns, name), "worker"))
		}
		old := nodeProcesses(attempt, tag)
		// Each container: the wrapper, the worker and its two strays.
		Expect(len(old)).To(BeNumerically(">=", 4*4), "the attempt's processes, as the host sees them: %v", old)
		Expect(strayCount(old)).To(Equal(8), "strays: %v", old)

		epoch = syncedEpoch(ctx, js)
		victim = anyPod(after)
		// The kubelet removes the restarted containers and their logs:
		// the agents' are read as they are written.
		agentLogs := map[string]*followedLog{}
		for name := range after {
			if name != victim {
				agentLogs[name] = followLog(ctx, ns, name, agentspec.ContainerName)
			}
		}
		failed := time.Now()
		exitWorker(ctx, ns, victim, 1)
		By("no process of the old attempts runs once the next epoch is synced")
		// Each look reads the epoch first: a process seen after a look
		// that found the epoch synced ran beside the next epoch.
		var left []string
		Eventually(func(g Gomega) {
			synced := syncedEpoch(ctx, js) > epoch
			left = nodeProcesses(attempt, tag)
			if synced && len(left) > 0 {
				StopTrying(fmt.Sprintf("processes of the old attempts run in the next epoch: %v", left)).Now()
			}
			g.Expect(synced).To(BeTrue())
		}).WithTimeout(2 * time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
		Expect(syncedEpoch(ctx, js)).To(Equal(epoch + 1))
		Expect(nodeProcesses(attempt, tag)).To(BeEmpty())
		waitForRestartedInPlace(ctx, js, after)
		By("the other agents had their wrappers stop their workers before they restarted their Pods")
		confirmations := map[string]string{}
		for name, l := range agentLogs {
			log := l.wait()
			Expect(log).To(ContainSubstring("The worker's wrapper confirmed that nothing of the worker is left"), "the agent of Pod %s, before its restart", name)
			for _, line := range strings.Split(log, "\n") {
				if strings.Contains(line, "Confirm") && strings.Contains(line, "on the Pod") {
					confirmations[name] = line
				}
			}
		}
		AddReportEntry("stop confirmations on the Pods", ReportEntryVisibilityAlways, confirmations)
		AddReportEntry("strays", ReportEntryVisibilityAlways,
			fmt.Sprintf("wrapper_strays_failure_to_running_s=%.1f", time.Since(failed).Seconds()))
		Expect(getJobSet(ctx, js).Status.InPlaceRestarts).To(Equal(int32(2)), "two group restarts, each counted once")
	})
})

// podTier has js restart its workers through their Pods' containers even
// where the worker wrapper runs (the Pod tier), for specs of what the
// kubelet's restart does.
func podTier(js *jobset.JobSet) *jobset.JobSet {
	if js.Annotations == nil {
		js.Annotations = map[string]string{}
	}
	js.Annotations[jobset.RestartTierKey] = jobset.RestartTierPod
	return js
}

// containerLog is the log of a Pod's container as it is now.
func containerLog(ctx context.Context, ns, pod, container string) string {
	out, err := clientset.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred(), "the log of %s/%s", pod, container)
	return string(out)
}

// followedLog is a container's log read as it is written, until the
// container ends.
type followedLog struct {
	done chan struct{}
	log  strings.Builder
	err  error
}

func followLog(ctx context.Context, ns, pod, container string) *followedLog {
	l := &followedLog{done: make(chan struct{})}
	stream, err := clientset.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container, Follow: true}).Stream(ctx)
	Expect(err).NotTo(HaveOccurred(), "following the log of %s/%s", pod, container)
	go func() {
		defer GinkgoRecover()
		defer close(l.done)
		defer func() { _ = stream.Close() }()
		_, l.err = io.Copy(&l.log, stream)
	}()
	return l
}

// wait returns the log once the container ended.
func (l *followedLog) wait() string {
	Eventually(l.done).WithTimeout(time.Minute).Should(BeClosed())
	Expect(l.err).NotTo(HaveOccurred())
	return l.log.String()
}

func getPod(ctx context.Context, ns, name string) corev1.Pod {
	var pod corev1.Pod
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &pod)).To(Succeed())
	return pod
}

// containerStatus is the status of the Pod's container name.
func containerStatus(pod corev1.Pod, name string) corev1.ContainerStatus {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == name {
			return cs
		}
	}
	Fail("Pod " + pod.Name + " has no container " + name)
	return corev1.ContainerStatus{}
}

// nodeProcesses lists, from the host's /proc, every process in one of the
// containers (their runtime IDs name their cgroups) and every stray of the
// e2e worker tagged tag, each as "pid argv".
func nodeProcesses(containers []string, tag string) []string {
	entries, err := os.ReadDir("/proc")
	Expect(err).NotTo(HaveOccurred())
	var found []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err1 := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		cgroups, err2 := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if err1 != nil || err2 != nil {
			continue // ended meanwhile
		}
		ours := bytes.HasPrefix(cmdline, []byte("worker-stray\x00"+tag+"\x00"))
		for _, id := range containers {
			ours = ours || bytes.Contains(cgroups, []byte(id))
		}
		if ours {
			found = append(found, e.Name()+" "+strings.Join(strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00"), " "))
		}
	}
	return found
}

func strayCount(processes []string) int {
	n := 0
	for _, p := range processes {
		if strings.Contains(p, " worker-stray ") {
			n++
		}
	}
	return n
}
