package agent_test

import (
	"context"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// Two Pods of one in-place group on two nodes whose agents fence on their
// node's Lease; the spec plays each node's kubelet, renewing its Lease
// every renew interval until it stops.
var _ = Describe("Agents that fence on their node's Lease", func() {
	const (
		fence = "3"
		// A Lease of 4 s is renewed every second: a renewal is missed
		// after 1.5 s, and the agent fences on it after 4 s (its fence
		// time and a margin).
		leaseSeconds = 4
	)
	var (
		ctx     context.Context
		c       client.Client
		ns      string
		js      *jobset.JobSet
		members [2]*member
		kubelet [2]*kubeletLease
	)

	BeforeEach(func() {
		ctx = context.Background()
		c = env.Client
		ns = framework.TestNamespace(ctx, c, "lease")
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agentspec.NodeLeaseNamespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}
		// Nodes of their own per spec: Leases outlive the spec.
		js, members = twoNodeGroup(ctx, c, ns, func(i int) string { return ns + "-node-" + string(rune('a'+i)) })
		for i, m := range members {
			m.env = map[string]string{agentspec.EnvFenceNodeLease: "true"}
			kubelet[i] = &kubeletLease{c: c, name: m.node}
		}
	})

	setEpochs := func(synced, deprecated int32) { setEpochs(ctx, c, js, synced, deprecated) }
	startAll := func() {
		for _, k := range kubelet {
			k.run(ctx, leaseSeconds)
		}
		startTogether(ctx, c, js, members, fence)
	}

	It("stop the worker of a node whose kubelet alone is silent, its agent in contact, once its peer says its own Lease is renewed", func() {
		startAll()
		a, b := members[0], members[1]
		kubelet[0].stop()
		Eventually(a.exited, 15*time.Second).Should(Receive(Equal(agentspec.DefaultRestartExitCode)))
		Expect(b.exited).NotTo(Receive())
	})

	It("keep their workers running when every kubelet is silent at once (an API server too slow to take the renewals): each vouches for the other", func() {
		startAll()
		a, b := members[0], members[1]
		kubelet[0].stop()
		kubelet[1].stop()
		Consistently(a.exited, 8*time.Second).ShouldNot(Receive())
		Expect(b.exited).NotTo(Receive())
	})

	It("lift the barrier only once the agent has read its node's Lease", func() {
		a := members[0]
		kubelet[1].run(ctx, leaseSeconds)
		for _, m := range members {
			m.start(ctx, ns, fence)
		}
		Eventually(a.barrier).Should(Not(BeEmpty()))
		setEpochs(1, 0)
		Eventually(members[1].barrier).Should(HavePrefix("200"))
		Eventually(a.barrier).Should(ContainSubstring("once the agent has read its node's Lease"))
		kubelet[0].run(ctx, leaseSeconds)
		Eventually(a.barrier).Should(HavePrefix("200"))
	})
})

// kubeletLease renews a node's Lease every quarter of its duration, as the
// kubelet does, until stopped.
type kubeletLease struct {
	c    client.Client
	name string

	mu      sync.Mutex
	stopped bool
}

func (k *kubeletLease) run(ctx context.Context, seconds int32) {
	renew := func() error {
		l := &coordinationv1.Lease{}
		err := k.c.Get(ctx, client.ObjectKey{Namespace: agentspec.NodeLeaseNamespace, Name: k.name}, l)
		switch {
		case apierrors.IsNotFound(err):
			l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: agentspec.NodeLeaseNamespace, Name: k.name},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(k.name), LeaseDurationSeconds: ptr.To(seconds), RenewTime: ptr.To(metav1.NowMicro())}}
			return k.c.Create(ctx, l)
		case err != nil:
			return err
		}
		l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = ptr.To(seconds), ptr.To(metav1.NowMicro())
		return k.c.Update(ctx, l)
	}
	Expect(renew()).To(Succeed())
	ticker := time.NewTicker(agentspec.NodeRenewInterval(seconds))
	done := make(chan struct{})
	DeferCleanup(func() { ticker.Stop(); close(done) })
	go func() {
		for {
			select {
			case <-done:
				return
			case <-ticker.C:
			}
			k.mu.Lock()
			stopped := k.stopped
			k.mu.Unlock()
			if !stopped {
				_ = renew()
			}
		}
	}()
}

func (k *kubeletLease) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped = true
}
