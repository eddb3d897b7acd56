package agent_test

import (
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/agent"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// A running agent under test: its exit code arrives on exited.
type runningAgent struct {
	agent   *agent.Agent
	barrier string
	exited  chan int
	cancel  context.CancelFunc
	sleeps  *sleepRecorder
}

type sleepRecorder struct {
	mu    sync.Mutex
	asked []time.Duration
}

// sleep records the delay and waits a little, so that retries stay fast.
func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.asked = append(s.asked, d)
	s.mu.Unlock()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(10 * time.Millisecond):
		return nil
	}
}

func (s *sleepRecorder) longest() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var m time.Duration
	for _, d := range s.asked {
		m = max(m, d)
	}
	return m
}

var _ = Describe("Agent", func() {
	var (
		ctx   context.Context
		c     client.Client
		ns    string
		js    *jobset.JobSet
		pod   *corev1.Pod
		proxy *apiProxy
	)

	BeforeEach(func() {
		ctx = context.Background()
		c = env.Client
		ns = framework.TestNamespace(ctx, c, "agent")
		js = wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		Expect(c.Create(ctx, js)).To(Succeed())
		pod = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "trainer-workers-0-0", Namespace: ns,
				Annotations: map[string]string{jobset.JobSetNameKey: "trainer"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "registry.k8s.io/pause:3.10"}}},
		}
		Expect(c.Create(ctx, pod)).To(Succeed())
		proxy = startProxy(env.Config)
		DeferCleanup(proxy.close)
	})

	setEpochs := func(synced, deprecated int32) { setEpochs(ctx, c, js, synced, deprecated) }
	podEpoch := func() string {
		fresh := &corev1.Pod{}
		Expect(c.Get(ctx, client.ObjectKeyFromObject(pod), fresh)).To(Succeed())
		return fresh.Annotations[jobset.EpochKey]
	}
	// startWith starts an agent with more of its environment set.
	startWith := func(more map[string]string) *runningAgent {
		environment := map[string]string{agentspec.EnvNamespace: ns, agentspec.EnvPodName: pod.Name, agentspec.EnvJobSetName: "trainer"}
		maps.Copy(environment, more)
		cfg, err := agent.ConfigFromEnv(func(k string) string { return environment[k] })
		Expect(err).NotTo(HaveOccurred())
		listener, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		sleeps := &sleepRecorder{}
		a := agent.New(cfg, proxy.client(), agent.WithListener(listener), agent.WithSleep(sleeps.sleep))
		r := &runningAgent{agent: a, barrier: "http://" + listener.Addr().String(), exited: make(chan int, 1), sleeps: sleeps}
		r.cancel = runAgent(ctx, a, r.exited)
		return r
	}
	start := func() *runningAgent { return startWith(nil) }
	barrier := func(r *runningAgent) func() (string, error) {
		return func() (string, error) {
			resp, err := http.Get(r.barrier + agentspec.DefaultBarrierPath)
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.Status + " " + strings.TrimSpace(string(body)), nil
		}
	}

	It("on first start writes S+1 to its Pod, and serves health", func() {
		setEpochs(2, 1)
		r := start()
		Eventually(podEpoch).Should(Equal("3"))
		Eventually(r.agent.Epoch).Should(BeEquivalentTo(3))
		Eventually(barrier(r)).Should(And(HavePrefix("503"), ContainSubstring("epoch 3 is not synced yet")))
		resp, err := http.Get(r.barrier + agentspec.HealthPath)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
	})

	It("lifts the barrier (503 then 200) exactly when its epoch is synced", func() {
		r := start()
		Eventually(podEpoch).Should(Equal("1"))
		Consistently(barrier(r)).Should(HavePrefix("503"))
		setEpochs(1, 0)
		Eventually(barrier(r)).Should(HavePrefix("200"))
		Consistently(r.exited).ShouldNot(Receive())
	})

	It("exits with the restart exit code when its epoch is deprecated", func() {
		setEpochs(1, 0)
		r := start()
		Eventually(podEpoch).Should(Equal("2"))
		setEpochs(2, 1)
		Eventually(barrier(r)).Should(HavePrefix("200"))
		Consistently(r.exited).ShouldNot(Receive())
		setEpochs(2, 2)
		Eventually(r.exited).Should(Receive(Equal(agentspec.DefaultRestartExitCode)))
	})

	It("in a named in-place group, follows that group's epochs and none other's", func() {
		setGroupEpochs := func(group string, synced, deprecated int32) {
			Eventually(func() error {
				fresh := &jobset.JobSet{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(js), fresh); err != nil {
					return err
				}
				patch := client.MergeFrom(fresh.DeepCopy())
				entry := jobset.InPlaceGroupStatus{Name: group, SyncedEpoch: ptr.To(synced), DeprecatedEpoch: ptr.To(deprecated)}
				if i := slices.IndexFunc(fresh.Status.InPlaceGroups, func(g jobset.InPlaceGroupStatus) bool { return g.Name == group }); i >= 0 {
					fresh.Status.InPlaceGroups[i] = entry
				} else {
					fresh.Status.InPlaceGroups = append(fresh.Status.InPlaceGroups, entry)
				}
				return c.Status().Patch(ctx, fresh, patch)
			}).Should(Succeed())
		}
		setEpochs(4, 3)
		setGroupEpochs("embedding", 2, 1)
		r := startWith(map[string]string{agentspec.EnvInPlaceGroup: "trunk"})
		Eventually(podEpoch).Should(Equal("1"))
		setGroupEpochs("trunk", 1, 0)
		Eventually(barrier(r)).Should(HavePrefix("200"))
		By("the default group and another group restarting")
		setEpochs(5, 5)
		setGroupEpochs("embedding", 3, 3)
		Consistently(r.exited).ShouldNot(Receive())
		By("its own group restarting")
		setGroupEpochs("trunk", 1, 1)
		Eventually(r.exited).Should(Receive(Equal(agentspec.DefaultRestartExitCode)))
	})

	It("exits cleanly, with no restart, when it is told to stop", func() {
		r := start()
		Eventually(podEpoch).Should(Equal("1"))
		r.cancel()
		Eventually(r.exited).Should(Receive(Equal(agentspec.ExitTerminated)))
	})

	// A node cut off from the API server keeps its containers, and the
	// controller replaces its ranks after a bound longer than the fence.
	It("stops its running worker (the restart exit code) once cut off from the API server for its fence time", func() {
		r := startWith(map[string]string{agentspec.EnvFenceAfterSeconds: "2"})
		Eventually(podEpoch).Should(Equal("1"))
		setEpochs(1, 0)
		Eventually(barrier(r)).Should(HavePrefix("200"))
		proxy.cutOff()
		Eventually(r.exited, 10*time.Second).Should(Receive(Equal(agentspec.DefaultRestartExitCode)))
	})

	// A fence is the platform's doing: the Pod's next agent says so with
	// its join, and the controller counts the group restart against no
	// budget.
	It("records its fence in the Pod's state directory, and the Pod's next agent writes it with its join of the next epoch, once", func() {
		stateDir := GinkgoT().TempDir()
		env := map[string]string{agentspec.EnvFenceAfterSeconds: "2", agentspec.EnvStateDir: stateDir}
		r := startWith(env)
		Eventually(podEpoch).Should(Equal("1"))
		setEpochs(1, 0)
		Eventually(barrier(r)).Should(HavePrefix("200"))
		proxy.cutOff()
		Eventually(r.exited, 10*time.Second).Should(Receive(Equal(agentspec.DefaultRestartExitCode)))

		By("the Pod restarted in place, back in contact: the next agent joins epoch 2 with the record")
		proxy.reconnect()
		next := startWith(env)
		podAnnotations := func() map[string]string {
			fresh := &corev1.Pod{}
			Expect(c.Get(ctx, client.ObjectKeyFromObject(pod), fresh)).To(Succeed())
			return fresh.Annotations
		}
		Eventually(podAnnotations).Should(And(HaveKeyWithValue(jobset.EpochKey, "2"), HaveKeyWithValue(agentspec.FencedAnnotation, "1")))

		By("a later restart, no fence: the agent after it writes no record")
		setEpochs(2, 1)
		Eventually(barrier(next)).Should(HavePrefix("200"))
		setEpochs(2, 2)
		Eventually(next.exited).Should(Receive(Equal(agentspec.DefaultRestartExitCode)))
		Expect(c.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		delete(pod.Annotations, agentspec.FencedAnnotation)
		Expect(c.Update(ctx, pod)).To(Succeed())
		startWith(env)
		Eventually(podAnnotations).Should(HaveKeyWithValue(jobset.EpochKey, "3"))
		Expect(podAnnotations()).NotTo(HaveKey(agentspec.FencedAnnotation))
	})

	// Kept as it is, the epoch would lift the barrier once the node came
	// back and the agent saw it synced, by a group that replaced the Pod
	// meanwhile; the admission policy refuses an epoch to a Pod marked
	// Failed (the proxy's denial stands for it). With nothing to stop,
	// there is nothing to restart: an API server outage in the middle of a
	// group restart costs no restart more.
	It("keeps its waiting worker at the barrier through a cut longer than its fence time, and lifts only once it has written its epoch again", func() {
		r := startWith(map[string]string{agentspec.EnvFenceAfterSeconds: "2"})
		Eventually(podEpoch).Should(Equal("1"))
		Expect(barrier(r)()).To(HavePrefix("503"))
		proxy.cutOff()
		By("cut off past its fence time: it fences, and exits not")
		Eventually(barrier(r), 10*time.Second).Should(ContainSubstring("writes epoch 1 again before the worker starts"))
		Consistently(r.exited, time.Second).ShouldNot(Receive())

		By("back, its epoch synced meanwhile, and its write is denied: the barrier stays down")
		setEpochs(1, 0)
		proxy.denyEpoch.Store("1")
		denied := proxy.denied.Load()
		proxy.reconnect()
		Eventually(proxy.denied.Load).Should(BeNumerically(">", denied))
		Expect(barrier(r)()).To(HavePrefix("503"))

		By("its write goes through: the barrier lifts, with no restart")
		proxy.denyEpoch.Store("")
		Eventually(barrier(r)).Should(HavePrefix("200"))
		Consistently(r.exited).ShouldNot(Receive())
	})

	It("does not fence before it joined an epoch, nor through a cut shorter than its fence time", func() {
		proxy.cutOff()
		r := startWith(map[string]string{agentspec.EnvFenceAfterSeconds: "3"})
		By("cut off from the start, longer than the fence time: it joined nothing, nothing to leave")
		Consistently(r.exited, 4*time.Second).ShouldNot(Receive())
		proxy.reconnect()
		Eventually(podEpoch).Should(Equal("1"))
		setEpochs(1, 0)
		Eventually(barrier(r)).Should(HavePrefix("200"))

		By("cut off for a second while the worker runs")
		proxy.cutOff()
		Consistently(r.exited, time.Second).ShouldNot(Receive())
		proxy.reconnect()
		Consistently(r.exited, 4*time.Second).ShouldNot(Receive())
		Expect(barrier(r)()).To(HavePrefix("200"))
	})

	It("survives dropped connections and an expired watch without a spurious exit, keeping its epoch", func() {
		r := start()
		Eventually(podEpoch).Should(Equal("1"))
		before := proxy.requests.Load()

		By("dropping every connection (an apiserver restart, as the agent sees it)")
		proxy.dropConnections()
		Eventually(proxy.requests.Load).Should(BeNumerically(">", before), "the agent re-watches")

		By("answering the resumed watch with 410 Gone")
		proxy.gone.Store(1)
		proxy.dropConnections()
		Eventually(proxy.gone.Load).Should(BeZero(), "the resumed watch got 410")

		Consistently(r.exited).ShouldNot(Receive())
		Expect(r.agent.Epoch()).To(BeEquivalentTo(1), "the epoch survives re-watches")
		Expect(podEpoch()).To(Equal("1"))
		setEpochs(1, 0)
		Eventually(barrier(r)).Should(HavePrefix("200"))
	})

	// A join read from a stale JobSet (a watch cache behind, an agent that
	// restarted) writes an epoch lower than the Pod's, and the admission
	// policy denies it; the same write, retried, is denied forever.
	It("reads the JobSet again when its join is denied, and joins the epoch after the current one", func() {
		setEpochs(1, 0)
		proxy.denyEpoch.Store("2")
		r := start()
		Eventually(proxy.denied.Load).Should(BeNumerically(">=", 1))
		setEpochs(2, 1)
		Eventually(podEpoch).Should(Equal("3"))
		Eventually(r.agent.Epoch).Should(BeEquivalentTo(3))
		Consistently(r.exited).ShouldNot(Receive())
	})

	It("backs off on 429, no sooner than Retry-After", func() {
		proxy.tooManyPatches.Store(3)
		r := start()
		Eventually(podEpoch).Should(Equal("1"))
		Expect(r.sleeps.longest()).To(BeNumerically(">=", 2*time.Second), "Retry-After: 2 is honoured")
		Consistently(r.exited).ShouldNot(Receive())
	})
})
