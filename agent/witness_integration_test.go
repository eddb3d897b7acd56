package agent_test

import (
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/agent"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// Two Pods of one in-place group on two nodes; each node's link to the API
// server is a proxy of its own, and the agents reach each other as peers
// over loopback, as over the Pod network.
var _ = Describe("Agents out of contact with the API server together", func() {
	// Long enough that an agent's first question, asked ahead of its fence
	// time, comes after its peer, cut off a moment later, has seen its own
	// watch fail: with a shorter one it would ask at once, and a peer that
	// has not yet noticed would say it is in contact.
	const fence = "6"
	var (
		ctx     context.Context
		c       client.Client
		ns      string
		js      *jobset.JobSet
		members [2]*member
	)

	BeforeEach(func() {
		ctx = context.Background()
		c = env.Client
		ns = framework.TestNamespace(ctx, c, "witness")
		js, members = twoNodeGroup(ctx, c, ns, func(i int) string { return "node-" + string(rune('a'+i)) })
	})

	setEpochs := func(synced, deprecated int32) { setEpochs(ctx, c, js, synced, deprecated) }
	podEpoch := func(m *member) func() string {
		return func() string {
			fresh := &corev1.Pod{}
			Expect(c.Get(ctx, client.ObjectKeyFromObject(m.pod), fresh)).To(Succeed())
			return fresh.Annotations[jobset.EpochKey]
		}
	}
	startAll := func() { startTogether(ctx, c, js, members, fence) }

	It("keep their workers running through an outage they share, past their fence time; the one left cut off stops its worker once the other is back", func() {
		startAll()
		a, b := members[0], members[1]
		By("the API server is gone for both: each asks the other, which is silent too and vouches")
		a.proxy.cutOff()
		b.proxy.cutOff()
		Consistently(a.exited, 8*time.Second).ShouldNot(Receive())
		Expect(b.exited).NotTo(Receive())

		By("back for one node only: the other, asking again, hears it is in contact, and stops its worker")
		b.proxy.reconnect()
		Eventually(a.exited, 25*time.Second).Should(Receive(Equal(agentspec.DefaultRestartExitCode)))
		Consistently(b.exited, time.Second).ShouldNot(Receive())
	})

	// A DNS Pod that starts during an outage cannot load the records it
	// serves: the agents dial the addresses they learned while in contact.
	It("keep their workers running through an outage they share when the cluster's DNS fails with it", func() {
		dns := &clusterDNS{peers: members[0].peers}
		for _, m := range members {
			m.dns = dns
		}
		startAll()
		a, b := members[0], members[1]
		Eventually(dns.resolved).Should(ContainElements(a.pod.Name, b.pod.Name))

		By("the API server and the DNS are gone for both: each dials the other where it learned it is, and hears it is silent too")
		dns.fail()
		a.proxy.cutOff()
		b.proxy.cutOff()
		Consistently(a.exited, 8*time.Second).ShouldNot(Receive())
		Expect(b.exited).NotTo(Receive())
	})

	// A node cut off from the network reaches no peer: each question
	// waits out its timeout, which must not read as a stall of the agent
	// (that would forget the answer and ask again, for ever).
	It("stop the worker at the fence time when no peer answers", func() {
		startAll()
		a, b := members[0], members[1]
		silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(silent.Close)
		a.peers[b.pod.Name] = silent.Addr().String()
		a.proxy.cutOff()
		Eventually(a.exited, 15*time.Second).Should(Receive(Equal(agentspec.DefaultRestartExitCode)))
	})

	It("bind their Pods by a promise: an agent that vouched writes no later epoch until it runs out, even after its Pod restarted in place", func() {
		startAll()
		a, b := members[0], members[1]
		a.proxy.cutOff()
		b.proxy.cutOff()
		promise := filepath.Join(b.stateDir, "promise")
		Eventually(func() error { _, err := os.Stat(promise); return err }, 10*time.Second).Should(Succeed())

		By("back, the epoch deprecated: both restart in place")
		a.proxy.reconnect()
		b.proxy.reconnect()
		setEpochs(1, 1)
		Eventually(a.exited).Should(Receive(Equal(agentspec.DefaultRestartExitCode)))
		Eventually(b.exited).Should(Receive(Equal(agentspec.DefaultRestartExitCode)))

		By("the Pod's next agent keeps the promise, then joins")
		b.start(ctx, ns, fence)
		Eventually(b.barrier).Should(ContainSubstring("once a promise made to a peer runs out"))
		Expect(podEpoch(b)()).To(Equal("1"))
		Eventually(podEpoch(b), time.Duration(agentspec.WitnessPromiseSeconds+5)*time.Second).Should(Equal("2"))
	})
})

// twoNodeGroup creates an in-place JobSet of two Pods, each a member on
// the node nodeName names, with a link to the API server of its own.
func twoNodeGroup(ctx context.Context, c client.Client, ns string, nodeName func(int) string) (*jobset.JobSet, [2]*member) {
	js := wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").Pods(2).InPlaceReady().Obj()).Obj()
	Expect(c.Create(ctx, js)).To(Succeed())
	var members [2]*member
	peers := map[string]string{}
	for i := range members {
		name := "trainer-workers-0-" + string(rune('0'+i))
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{jobset.JobSetNameKey: "trainer"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "registry.k8s.io/pause:3.10"}}},
		}
		Expect(c.Create(ctx, pod)).To(Succeed())
		proxy := startProxy(env.Config)
		DeferCleanup(proxy.close)
		members[i] = &member{pod: pod, proxy: proxy, node: nodeName(i), stateDir: GinkgoT().TempDir(), peers: peers}
		members[i].listen()
		peers[name] = members[i].address
	}
	return js, members
}

// startTogether starts the members' agents, has them join epoch 1, syncs
// it, and waits until each barrier lifted.
func startTogether(ctx context.Context, c client.Client, js *jobset.JobSet, members [2]*member, fence string) {
	for _, m := range members {
		m.start(ctx, js.Namespace, fence)
	}
	for _, m := range members {
		Eventually(func() string {
			fresh := &corev1.Pod{}
			Expect(c.Get(ctx, client.ObjectKeyFromObject(m.pod), fresh)).To(Succeed())
			return fresh.Annotations[jobset.EpochKey]
		}).Should(Equal("1"))
	}
	setEpochs(ctx, c, js, 1, 0)
	for _, m := range members {
		Eventually(m.barrier).Should(HavePrefix("200"))
	}
}

// member is one Pod of the group, its node's link and its agent.
type member struct {
	pod      *corev1.Pod
	proxy    *apiProxy
	node     string
	stateDir string
	peers    map[string]string
	address  string
	listener net.Listener
	exited   chan int
	// dns, when set, is how the agent resolves its peers' names, which
	// it dials by name; otherwise it dials their addresses.
	dns *clusterDNS
	// env is added to the agent's environment.
	env map[string]string
}

// clusterDNS resolves the group's Pod names to loopback, until it fails.
type clusterDNS struct {
	peers map[string]string

	mu       sync.Mutex
	failing  bool
	answered map[string]bool
}

func (d *clusterDNS) lookup(_ context.Context, host string) ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch _, member := d.peers[host]; {
	case d.failing:
		return nil, &net.DNSError{Err: "server misbehaving", Name: host, IsTemporary: true}
	case !member:
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	if d.answered == nil {
		d.answered = map[string]bool{}
	}
	d.answered[host] = true
	return []string{"127.0.0.1"}, nil
}

func (d *clusterDNS) fail() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failing = true
}

// resolved are the names it answered.
func (d *clusterDNS) resolved() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Collect(maps.Keys(d.answered))
}

func (m *member) listen() {
	var err error
	m.listener, err = net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	m.address = m.listener.Addr().String()
}

// start runs an agent for the Pod, on the Pod's barrier address (a new one
// after the last agent exited, as after a restart in place).
func (m *member) start(ctx context.Context, ns, fence string) {
	if m.listener == nil {
		var err error
		m.listener, err = net.Listen("tcp", m.address)
		Expect(err).NotTo(HaveOccurred())
	}
	environment := map[string]string{
		agentspec.EnvNamespace: ns, agentspec.EnvPodName: m.pod.Name, agentspec.EnvJobSetName: "trainer",
		agentspec.EnvNodeName: m.node, agentspec.EnvStateDir: m.stateDir, agentspec.EnvFenceAfterSeconds: fence,
	}
	maps.Copy(environment, m.env)
	cfg, err := agent.ConfigFromEnv(func(k string) string { return environment[k] })
	Expect(err).NotTo(HaveOccurred())
	options := []agent.Option{agent.WithListener(m.listener), agent.WithHostname(m.pod.Name),
		agent.WithWitnessURL(func(host, _ string) string { return "http://" + m.peers[host] + agentspec.WitnessPath })}
	if m.dns != nil {
		options = append(options, agent.WithPeerLookup(m.dns.lookup), agent.WithLearnPeersEvery(100*time.Millisecond),
			agent.WithWitnessURL(func(host, _ string) string {
				_, port, err := net.SplitHostPort(m.peers[host])
				Expect(err).NotTo(HaveOccurred())
				return "http://" + net.JoinHostPort(host, port) + agentspec.WitnessPath
			}))
	}
	a := agent.New(cfg, m.proxy.client(), options...)
	m.listener = nil
	m.exited = make(chan int, 1)
	runAgent(ctx, a, m.exited)
}

func (m *member) barrier() (string, error) {
	resp, err := http.Get("http://" + m.address + agentspec.DefaultBarrierPath)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp.Status + " " + strings.TrimSpace(string(body)), nil
}
