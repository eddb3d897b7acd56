// Command jobset-webhook serves the admission webhooks: JobSet defaulting,
// validation and agent injection, and the Pod webhooks of exclusive
// placement. Its serving certificate is generated and
// rotated by the webhook itself (kept in a Secret, and injected into the
// webhook configurations), unless --cert-manager says cert-manager provides
// it.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/fastjobset/jobset/api/features"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/api/scheme"
	"github.com/fastjobset/jobset/api/tlsoptions"
	"github.com/fastjobset/jobset/api/version"
	jobsetwebhook "github.com/fastjobset/jobset/webhooks/jobsetwebhook"
	podwebhook "github.com/fastjobset/jobset/webhooks/pod"
)

// The certificate rotator keeps the certificate in a Secret of the webhook's
// namespace and writes the CA into the webhook configurations: its RBAC
// markers are in rbac.go.

// options are the command-line flags.
type options struct {
	port                             int
	certDir, probeAddr, metricsAddr  string
	certManager                      bool
	namespace, service, secret       string
	mutatingConfig, validatingConfig string
	// extraDNSNames are more names for the generated certificate.
	extraDNSNames []string
	// The generated serving certificate is valid for certValidity (its CA
	// ten times longer), and renewed certRenewBefore it expires, as found
	// by a check every certCheckInterval.
	certValidity, certRenewBefore, certCheckInterval time.Duration
	agent                                            sidecar.Options
	gates                                            features.Gates
	tls                                              tlsoptions.Options
}

func main() {
	var o options
	var exitCode int
	flag.IntVar(&o.port, "port", 9443, "Port of the webhook server.")
	flag.StringVar(&o.certDir, "cert-dir", "/tmp/k8s-webhook-server/serving-certs", "Directory of the serving certificate (tls.crt, tls.key).")
	flag.BoolVar(&o.certManager, "cert-manager", false, "cert-manager provides the serving certificate and the CA bundle; do not generate or rotate them.")
	flag.StringVar(&o.namespace, "namespace", os.Getenv("POD_NAMESPACE"), "Namespace of the webhook's Service and certificate Secret.")
	flag.StringVar(&o.service, "service-name", "jobset-webhook-service", "Service in front of the webhook: its DNS name is in the certificate.")
	flag.StringVar(&o.secret, "secret-name", "jobset-webhook-server-cert", "Secret that keeps the generated certificate.")
	flag.StringVar(&o.mutatingConfig, "mutating-webhook-configuration", "jobset-mutating-webhook-configuration", "MutatingWebhookConfiguration to inject the CA bundle into.")
	flag.StringVar(&o.validatingConfig, "validating-webhook-configuration", "jobset-validating-webhook-configuration", "ValidatingWebhookConfiguration to inject the CA bundle into.")
	flag.Func("extra-dns-names", "More DNS names for the generated certificate, comma-separated (for example when the apiserver reaches the webhook by another name).", func(v string) error {
		o.extraDNSNames = append(o.extraDNSNames, strings.Split(v, ",")...)
		return nil
	})
	flag.DurationVar(&o.certValidity, "cert-validity", 365*24*time.Hour, "Validity of the generated serving certificate (its CA: ten times as long).")
	flag.DurationVar(&o.certRenewBefore, "cert-renew-before", 90*24*time.Hour, "Renew the generated certificate (and CA) this long before it expires.")
	flag.DurationVar(&o.certCheckInterval, "cert-check-interval", 12*time.Hour, "How often to check whether the generated certificate needs renewing.")
	flag.StringVar(&o.agent.Image, "agent-image", "", "Image of the agent sidecar injected into JobSets annotated jobset.sigs.k8s.io/inject-agent=true (empty: injection is refused).")
	flag.IntVar(&exitCode, "agent-restart-exit-code", agentspec.DefaultRestartExitCode, "Exit code with which injected agents restart their Pod in place (1..255).")
	flag.Func("agent-cpu", "CPU request and limit (equal) of injected agents, a quantity such as 100m (default "+sidecar.DefaultCPU.String()+").", quantityFlag("agent-cpu", &o.agent.CPU))
	flag.Func("agent-memory", "Memory request and limit (equal) of injected agents, a quantity such as 32Mi (default "+sidecar.DefaultMemory.String()+").", quantityFlag("agent-memory", &o.agent.Memory))
	flag.BoolVar(&o.agent.FenceNodeLease, "agent-fence-node-lease", true, "Injected agents also stop their worker when their node's Lease goes unrenewed and no peer vouches (FENCE_NODE_LEASE), through the watch on Leases the controller grants them, so a wrapped worker's member is declared lost without a hold after the mark. false: the API server's silence alone fences, and such a member's group waits about 20 s more after the mark.")
	flag.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address of /healthz and /readyz.")
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", ":8443", "Address of the Prometheus metrics endpoint (\"0\" disables it).")
	flag.Var(&o.gates, "feature-gates", features.Usage())
	o.tls.BindFlags(flag.CommandLine)
	printVersion := flag.Bool("version", false, "Print the version and exit.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	if *printVersion {
		fmt.Println(version.String("jobset-webhook"))
		return
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	if exitCode < 1 || exitCode > 255 {
		fmt.Fprintf(os.Stderr, "jobset-webhook: --agent-restart-exit-code=%d: must be from 1 to 255\n", exitCode)
		os.Exit(2)
	}
	o.agent.RestartExitCode = int32(exitCode)
	if !o.certManager && o.certRenewBefore >= o.certValidity {
		fmt.Fprintf(os.Stderr, "jobset-webhook: --cert-renew-before=%s must be shorter than --cert-validity=%s, or every check would renew\n", o.certRenewBefore, o.certValidity)
		os.Exit(2)
	}
	if _, err := o.tls.ServerConfig(o.gates); err != nil {
		fmt.Fprintln(os.Stderr, "jobset-webhook:", err)
		os.Exit(2)
	}
	if err := run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), o); err != nil {
		fmt.Fprintln(os.Stderr, "jobset-webhook:", err)
		os.Exit(1)
	}
}

// quantityFlag parses a positive resource quantity into q.
func quantityFlag(name string, q *resource.Quantity) func(string) error {
	return func(v string) error {
		parsed, err := resource.ParseQuantity(v)
		if err != nil || parsed.Sign() <= 0 {
			return fmt.Errorf("--%s=%q: must be a positive Kubernetes quantity, for example 100m for CPU or 32Mi for memory", name, v)
		}
		*q = parsed
		return nil
	}
}

func run(ctx context.Context, cfg *rest.Config, o options) error {
	s, err := scheme.New()
	if err != nil {
		return err
	}
	tlsPolicy, err := o.tls.ServerConfig(o.gates)
	if err != nil {
		return err
	}
	tlsOpts := []func(*tls.Config){tlsPolicy}
	// Building the manager asks the API server for REST mappings: without
	// one it would fail, and the webhook crash-loop through the outage.
	if err := waitForAPIServer(ctx, cfg); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return nil
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: s,
		// The Pod webhooks read leader Pods: cache JobSet Pods only.
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}: {Label: jobset.ChildrenSelector()},
		}},
		// Started by the first webhook registration, after the certificate.
		WebhookServer:          webhook.NewServer(webhook.Options{Port: o.port, CertDir: o.certDir, TLSOpts: tlsOpts}),
		HealthProbeBindAddress: o.probeAddr,
		Metrics:                metricsServing(o.metricsAddr, tlsOpts...),
	})
	if err != nil {
		return fmt.Errorf("building the manager: %w", err)
	}

	certsReady := make(chan struct{})
	if o.certManager {
		close(certsReady)
	} else {
		if o.namespace == "" {
			return fmt.Errorf("--namespace (or POD_NAMESPACE) is required to keep the generated certificate in a Secret")
		}
		secret := types.NamespacedName{Namespace: o.namespace, Name: o.secret}
		if err := ensureSecret(ctx, cfg, secret); err != nil {
			return err
		}
		if err := rotator.AddRotator(forRotator(mgr, o.namespace, o.secret, o.mutatingConfig, o.validatingConfig), &rotator.CertRotator{
			SecretKey:      secret,
			CertDir:        o.certDir,
			CAName:         "jobset-ca",
			CAOrganization: "jobset",
			DNSName:        fmt.Sprintf("%s.%s.svc", o.service, o.namespace),
			ExtraDNSNames:  append([]string{fmt.Sprintf("%s.%s.svc.cluster.local", o.service, o.namespace)}, o.extraDNSNames...),
			IsReady:        certsReady,
			// Named after the Secret it keeps: controller names are unique
			// per process.
			ControllerName: "cert-rotator-" + o.secret,
			// Renewing the CA too is harmless: the rotator injects the
			// new bundle into the webhook configurations at once.
			CaCertDuration:         10 * o.certValidity,
			ServerCertDuration:     o.certValidity,
			LookaheadInterval:      o.certRenewBefore,
			RotationCheckFrequency: o.certCheckInterval,
			Webhooks: []rotator.WebhookInfo{
				{Name: o.mutatingConfig, Type: rotator.Mutating},
				{Name: o.validatingConfig, Type: rotator.Validating},
			},
		}); err != nil {
			return fmt.Errorf("setting up certificate rotation: %w", err)
		}
	}

	// Serve admission only with a certificate: register the webhooks once
	// the rotator has written one. The rotator also reports it as it
	// stops; a manager that is stopping takes no new server.
	setupErr := make(chan error, 1)
	go func() {
		select {
		case <-certsReady:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			return
		}
		setupErr <- setupWebhooks(mgr, o.agent, o.gates)
	}()
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	// Ready once the webhook server serves, which it does only with a
	// certificate. (Calling GetWebhookServer earlier would add the server to
	// the manager, which would then start it without one, and fail.)
	if err := mgr.AddReadyzCheck("readyz", func(req *http.Request) error {
		select {
		case <-certsReady:
			return mgr.GetWebhookServer().StartedChecker()(req)
		default:
			return errors.New("waiting for the serving certificate")
		}
	}); err != nil {
		return err
	}
	go func() {
		if err := <-setupErr; err != nil {
			ctrl.Log.Error(err, "setting up the JobSet webhooks")
			os.Exit(1)
		}
	}()
	return mgr.Start(ctx)
}

// setupWebhooks registers every webhook this binary serves.
func setupWebhooks(mgr ctrl.Manager, agent sidecar.Options, gates features.Gates) error {
	if err := jobsetwebhook.SetupWithManager(mgr, agent, gates); err != nil {
		return err
	}
	return podwebhook.SetupWithManager(mgr)
}

// apiServerBackoff paces the webhook's waits for the API server: capped
// low, so that it serves soon after an outage ends.
var apiServerBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.5, Cap: 5 * time.Second, Steps: math.MaxInt32}

// waitForAPIServer returns once the API server answers discovery, or ctx
// ends.
func waitForAPIServer(ctx context.Context, cfg *rest.Config) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	log := ctrl.Log.WithName("setup")
	err = wait.ExponentialBackoffWithContext(ctx, apiServerBackoff, func(context.Context) (bool, error) {
		if _, err := dc.ServerVersion(); err != nil {
			log.Info("Waiting for the API server", "err", err.Error())
			return false, nil
		}
		return true, nil
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// ensureSecret creates the (empty) Secret the rotator keeps the certificate
// in, unless it exists: the rotator only updates it. Without an API server
// it waits for one (a webhook that exits here would crash-loop through an
// outage and come back late); only ctx ends the wait.
func ensureSecret(ctx context.Context, cfg *rest.Config, key types.NamespacedName) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	log := ctrl.Log.WithName("setup")
	err = wait.ExponentialBackoffWithContext(ctx, apiServerBackoff, func(ctx context.Context) (bool, error) {
		err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}})
		switch {
		case err == nil || apierrors.IsAlreadyExists(err):
			return true, nil
		case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
			// No retry fixes RBAC or a bad name.
			return false, fmt.Errorf("creating Secret %s for the serving certificate: %w", key, err)
		default:
			log.Info("Waiting for the API server to create the certificate Secret", "secret", key, "err", err.Error())
			return false, nil
		}
	})
	if ctx.Err() != nil {
		return nil // told to stop while waiting: not a failure
	}
	return err
}
