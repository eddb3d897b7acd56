package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/agent/kubeclient"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/tools/bench/internal/summary"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// Identities as a real cluster has them. Every agent process authenticates
// with its Pod's ServiceAccount token (jobset-agent, issued by the
// TokenRequest API and bound to the Pod, as the kubelet's projected volume
// holds it), under the Role of agent/rbac/agent-rbac.yaml and the
// epoch-only admission policy of agent/rbac/epoch-only-policy.yaml, over a
// TLS connection of its own opened when it starts (as kubeclient.InCluster
// builds it in a new process). Every node's kubelet authenticates as
// system:node:<node> (group system:nodes) with a client certificate, over
// its own connection.

// raiseOpenFileLimit lets this process (and the API server and etcd it
// starts, which inherit it) hold a connection per agent and per kubelet,
// up to the hard limit; raiseHard: beyond it too, where this process may
// (root).
func raiseOpenFileLimit(want uint64, raiseHard bool) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	if raiseHard && lim.Max < want {
		raised := syscall.Rlimit{Cur: want, Max: want}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised) == nil {
			return nil
		}
	}
	lim.Cur = max(lim.Cur, min(want, lim.Max))
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	if lim.Cur < want {
		progress("open files limited to %d (hard limit), %d wanted: the largest sizes may run out", lim.Cur, want)
	}
	return nil
}

// caPool is the cluster CA an agent verifies the API server with.
func caPool(cfg *rest.Config) (*x509.CertPool, error) {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(cfg.CAData) {
		return nil, errors.New("the API server's configuration holds no CA certificate")
	}
	return roots, nil
}

// agentTokens issues, for each Pod, a token of the jobset-agent
// ServiceAccount bound to that Pod.
func agentTokens(ctx context.Context, clientset kubernetes.Interface, ns string, pods []*corev1.Pod) ([]string, error) {
	tokens := make([]string, len(pods))
	errs := make([]error, len(pods))
	workqueue.ParallelizeUntil(ctx, 16, len(pods), func(i int) {
		request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: ptr.To[int64](agentspec.TokenExpirationSeconds),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pods[i].Name, UID: pods[i].UID},
		}}
		got, err := clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, agentspec.ServiceAccountName, request, metav1.CreateOptions{})
		if err != nil {
			errs[i] = fmt.Errorf("a token for Pod %s: %w", pods[i].Name, err)
			return
		}
		tokens[i] = got.Status.Token
	})
	return tokens, errors.Join(errs...)
}

// agentClient is what a new agent process builds (kubeclient.InCluster): a
// transport of its own, so a TLS connection of its own, verified with the
// cluster CA, HTTP/2 with pings, and its bearer token. close ends its
// connections, as the process's exit does.
func agentClient(host string, from net.IP, roots *x509.CertPool, token, userAgent string, counter *requestCounter) (api *kubeclient.Client, close func(), err error) {
	transport := &http.Transport{
		DialContext: (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second,
			LocalAddr: &net.TCPAddr{IP: from}}).DialContext,
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
		HTTP2:               &http.HTTP2Config{SendPingTimeout: 30 * time.Second, PingTimeout: 15 * time.Second},
	}
	httpClient := &http.Client{Transport: &bearer{token: token, next: countingTransport{transport, counter}}}
	api, err = kubeclient.New(host, httpClient, userAgent)
	if err != nil {
		return nil, nil, err
	}
	return api, transport.CloseIdleConnections, nil
}

// barrierListener stands for an agent's barrier port, which only the
// kubelet's startup probe calls: the stand-in learns that the barrier
// lifted in process (Agent.Lifted), and 10000 real listeners would cost
// 10000 of this process's open files. Accept blocks until Close.
type barrierListener struct {
	addr   net.Addr
	closed chan struct{}
	once   sync.Once
}

func newBarrierListener(ip net.IP) *barrierListener {
	return &barrierListener{addr: &net.TCPAddr{IP: ip, Port: agentspec.DefaultBarrierPort}, closed: make(chan struct{})}
}

func (l *barrierListener) Accept() (net.Conn, error) {
	<-l.closed
	return nil, net.ErrClosed
}

func (l *barrierListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *barrierListener) Addr() net.Addr { return l.addr }

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(req)
}

// requestCounter counts requests, marks when the last successful Pod
// patch (a join) was answered, and keeps how long watches took to open
// (new connection, TLS and authentication included for a process's first
// request) and patches to be answered, and what the watches delivered.
type requestCounter struct {
	count     atomic.Int64
	lastPatch phase
	// throttled counts the answers 429 (API Priority and Fairness
	// rejecting a request: its queue is full); failed the other errors.
	throttled, failed atomic.Int64
	// events and eventBytes: what the watches delivered, every agent's.
	events, eventBytes atomic.Int64

	mu                 sync.Mutex
	watchOpen, patched []float64
}

func (c *requestCounter) reset() {
	c.count.Store(0)
	c.throttled.Store(0)
	c.failed.Store(0)
	c.events.Store(0)
	c.eventBytes.Store(0)
	c.lastPatch.reset()
	c.mu.Lock()
	c.watchOpen, c.patched = nil, nil
	c.mu.Unlock()
}

// latencies returns the medians and maxima of the watches' opening and of
// the patches, in seconds.
func (c *requestCounter) latencies() (watchP50, watchMax, patchP50, patchMax float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return summary.Percentile(c.watchOpen, 50), summary.Percentile(c.watchOpen, 100),
		summary.Percentile(c.patched, 50), summary.Percentile(c.patched, 100)
}

type countingTransport struct {
	next    http.RoundTripper
	counter *requestCounter
}

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.counter == nil {
		return t.next.RoundTrip(req)
	}
	t.counter.count.Add(1)
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	took := time.Since(start).Seconds()
	switch {
	case err == nil && resp.StatusCode == http.StatusTooManyRequests:
		t.counter.throttled.Add(1)
	case err != nil || resp.StatusCode >= 300:
		t.counter.failed.Add(1)
	}
	if err == nil && resp.StatusCode < 300 {
		c := t.counter
		if req.Method == http.MethodPatch {
			c.lastPatch.mark()
		}
		c.mu.Lock()
		if req.Method == http.MethodPatch {
			c.patched = append(c.patched, took)
		} else {
			c.watchOpen = append(c.watchOpen, took)
		}
		c.mu.Unlock()
		if req.URL.Query().Get("watch") == "true" {
			resp.Body = &watchBody{ReadCloser: resp.Body, counter: c}
		}
	}
	return resp, err
}

// watchBody counts a watch's events as the agent reads them: the API
// server writes each as a line of JSON.
type watchBody struct {
	io.ReadCloser
	counter *requestCounter
}

func (b *watchBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.counter.events.Add(int64(bytes.Count(p[:n], []byte{'\n'})))
	b.counter.eventBytes.Add(int64(n))
	return n, err
}

// installAgentRBAC applies the agent's Role, RoleBinding and ServiceAccount
// into ns, as every namespace running InPlaceRestart JobSets has them (the
// epoch-only admission policy is install.yaml's, applied once).
func installAgentRBAC(env *framework.Environment, ns string) error {
	root, err := framework.RepoRoot()
	if err != nil {
		return err
	}
	_, err = env.Kubectl("apply", "--server-side", "-n", ns, "-f", root+"/agent/rbac/agent-rbac.yaml")
	return err
}

// waitForPolicy waits until the epoch-only policy is in force for an
// agent's identity: a label change on its own Pod is denied.
func waitForPolicy(ctx context.Context, api *kubeclient.Client, ns, pod string) error {
	for try := 0; ; try++ {
		err := api.MergePatch(ctx, kubeclient.Resource{Version: "v1", Resource: "pods"}, ns, pod,
			fmt.Appendf(nil, `{"metadata":{"labels":{"bench-probe":"%d"}}}`, try))
		if kubeclient.IsDenied(err) {
			return nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("the epoch-only admission policy is not in force (last answer: %v): %w", err, ctx.Err())
		}
	}
}

// podsPerNode: Pod i runs on node i/podsPerNode. Two, as two workers of
// 4 GPUs each on a node of 8; and so that 10000 agents' and 5000 kubelets'
// connections fit in the API server's 20000 open files.
const podsPerNode = 2

// kubelets are the nodes' kubelets: node i's has its own client
// certificate and connection.
type kubelets struct {
	env      *framework.Environment
	requests atomic.Int64

	mu      sync.Mutex
	clients []corev1client.CoreV1Interface
}

// kubeletRBAC binds the kubelets' group to the system:node ClusterRole
// (envtest's API server authorizes with RBAC alone, without the Node
// authorizer a cluster has).
func kubeletRBAC(ctx context.Context, c client.Client) error {
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-kubelets"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:nodes"}},
	}
	if err := c.Create(ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

func nodeName(i int) string { return fmt.Sprintf("node-%05d", i) }

// Every Pod and every node has an address of its own, on the loopback
// network (127.0.0.0/8 is all loopback on Linux): each agent and kubelet
// connects from its own. From one address, 10000 agents' and 5000
// kubelets' connections, and the closed ones waiting out TIME_WAIT, would
// not fit in the 28000 ephemeral ports.
func podIP(i int) net.IP  { return loopbackIP(10, i) }
func nodeIP(i int) net.IP { return loopbackIP(20, i) }

func loopbackIP(network byte, i int) net.IP {
	return net.IPv4(127, network+byte(i/(250*250)), byte(1+i/250%250), byte(1+i%250))
}

// ensure creates the clients of the nodes of n Pods.
func (k *kubelets) ensure(ctx context.Context, pods int) error {
	n := (pods + podsPerNode - 1) / podsPerNode
	k.mu.Lock()
	defer k.mu.Unlock()
	have := len(k.clients)
	if have >= n {
		return nil
	}
	k.clients = append(k.clients, make([]corev1client.CoreV1Interface, n-have)...)
	errs := make([]error, n-have)
	workqueue.ParallelizeUntil(ctx, 8, n-have, func(i int) {
		node := nodeName(have + i)
		raw, err := k.env.Kubeconfig("system:node:"+node, "system:nodes")
		if err != nil {
			errs[i] = err
			return
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
		if err != nil {
			errs[i] = err
			return
		}
		// The kubelet's defaults (--kube-api-qps, --kube-api-burst).
		cfg.QPS, cfg.Burst, cfg.UserAgent = 50, 100, "kubelet/"+node
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second,
			LocalAddr: &net.TCPAddr{IP: nodeIP(have + i)}}).DialContext
		k.clients[have+i], errs[i] = corev1client.NewForConfig(cfg)
	})
	if err := errors.Join(errs...); err != nil {
		k.clients = k.clients[:have]
		return err
	}
	return nil
}

// writer returns the status writer of a Pod, by its node's kubelet.
func (k *kubelets) writer(pod *corev1.Pod) *podStatusWriter {
	return newPodStatusWriter(k.client(pod).Pods(pod.Namespace), pod.Name, pod.UID, pod.Status, &k.requests)
}

// deletePod is the kubelet's final delete of a Pod it stopped: at once,
// and only the Pod it ran.
func (k *kubelets) deletePod(ctx context.Context, pod *corev1.Pod) error {
	k.requests.Add(1)
	return k.client(pod).Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0), Preconditions: metav1.NewUIDPreconditions(string(pod.UID))})
}

func (k *kubelets) client(pod *corev1.Pod) corev1client.CoreV1Interface {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.clients[nodeIndex(pod)]
}
