package agent_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/agent/wrapper"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// fakeWrapper speaks the worker wrapper's side of the control channel
// and records what the agent told it; its worker "runs" from start to
// stop. No kubelet runs beside envtest: whatever stops the worker here,
// the agent did, as on a node whose kubelet is down.
type fakeWrapper struct {
	mu    sync.Mutex
	words []wrapper.Type
	state wrapper.State
}

func startFakeWrapper(path string) *fakeWrapper {
	l, err := net.Listen("unix", path)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(l.Close)
	f := &fakeWrapper{state: wrapper.StateWaiting}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go f.serve(conn)
		}
	}()
	return f
}

func (f *fakeWrapper) serve(conn net.Conn) {
	defer conn.Close()
	out := json.NewEncoder(conn)
	f.mu.Lock()
	_ = out.Encode(wrapper.Message{Type: wrapper.TypeState, State: f.state})
	f.mu.Unlock()
	lines := bufio.NewScanner(conn)
	for lines.Scan() {
		var m wrapper.Message
		if json.Unmarshal(lines.Bytes(), &m) != nil {
			return
		}
		f.mu.Lock()
		f.words = append(f.words, m.Type)
		var answer wrapper.Message
		switch m.Type {
		case wrapper.TypeStart:
			f.state, answer = wrapper.StateRunning, wrapper.Message{Type: wrapper.TypeStarted, Attempt: m.Attempt, PID: 42}
		case wrapper.TypeStop:
			f.state, answer = wrapper.StateStopped, wrapper.Message{Type: wrapper.TypeStopped, Attempt: 1, Code: wrapper.Code(143)}
		}
		f.mu.Unlock()
		if answer.Type != "" {
			_ = out.Encode(answer)
		}
	}
}

func (f *fakeWrapper) worker() wrapper.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state
}

var _ = Describe("Agent with a worker wrapper", func() {
	It("stops its worker through the wrapper, and confirms it on its Pod, before it exits on a deprecation (the Pod tier)", func(ctx SpecContext) {
		c := env.Client
		ns := framework.TestNamespace(ctx, c, "agent-wrapper")
		js := wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		js.Annotations = map[string]string{jobset.RestartTierKey: jobset.RestartTierPod}
		Expect(c.Create(ctx, js)).To(Succeed())
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "trainer-workers-0-0", Namespace: ns,
				Annotations: map[string]string{jobset.JobSetNameKey: "trainer"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "registry.k8s.io/pause:3.10"}}},
		}
		Expect(c.Create(ctx, pod)).To(Succeed())
		setEpochs := func(synced, deprecated int32) { setEpochs(ctx, c, js, synced, deprecated) }
		annotation := func(key string) func() string {
			return func() string {
				fresh := &corev1.Pod{}
				Expect(c.Get(ctx, client.ObjectKeyFromObject(pod), fresh)).To(Succeed())
				return fresh.Annotations[key]
			}
		}

		// Under /tmp: a path under Bazel's test directory is longer than a
		// Unix socket's name may be.
		dir, err := os.MkdirTemp("/tmp", "jobset-wrapper-")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(os.RemoveAll, dir)
		control := dir + "/control.sock"
		fake := startFakeWrapper(control)
		environment := map[string]string{agentspec.EnvNamespace: ns, agentspec.EnvPodName: pod.Name,
			agentspec.EnvJobSetName: "trainer", agentspec.EnvWrapperControl: control}
		a, _ := newProxiedAgent(environment)
		exited := make(chan int, 1)
		runCtx, cancel := context.WithCancel(ctx)
		DeferCleanup(cancel)
		go func() { exited <- a.Run(runCtx) }()

		By("its epoch synced, the agent starts the worker through the wrapper")
		Eventually(annotation(jobset.EpochKey)).Should(Equal("1"))
		setEpochs(1, 0)
		Eventually(fake.worker).Should(Equal(wrapper.StateRunning))
		Consistently(exited).ShouldNot(Receive())

		By("deprecated, it stops the worker, confirms the stop of epoch 1 and only then exits with the restart code")
		setEpochs(1, 1)
		Eventually(exited, 20*time.Second).Should(Receive(Equal(agentspec.DefaultRestartExitCode)))
		Expect(fake.worker()).To(Equal(wrapper.StateStopped))
		Expect(annotation(agentspec.WorkerStoppedAnnotation)()).To(Equal("1"))
	})
})
