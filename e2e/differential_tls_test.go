package e2e

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/features"
	"github.com/fastjobset/jobset/tools/testing/differential"
	"github.com/fastjobset/jobset/tools/testing/peers"
	"github.com/fastjobset/jobset/tools/testing/runfiles"
)

// TLSOptions, community JobSet v0.12.0's beta gate (on by default): the
// TLS policy of a controller's servers, the admission webhook's and the
// metrics'. Community JobSet takes it in its Configuration (tls.minVersion,
// tls.cipherSuites), ours as --tls-min-version and --tls-cipher-suites on
// the controller and the webhook (peers.WithTLS). Under each policy of
// tlsPolicies each side's servers, every Pod of every Deployment, each
// port named metrics or webhook*, are offered TLS clients of every version
// and, under TLS 1.2, of each cipher suite Go implements alone
// (differential.TLSClients); what each accepted and what it refused, with
// the alert, is compared field by field ("tls[<policy>].webhook.VersionTLS12":
// "refused: protocol version not supported"). The Pods are reached through
// the local cluster's own forwarder, tools/cluster/nsforward, which carries
// its API server to the host the same way: a loopback port of the host,
// each connection dialled from the control plane's network namespace,
// where every node's Pod network is routed.

// tlsPolicy is a TLS policy both sides take, and what a client of each
// path (differential.TLSClient.Path) gets from every server of either side
// under it, whatever else they agree on: that the policy took effect.
type tlsPolicy struct {
	policy peers.TLS
	want   map[string]string
}

const refusedVersion = differential.Refused + ": protocol version not supported"

var tlsPolicies = []tlsPolicy{
	{
		policy: peers.TLS{MinVersion: "VersionTLS13"},
		want: map[string]string{
			"VersionTLS13": differential.Accepted,
			"VersionTLS12": refusedVersion,
			"VersionTLS11": refusedVersion,
			"VersionTLS12[TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384]": refusedVersion,
		},
	},
	{
		// Cipher suites may not be set with VersionTLS13 on either side
		// (Go fixes TLS 1.3's): TLS 1.2 with two suites, an RSA one and an
		// ECDSA one of the same cipher, whatever a side's certificate.
		policy: peers.TLS{MinVersion: "VersionTLS12", CipherSuites: []string{
			"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
		}},
		want: map[string]string{
			"VersionTLS13": differential.Accepted,
			"VersionTLS12": differential.Accepted,
			"VersionTLS11": refusedVersion,
			"VersionTLS12[TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384]": differential.Accepted,
			// Go's first choice, and so a server's default.
			"VersionTLS12[TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]": differential.Refused + ": handshake failure",
		},
	},
}

// tlsPrefix is the start of the fields of a policy.
func tlsPrefix(p peers.TLS) string { return "tls[" + p.String() + "]" }

// tlsDifferential runs the TLSOptions spec: ours (as the suite deployed
// it) is rolled to the first policy and probed, community JobSet switched
// in under it and probed, restarted under the second and probed, ours
// switched back in under the second and probed; ours is back as deployed
// after the spec.
func tlsDifferential(ctx context.Context) {
	gate := string(features.TLSOptions)
	d := startDifferential(ctx, features.TLSOptions)
	network := localPodNetwork()
	community, ours := differential.Fields{}, differential.Fields{}
	for i, p := range tlsPolicies {
		sides := []struct {
			m   *peers.Manifests
			out differential.Fields
		}{
			{ourJobSetAs(peers.OurJobSet.WithFeatureGates(gate).WithTLS(p.policy)), ours},
			{loadPeer(peers.CommunityJobSet.WithFeatureGates(gate).WithTLS(p.policy)), community},
		}
		if i%2 == 1 {
			// One switch between the sides per policy.
			slices.Reverse(sides)
		}
		for _, side := range sides {
			maps.Copy(side.out, d.under(ctx, side.m, func(ctx context.Context) differential.Fields {
				return tlsScenario(ctx, network, side.m, p.policy)
			}))
		}
	}
	for _, p := range tlsPolicies {
		for _, role := range []string{"webhook", "metrics"} {
			prefix := tlsPrefix(p.policy) + "." + role + "."
			AddReportEntry("tls", fmt.Sprintf("%s%s community accepted %v; ours accepted %v (every other client refused)",
				tlsPrefix(p.policy), "."+role+":", acceptedClients(community, prefix), acceptedClients(ours, prefix)))
		}
	}
	expectAgree(community, ours)

	By("the policies took effect")
	for _, p := range tlsPolicies {
		for client, want := range p.want {
			for _, role := range []string{"webhook", "metrics"} {
				path := tlsPrefix(p.policy) + "." + role + "." + client
				Expect(community).To(HaveKeyWithValue(path, want))
			}
		}
	}
}

// acceptedClients are the clients whose fields under prefix are Accepted.
func acceptedClients(fields differential.Fields, prefix string) []string {
	var out []string
	for path, v := range fields {
		if client, ok := strings.CutPrefix(path, prefix); ok && v == differential.Accepted {
			out = append(out, client)
		}
	}
	slices.Sort(out)
	return out
}

// tlsScenario probes every server of side m, which runs under policy,
// with every client of differential.TLSClients: the servers of one role,
// webhook or metrics, alike (differential.Alike), by
// "tls[<policy>].<role>.<client>".
func tlsScenario(ctx context.Context, network podNetwork, m *peers.Manifests, policy peers.TLS) differential.Fields {
	prefix := tlsPrefix(policy)
	byRole := map[string]map[string]differential.Fields{}
	for _, name := range m.Peer.Deployments {
		dep, pods := currentPods(ctx, m.Peer.Namespace, name)
		for _, c := range dep.Spec.Template.Spec.Containers {
			for _, port := range c.Ports {
				role := tlsRole(port.Name)
				if role == "" {
					continue
				}
				for _, pod := range pods {
					server := fmt.Sprintf("%s:%d", pod.Name, port.ContainerPort)
					dial, stop := network.forward(net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(port.ContainerPort))))
					By(fmt.Sprintf("probing %s (%s, %s)", server, role, m.Peer.Name))
					var fields differential.Fields
					Eventually(func(g Gomega) {
						var err error
						fields, err = differential.TLS(ctx, prefix+"."+role, dial, differential.TLSClients())
						g.Expect(err).NotTo(HaveOccurred(), "a handshake that says nothing of %s's policy", server)
					}).WithPolling(2 * time.Second).Should(Succeed())
					stop()
					if byRole[role] == nil {
						byRole[role] = map[string]differential.Fields{}
					}
					byRole[role][server] = fields
				}
			}
		}
	}
	Expect(slices.Sorted(maps.Keys(byRole))).To(Equal([]string{"metrics", "webhook"}), "%s serves metrics and a webhook", m.Peer.Name)
	out := differential.Fields{}
	for role, servers := range byRole {
		GinkgoWriter.Printf("%s, %s servers: %v\n", m.Peer.Name, role, slices.Sorted(maps.Keys(servers)))
		maps.Copy(out, differential.Alike(servers))
	}
	return out
}

// tlsRole is what a container port named name serves over TLS: "metrics",
// "webhook" (ours: webhook; community's: webhook-server), or nothing.
func tlsRole(name string) string {
	switch {
	case name == "metrics":
		return "metrics"
	case strings.HasPrefix(name, "webhook"):
		return "webhook"
	}
	return ""
}

// currentPods returns the Deployment and its Pods of its current
// template, once there are as many as it wants and each is ready (the
// switch or the roll that brought them has waited for the rollout, but a
// Pod of the template before may still be going).
func currentPods(ctx context.Context, namespace, name string) (*appsv1.Deployment, []corev1.Pod) {
	var dep appsv1.Deployment
	var pods []corev1.Pod
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &dep)).To(Succeed())
		selector, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
		g.Expect(err).NotTo(HaveOccurred())
		var sets appsv1.ReplicaSetList
		g.Expect(k8sClient.List(ctx, &sets, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: selector})).To(Succeed())
		hash := ""
		for _, rs := range sets.Items {
			if metav1.IsControlledBy(&rs, &dep) && rs.Annotations["deployment.kubernetes.io/revision"] == dep.Annotations["deployment.kubernetes.io/revision"] {
				hash = rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
			}
		}
		g.Expect(hash).NotTo(BeEmpty(), "the ReplicaSet of Deployment %s's current revision", name)
		var list corev1.PodList
		g.Expect(k8sClient.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: selector})).To(Succeed())
		pods = nil
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil && p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] == hash {
				g.Expect(p.Status.PodIP).NotTo(BeEmpty(), "Pod %s's IP", p.Name)
				g.Expect(podReady(&p)).To(BeTrue(), "Pod %s is ready", p.Name)
				pods = append(pods, p)
			}
		}
		g.Expect(pods).To(HaveLen(int(ptrOr(dep.Spec.Replicas, 1))), "Pods of Deployment %s's current template", name)
	}).Should(Succeed())
	return &dep, pods
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func ptrOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

// ourJobSetAs is ours as the suite deployed it (INSTALL_YAML), with what
// p (peers.OurJobSet with options) adds.
func ourJobSetAs(p *peers.Peer) *peers.Manifests {
	install, err := filepath.Abs(runfiles.Path(os.Getenv("INSTALL_YAML")))
	Expect(err).NotTo(HaveOccurred())
	m, err := peers.LoadFile(p, install)
	Expect(err).NotTo(HaveOccurred())
	return m
}

// podNetwork reaches the local cluster's Pod network from the host: the
// cluster's forwarder (nsforward, built with the cluster: CLUSTERBIN of
// its cluster.env) and the control plane's network namespace.
type podNetwork struct {
	forwarder, netns string
}

// localPodNetwork is the Pod network of the local cluster of tools/cluster
// (JOBSET_CLUSTER_DIR, set by tools/e2e.sh when it brought that cluster
// up; the specs of label migration run only there), or skips the spec.
func localPodNetwork() podNetwork {
	dir := os.Getenv("JOBSET_CLUSTER_DIR")
	if dir == "" {
		Skip("probing the servers' TLS needs the local cluster of tools/cluster (JOBSET_CLUSTER_DIR, set by tools/e2e.sh), whose Pod network its forwarder reaches")
	}
	env, err := os.ReadFile(filepath.Join(dir, "cluster.env"))
	Expect(err).NotTo(HaveOccurred())
	var bin string
	for _, line := range strings.Split(string(env), "\n") {
		if v, ok := strings.CutPrefix(line, "CLUSTERBIN="); ok {
			bin = v
		}
	}
	n := podNetwork{forwarder: filepath.Join(bin, "nsforward"), netns: filepath.Join(dir, "ns", "control-plane.net")}
	for _, f := range []string{n.forwarder, n.netns} {
		_, err := os.Stat(f)
		Expect(err).NotTo(HaveOccurred(), "the local cluster's %s (CLUSTERBIN=%q in %s/cluster.env)", filepath.Base(f), bin, dir)
	}
	return n
}

// forward starts the cluster's forwarder from a free port of the host's
// loopback to target, an address of the Pod network, and returns how to
// dial it and how to stop it (which the spec's end does too).
func (n podNetwork) forward(target string) (differential.Dial, func()) {
	for attempt := 1; ; attempt++ {
		addr := freeLoopback()
		cmd := exec.Command(n.forwarder, "-netns", n.netns, "-listen", addr, "-target", target)
		cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
		Expect(cmd.Start()).To(Succeed())
		exited := make(chan struct{})
		go func() {
			err := cmd.Wait()
			GinkgoWriter.Printf("nsforward %s -> %s: %v\n", addr, target, err)
			close(exited)
		}()
		var once sync.Once
		stop := func() {
			once.Do(func() {
				_ = cmd.Process.Kill()
				<-exited
			})
		}
		DeferCleanup(stop)
		if listening(addr, exited) {
			return func(ctx context.Context) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "tcp", addr)
			}, stop
		}
		stop()
		// Another process took the port first.
		Expect(attempt).To(BeNumerically("<", 5), "nsforward did not listen on %s for %s", addr, target)
	}
}

// listening waits until the forwarder accepts on addr, and reports false
// if it exited first (exited is closed).
func listening(addr string, exited <-chan struct{}) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			// The port was free: not another's listener.
			select {
			case <-exited:
				return false
			case <-time.After(100 * time.Millisecond):
				return true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// freeLoopback is an address of the host's loopback that nothing listens
// on as it returns.
func freeLoopback() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	addr := l.Addr().String()
	Expect(l.Close()).To(Succeed())
	return addr
}
