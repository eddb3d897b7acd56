// Package framework starts the real kube-apiserver and etcd of envtest for
// integration suites, with the JobSet CRD installed, under both `go test` and
// `bazel test`.
package framework

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/fastjobset/jobset/api/scheme"
)

// Timeouts shared by every integration suite, so that a slow machine is
// tuned in one place.
const (
	Timeout  = 30 * time.Second
	Interval = 100 * time.Millisecond
	// ConsistentlyDuration is how long a test watches for something that
	// must not happen.
	ConsistentlyDuration = 2 * time.Second
)

// SetGomegaDefaults applies the shared timeouts to Eventually and
// Consistently; every suite calls it before RunSpecs.
func SetGomegaDefaults() {
	gomega.SetDefaultEventuallyTimeout(Timeout)
	gomega.SetDefaultEventuallyPollingInterval(Interval)
	gomega.SetDefaultConsistentlyDuration(ConsistentlyDuration)
	gomega.SetDefaultConsistentlyPollingInterval(Interval)
}

// AssetsEnv names the directory holding etcd, kube-apiserver and kubectl.
const AssetsEnv = "KUBEBUILDER_ASSETS"

// Environment is a running apiserver with the JobSet CRD installed.
type Environment struct {
	Config *rest.Config
	Client client.Client
	Scheme *runtime.Scheme

	env *envtest.Environment
}

// Option configures the environment.
type Option func(*envtest.Environment, string)

// WithWebhooks installs the generated webhook configurations, pointed at
// the webhook server of managers started by StartManager (TLS with a
// certificate envtest generates).
func WithWebhooks() Option {
	return func(env *envtest.Environment, root string) {
		env.WebhookInstallOptions = envtest.WebhookInstallOptions{
			Paths: []string{filepath.Join(root, "webhooks", "manifests")},
			// The apiserver calls the webhook by name, not by IP:
			// certificates the webhook generates itself carry names only.
			LocalServingHostExternalName: "localhost",
			LocalServingPort:             webhookPort(),
		}
	}
}

// Start brings up etcd and kube-apiserver and installs the CRDs.
func Start(opts ...Option) (*Environment, error) {
	assets := os.Getenv(AssetsEnv)
	if assets == "" {
		return nil, fmt.Errorf("%s is not set: run `tools/kubebin/build.sh` and export %s=<the directory it prints> (tools/test.sh does both)", AssetsEnv, AssetsEnv)
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	// Bazel's sandbox leaves only the test's own temporary directory
	// writable: etcd's data and the apiserver's certificates go there.
	// (envtest's port reservations go under $HOME/.cache, which Bazel
	// points at the same directory.)
	if dir := os.Getenv("TEST_TMPDIR"); dir != "" {
		if err := os.Setenv("TMPDIR", dir); err != nil {
			return nil, err
		}
	}
	s, err := scheme.New()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     []string{filepath.Join(root, "api", "crd")},
		ErrorIfCRDPathMissing: true,
		Scheme:                s,
	}
	for _, opt := range opts {
		opt(env, root)
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest with assets from %s: %w", assets, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Environment{Config: cfg, Client: c, Scheme: s, env: env}, nil
}

// WebhookServing returns where the apiserver calls the webhook server: the
// host name in its URL, and the port.
func (e *Environment) WebhookServing() (host string, port int) {
	o := e.env.WebhookInstallOptions
	return o.LocalServingHostExternalName, o.LocalServingPort
}

// Kubeconfig returns a kubeconfig for a new user of the given groups (for
// example system:masters), for processes outside this one: the controller,
// kube-controller-manager or kube-scheduler run as binaries.
func (e *Environment) Kubeconfig(user string, groups ...string) ([]byte, error) {
	u, err := e.env.AddUser(envtest.User{Name: user, Groups: groups}, nil)
	if err != nil {
		return nil, err
	}
	return u.KubeConfig()
}

// Stop shuts the apiserver and etcd down.
func (e *Environment) Stop() error {
	return e.env.Stop()
}

// StartManager starts a controller-runtime manager against this apiserver,
// with the cache options and the setup (indexes, reconcilers) given, and
// returns a function that stops it and waits until it stopped.
func (e *Environment) StartManager(cacheOptions cache.Options, setup func(ctrl.Manager) error) (stop func(), err error) {
	webhooks := e.env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{
		Scheme:                 e.Scheme,
		Cache:                  cacheOptions,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: webhooks.LocalServingHost, Port: webhooks.LocalServingPort, CertDir: webhooks.LocalServingCertDir,
		}),
	})
	if err != nil {
		return nil, err
	}
	if err := setup(mgr); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("manager cache did not sync: %v", <-done)
	}
	if len(webhooks.Paths) > 0 {
		if err := waitForWebhookServer(ctx, webhooks); err != nil {
			cancel()
			return nil, err
		}
	}
	return func() {
		cancel()
		// Stopped when asked, a manager returns nil; an error means a part
		// of it failed, and the specs may have run without it.
		gomega.ExpectWithOffset(1, <-done).To(gomega.Succeed(), "the manager stopped with an error")
	}, nil
}

// waitForWebhookServer returns once the webhook server accepts TLS
// connections, so that no test meets an admission error from a server still
// starting.
func waitForWebhookServer(ctx context.Context, o envtest.WebhookInstallOptions) error {
	addr := net.JoinHostPort(o.LocalServingHost, strconv.Itoa(o.LocalServingPort))
	dialer := &net.Dialer{Timeout: time.Second}
	lastErr := errors.New("not probed")
	err := wait.PollUntilContextTimeout(ctx, Interval, Timeout, true, func(context.Context) (bool, error) {
		conn, err := tls.DialWithDialer(dialer, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // readiness probe only
		if err != nil {
			lastErr = err
			return false, nil
		}
		return true, conn.Close()
	})
	if wait.Interrupted(err) {
		return fmt.Errorf("webhook server at %s not serving: %w", addr, lastErr)
	}
	return err
}

// CreateNamespace creates a namespace named after prefix plus a random
// suffix, so that every spec gets one of its own, and returns its name.
func CreateNamespace(ctx context.Context, c client.Client, prefix string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := c.Create(ctx, ns); err != nil {
		return "", fmt.Errorf("creating a namespace for the test: %w", err)
	}
	return ns.Name, nil
}

// TestNamespace is CreateNamespace for a spec, which fails if it cannot.
func TestNamespace(ctx context.Context, c client.Client, prefix string) string {
	ns, err := CreateNamespace(ctx, c, prefix)
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	return ns
}

// Kubectl runs the envtest kubectl against this apiserver, as a member of
// system:masters, and returns its standard output.
func (e *Environment) Kubectl(args ...string) (string, error) {
	admin, err := e.env.AddUser(envtest.User{Name: "framework-kubectl", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	kubectl, err := admin.Kubectl()
	if err != nil {
		return "", err
	}
	stdout, stderr, err := kubectl.Run(args...)
	if err != nil {
		errText, _ := io.ReadAll(stderr)
		return "", fmt.Errorf("kubectl %v: %w: %s", args, err, errText)
	}
	out, err := io.ReadAll(stdout)
	return string(out), err
}

// SourceRoot returns the root of the real source tree, which under Bazel
// is where the runfiles' go.mod links to. For tests that read the whole
// tree (generated-file checks), which Bazel runs unsandboxed and uncached.
func SourceRoot() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	gomod, err := filepath.EvalSymlinks(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	return filepath.Dir(gomod), nil
}

// RepoRoot returns the root of the source tree: the runfiles tree under
// Bazel (where only declared data is present), the directory of go.mod
// otherwise.
func RepoRoot() (string, error) {
	if srcdir, workspace := os.Getenv("TEST_SRCDIR"), os.Getenv("TEST_WORKSPACE"); srcdir != "" && workspace != "" {
		return filepath.Join(srcdir, workspace), nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory: run the tests from inside the repository")
		}
		dir = parent
	}
}

// webhookPort is a free port below the kernel's ephemeral range. envtest's
// own choice is a port the kernel just handed out and took back: the
// connections of the other tests running beside this one (API servers,
// etcd, their clients) draw from the same range, and one of them took it
// before the webhook, started seconds later, could listen on it.
func webhookPort() int {
	for range 100 {
		port := 20000 + rand.IntN(12000)
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			_ = l.Close()
			return port
		}
	}
	return 0 // envtest picks one
}
