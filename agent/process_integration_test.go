package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/agent"
	"github.com/fastjobset/jobset/agent/wrapper"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/syncbuffer"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// runAsWrapper makes the test binary the worker wrapper when the process
// tier's specs start it so: the real wrapper, in a process of its own,
// whose reaping cannot touch the test's other children (etcd, the API
// server).
const runAsWrapper = "JOBSET_AGENT_TEST_RUN_WRAPPER"

func init() {
	if os.Getenv(runAsWrapper) == "1" {
		os.Exit(wrapper.Main(os.Args[1:], os.Getenv, os.Stderr))
	}
}

// realWrapper is a wrapper process running a worker that sleeps until it
// is killed, then exits with the code in the file code.
type realWrapper struct {
	cmd     *exec.Cmd
	stderr  syncbuffer.Buffer
	dir     string
	control string
	exited  chan int
}

func startRealWrapper() *realWrapper {
	// Under /tmp: a path under Bazel's test directory is longer than a
	// Unix socket's name may be.
	dir, err := os.MkdirTemp("/tmp", "jobset-process-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	w := &realWrapper{dir: dir, control: filepath.Join(dir, "control.sock"), exited: make(chan int, 1)}
	Expect(os.WriteFile(w.file("code"), []byte("1"), 0o644)).To(Succeed())
	self, err := os.Executable()
	Expect(err).NotTo(HaveOccurred())
	w.cmd = exec.Command(self, "-control="+w.control, "-cgroup=off", "-agent-wait=1m", "--",
		"sh", "-c", `sleep 1000 & echo $! > "$0/sleep"; wait $!; exit "$(cat "$0/code")"`, dir)
	w.cmd.Env = append(os.Environ(), runAsWrapper+"=1")
	w.cmd.Stderr = &w.stderr
	Expect(w.cmd.Start()).To(Succeed())
	go func() {
		_ = w.cmd.Wait()
		w.exited <- w.cmd.ProcessState.ExitCode()
	}()
	DeferCleanup(func() {
		if group := w.workerGroup(); group > 0 {
			_ = syscall.Kill(-group, syscall.SIGKILL)
		}
		_ = w.cmd.Process.Kill()
	})
	Eventually(func() error { _, err := os.Stat(w.control); return err }).Should(Succeed())
	return w
}

func (w *realWrapper) file(name string) string { return filepath.Join(w.dir, name) }

// worker is the PID of the worker's shell, the wrapper's child, or 0.
func (w *realWrapper) worker() int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if parentOf(pid) == w.cmd.Process.Pid {
			return pid
		}
	}
	return 0
}

// workerGroup is the worker's process group (its shell's PID), or 0.
func (w *realWrapper) workerGroup() int { return w.worker() }

// kill kills the worker's sleep: the worker exits with the code in code.
func (w *realWrapper) kill(code int) {
	Expect(os.WriteFile(w.file("code"), []byte(strconv.Itoa(code)), 0o644)).To(Succeed())
	_, sleep := w.running()
	Expect(syscall.Kill(sleep, syscall.SIGKILL)).To(Succeed())
}

// running waits until the worker's shell runs its sleep, and returns both
// PIDs. Until then the shell may not lead its process group yet (the
// wrapper's child sets it up before it runs the shell), and its file may
// be there and still empty, or still name the sleep of the attempt before,
// until this attempt's shell rewrites it.
func (w *realWrapper) running() (shell, sleep int) {
	GinkgoHelper()
	Eventually(func() error {
		raw, err := os.ReadFile(w.file("sleep"))
		if err != nil {
			return err
		}
		if sleep, err = strconv.Atoi(strings.TrimSpace(string(raw))); err != nil {
			return err
		}
		if parent := parentOf(sleep); parent == 0 || parent != w.worker() {
			return fmt.Errorf("process %d is not the sleep of the running worker %d", sleep, w.worker())
		}
		shell = parentOf(sleep)
		return nil
	}).Should(Succeed())
	return shell, sleep
}

// parentOf is the parent's PID of a live process, or 0.
func parentOf(pid int) int {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 2 || fields[0] == "Z" {
		return 0
	}
	parent, _ := strconv.Atoi(fields[1])
	return parent
}

// wrappedAgent is an agent on the one Pod of a JobSet whose worker runs
// under a real wrapper (the test binary, re-executed), as injection leaves
// it: the worker's rule restarts it in place on any exit code but those
// the spec keeps.
type wrappedAgent struct {
	c   client.Client
	ns  string
	js  *jobset.JobSet
	pod *corev1.Pod
	w   *realWrapper
	a   *agent.Agent
	// proxy is the agent's way to the API server.
	proxy *apiProxy
	// exited receives the agent's exit code.
	exited chan int
	// stateDir is the Pod's state directory, which outlives the agent.
	stateDir string
}

// startWrappedAgent creates the JobSet, with annotations, and the Pod in a
// namespace of its own, and runs the agent until the spec ends; exit codes
// in kept are not restarted in place (a FailJob code of the Job's
// podFailurePolicy).
func startWrappedAgent(ctx context.Context, namespace string, annotations map[string]string, kept ...int32) *wrappedAgent {
	t := &wrappedAgent{c: env.Client, exited: make(chan int, 1)}
	t.ns = framework.TestNamespace(ctx, t.c, namespace)
	rj := wrappers.MakeReplicatedJob("workers").Obj()
	spec := &rj.Template.Spec.Template.Spec
	spec.InitContainers = []corev1.Container{{Name: agentspec.ContainerName, Image: "registry.k8s.io/pause:3.10",
		RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), RestartPolicyRules: sidecar.AgentRestartRules()}}
	spec.Containers[0].Command = []string{agentspec.WrapperBinary, "-control=" + agentspec.WrapperControl, "--", "train"}
	spec.Containers[0].RestartPolicyRules = []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpNotIn, Values: append([]int32{0}, kept...)}}}
	t.js = wrappers.MakeJobSet("trainer", t.ns).RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).ReplicatedJob(rj).Obj()
	t.js.Annotations = annotations
	Expect(t.c.Create(ctx, t.js)).To(Succeed())
	t.pod = &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "trainer-workers-0-0", Namespace: t.ns,
			Annotations: map[string]string{jobset.JobSetNameKey: "trainer"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "registry.k8s.io/pause:3.10"}}},
	}
	Expect(t.c.Create(ctx, t.pod)).To(Succeed())
	t.stateDir = GinkgoT().TempDir()
	t.restart(ctx)
	return t
}

// restart starts the Pod's containers again, as the kubelet does on the
// agent's restart exit: a new wrapper and a new agent, the state
// directory kept.
func (t *wrappedAgent) restart(ctx context.Context) {
	t.w = startRealWrapper()
	environment := map[string]string{agentspec.EnvNamespace: t.ns, agentspec.EnvPodName: t.pod.Name,
		agentspec.EnvJobSetName: "trainer", agentspec.EnvWrapperControl: t.w.control, agentspec.EnvStateDir: t.stateDir}
	t.a, t.proxy = newProxiedAgent(environment)
	runAgent(ctx, t.a, t.exited)
}

// newProxiedAgent is an agent configured from environment, reaching the
// API server through a proxy the spec can cut, with its witness listener
// on loopback.
func newProxiedAgent(environment map[string]string) (*agent.Agent, *apiProxy) {
	GinkgoHelper()
	cfg, err := agent.ConfigFromEnv(func(k string) string { return environment[k] })
	Expect(err).NotTo(HaveOccurred())
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	proxy := startProxy(env.Config)
	DeferCleanup(proxy.close)
	return agent.New(cfg, proxy.client(), agent.WithListener(listener)), proxy
}

// setEpochs writes the JobSet's epochs, as the controller would.
func (t *wrappedAgent) setEpochs(ctx context.Context, synced, deprecated int32) {
	Eventually(func() error {
		fresh := &jobset.JobSet{}
		if err := t.c.Get(ctx, client.ObjectKeyFromObject(t.js), fresh); err != nil {
			return err
		}
		patch := client.MergeFrom(fresh.DeepCopy())
		fresh.Status.SyncedEpoch, fresh.Status.DeprecatedEpoch = ptr.To(synced), ptr.To(deprecated)
		return t.c.Status().Patch(ctx, fresh, patch)
	}).Should(Succeed())
}

// annotations reads the Pod's annotations.
func (t *wrappedAgent) annotations(ctx context.Context) func() map[string]string {
	return func() map[string]string {
		fresh := &corev1.Pod{}
		Expect(t.c.Get(ctx, client.ObjectKeyFromObject(t.pod), fresh)).To(Succeed())
		return fresh.Annotations
	}
}

var _ = Describe("Agent in the process tier", func() {
	var (
		c      client.Client
		pod    *corev1.Pod
		w      *realWrapper
		a      *agent.Agent
		exited chan int
		t      *wrappedAgent
	)
	// started runs the agent; 42 is a FailJob code of the Job's
	// podFailurePolicy.
	started := func(ctx context.Context, annotations map[string]string) {
		t = startWrappedAgent(ctx, "agent-process", annotations, 42)
		c, pod, w, a, exited = t.c, t.pod, t.w, t.a, t.exited
	}
	setEpochs := func(ctx context.Context, synced, deprecated int32) { t.setEpochs(ctx, synced, deprecated) }
	epoch := func(ctx context.Context) func() string {
		return func() string {
			fresh := &corev1.Pod{}
			Expect(c.Get(ctx, client.ObjectKeyFromObject(pod), fresh)).To(Succeed())
			return fresh.Annotations[jobset.EpochKey]
		}
	}

	It("restarts its worker's process on the worker's exit and on a deprecation, joining the next epoch without exiting", func(ctx SpecContext) {
		started(ctx, nil)
		By("its epoch synced, the agent starts the first attempt")
		Eventually(epoch(ctx)).Should(Equal("1"))
		Consistently(w.worker, 300*time.Millisecond).Should(BeZero())
		setEpochs(ctx, 1, 0)
		Eventually(w.worker).ShouldNot(BeZero())
		first := w.worker()

		By("the worker killed (137, a code its rule restarts in place): the agent stops what is left and joins epoch 2, its worker held")
		w.kill(137)
		Eventually(epoch(ctx)).Should(Equal("2"))
		Expect(w.worker()).To(BeZero())
		Consistently(w.worker, 300*time.Millisecond).Should(BeZero())
		Expect(a.WorkerRestarts()).To(Equal(int32(1)))

		By("epoch 2 synced: the wrapper starts attempt 2, and marks it in the log")
		setEpochs(ctx, 2, 1)
		Eventually(w.worker).ShouldNot(BeZero())
		Expect(w.worker()).NotTo(Equal(first))
		Expect(w.stderr.String()).To(ContainSubstring("starting attempt 2 of the worker (restarted in place by the agent)"))

		By("epoch 2 deprecated by a peer's failure: the agent stops the worker and joins epoch 3")
		second := w.worker()
		setEpochs(ctx, 2, 2)
		Eventually(epoch(ctx)).Should(Equal("3"))
		Expect(w.worker()).To(BeZero())
		Expect(a.WorkerRestarts()).To(Equal(int32(2)))
		setEpochs(ctx, 3, 2)
		Eventually(w.worker).ShouldNot(BeZero())
		Expect(w.worker()).NotTo(Equal(second))
		Expect(w.stderr.String()).To(ContainSubstring("starting attempt 3 of the worker"))

		By("the worker exits with a FailJob code: the wrapper exits with it, for the kubelet and the Job to judge")
		w.kill(42)
		Eventually(w.exited).Should(Receive(Equal(42)))
		Expect(epoch(ctx)()).To(Equal("3"))
		Expect(exited).NotTo(Receive(), "the agent does not exit: the kubelet restarts no container on a FailJob code")
	})

	// A Pod declared lost whose kubelet alone is down: the agent, in
	// contact, stops its worker on the deprecation and then may not join
	// the next epoch (the admission policy refuses an epoch on a Pod
	// marked lost). The controller holds the group's sync until the agent
	// confirms the stop, or for a bound that covers an agent cut off.
	It("confirms the stop of the epoch it left when its join of the next is refused, as on a Pod marked lost", func(ctx SpecContext) {
		started(ctx, nil)
		Eventually(epoch(ctx)).Should(Equal("1"))
		setEpochs(ctx, 1, 0)
		Eventually(w.worker).ShouldNot(BeZero())

		By("epoch 1 deprecated, the join of epoch 2 refused: the agent stops its worker and confirms that epoch 1's stopped")
		t.proxy.denyEpoch.Store("2")
		setEpochs(ctx, 1, 1)
		Eventually(func() string { return t.annotations(ctx)()[agentspec.WorkerStoppedAnnotation] }).Should(Equal("1"))
		Expect(w.worker()).To(BeZero())
		Expect(epoch(ctx)()).To(Equal("1"), "the Pod shows the epoch it left")
		Expect(exited).NotTo(Receive(), "the agent stays, its worker held at the barrier")
	})

	// A restart of the worker's process moves no restartCount: the agent
	// reports each join's tier, and the Pod's restarts by tier, itself.
	It("reports on its Pod, with each join, how the Pod came to join and its worker's restarts by tier", func(ctx SpecContext) {
		started(ctx, nil)
		restarts := func() string { return t.annotations(ctx)()[agentspec.WorkerRestartsAnnotation] }
		By("the Pod's first agent joins epoch 1 as a new Pod")
		Eventually(epoch(ctx)).Should(Equal("1"))
		Expect(restarts()).To(Equal("process=0,pod=0,epoch=1,tier=new"))
		setEpochs(ctx, 1, 0)
		Eventually(w.worker).ShouldNot(BeZero())

		By("epoch 1 deprecated: the agent restarts its worker's process and joins epoch 2 so")
		setEpochs(ctx, 1, 1)
		Eventually(epoch(ctx)).Should(Equal("2"))
		Expect(restarts()).To(Equal("process=1,pod=0,epoch=2,tier=process"))
		setEpochs(ctx, 2, 1)
		Eventually(w.worker).ShouldNot(BeZero())

		By("its wrapper gone, epoch 2 deprecated: the agent exits, and the Pod's next agent joins epoch 3 after a restart of the Pod's containers")
		worker, _ := w.running()
		Expect(w.cmd.Process.Signal(syscall.SIGKILL)).To(Succeed())
		Expect(syscall.Kill(-worker, syscall.SIGKILL)).To(Succeed())
		Eventually(w.exited).Should(Receive())
		setEpochs(ctx, 2, 2)
		Eventually(exited, 20*time.Second).Should(Receive(Equal(agentspec.DefaultRestartExitCode)))
		Expect(restarts()).To(Equal("process=1,pod=0,epoch=2,tier=process"), "nothing reported before the next join")
		t.restart(ctx)
		w, a, exited = t.w, t.a, t.exited
		Eventually(epoch(ctx)).Should(Equal("3"))
		Expect(restarts()).To(Equal("process=1,pod=1,epoch=3,tier=pod"))

		By("the next agent restarts its worker's process in turn, counting on from its predecessor's report")
		setEpochs(ctx, 3, 2)
		Eventually(w.worker).ShouldNot(BeZero())
		w.kill(137)
		Eventually(epoch(ctx)).Should(Equal("4"))
		Expect(restarts()).To(Equal("process=2,pod=1,epoch=4,tier=process"))
	})

	It("restarts the Pod in place when the JobSet asks for the Pod tier", func(ctx SpecContext) {
		started(ctx, map[string]string{jobset.RestartTierKey: jobset.RestartTierPod})
		Eventually(epoch(ctx)).Should(Equal("1"))
		setEpochs(ctx, 1, 0)
		Eventually(w.worker).ShouldNot(BeZero())
		setEpochs(ctx, 1, 1)
		Eventually(exited, 20*time.Second).Should(Receive(Equal(agentspec.DefaultRestartExitCode)))
		Expect(w.worker()).To(BeZero())
		Expect(epoch(ctx)()).To(Equal("1"))
	})

	It("escalates to the Pod tier when its wrapper is gone", func(ctx SpecContext) {
		started(ctx, nil)
		Eventually(epoch(ctx)).Should(Equal("1"))
		setEpochs(ctx, 1, 0)
		worker, _ := w.running()
		Expect(w.cmd.Process.Signal(syscall.SIGKILL)).To(Succeed())
		// The container's end would take the worker with it.
		Expect(syscall.Kill(-worker, syscall.SIGKILL)).To(Succeed())
		Eventually(w.exited).Should(Receive())
		setEpochs(ctx, 1, 1)
		Eventually(exited, 20*time.Second).Should(Receive(Equal(agentspec.DefaultRestartExitCode)))
		Expect(epoch(ctx)()).To(Equal("1"), "it joins no epoch without a confirmed stop")
	})
})
