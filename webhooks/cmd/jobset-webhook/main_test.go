package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// TestSelfManagedCertificate runs the webhook as the binary does, with a
// certificate it generates itself, against a real apiserver whose webhook
// configurations trust another CA at first: admission works once the
// webhook has injected its own CA bundle.
func TestSelfManagedCertificate(t *testing.T) {
	w := startWebhook(t, nil)
	js := w.admitInjected(t, "trainer")

	spec := js.Spec.ReplicatedJobs[0].Template.Spec
	if *spec.BackoffLimit != math.MaxInt32 || len(spec.Template.Spec.InitContainers) != 1 {
		t.Errorf("the JobSet was not defaulted and injected by the webhook: backoffLimit %d, init containers %d",
			*spec.BackoffLimit, len(spec.Template.Spec.InitContainers))
	}
	secret := w.secret(t)
	if len(secret.Data["ca.crt"]) == 0 || len(secret.Data["tls.crt"]) == 0 {
		t.Errorf("the Secret holds no CA or serving certificate")
	}
}

// TestCertificateRenewal shortens the certificate's life to seconds: the
// webhook renews it before it expires, serves the new one, and admission
// goes on working.
func TestCertificateRenewal(t *testing.T) {
	w := startWebhook(t, func(o *options) {
		o.secret = "short-lived-cert"
		o.certValidity, o.certRenewBefore, o.certCheckInterval = 6*time.Second, 3*time.Second, 500*time.Millisecond
	})
	w.admitInjected(t, "before")
	first := w.secret(t).Data["tls.crt"]

	err := wait.PollUntilContextTimeout(w.ctx, framework.Interval, framework.Timeout, true, func(context.Context) (bool, error) {
		return !bytes.Equal(w.secret(t).Data["tls.crt"], first), nil
	})
	if err != nil {
		t.Fatalf("the serving certificate was not renewed within %s, though it expires after 6 s: %v", framework.Timeout, err)
	}
	w.admitInjected(t, "after")
}

// runningWebhook is the webhook binary's run, serving envtest's apiserver.
type runningWebhook struct {
	env  *framework.Environment
	ctx  context.Context
	o    options
	done chan error
}

// startWebhook starts run against a fresh apiserver, with options as a
// deployment sets them (adjusted by adjust), and plays the kubelet
// mounting the certificate Secret.
func startWebhook(t *testing.T, adjust func(*options)) *runningWebhook {
	t.Helper()
	return startWebhookVia(t, adjust, nil)
}

// startWebhookVia is startWebhook with the webhook (not the "kubelet")
// reaching the apiserver through the config via makes, after the optional
// before ran with the apiserver and the options.
func startWebhookVia(t *testing.T, adjust func(*options), via func(*rest.Config) *rest.Config, before ...func(context.Context, *framework.Environment, options)) *runningWebhook {
	t.Helper()
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	env, err := framework.Start(framework.WithWebhooks())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	// Made before the cleanup below registers, so removed after it ran:
	// the webhook and the "kubelet" write here until they stop.
	certDir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	ns, err := framework.CreateNamespace(ctx, env.Client, "jobset-system")
	if err != nil {
		t.Fatal(err)
	}

	host, port := env.WebhookServing()
	o := options{
		port: port, certDir: certDir, probeAddr: "0", metricsAddr: "0",
		namespace: ns, service: "jobset-webhook-service", secret: "jobset-webhook-server-cert",
		mutatingConfig: "mutating-webhook-configuration", validatingConfig: "validating-webhook-configuration",
		extraDNSNames: []string{host},
		certValidity:  365 * 24 * time.Hour, certRenewBefore: 90 * 24 * time.Hour, certCheckInterval: 12 * time.Hour,
		agent: sidecar.Options{Image: "jobset-agent:test", RestartExitCode: 88},
	}
	if adjust != nil {
		adjust(&o)
	}
	for _, f := range before {
		f(ctx, env, o)
	}
	w := &runningWebhook{env: env, ctx: ctx, o: o, done: make(chan error, 1)}
	var running sync.WaitGroup
	cfg := env.Config
	if via != nil {
		cfg = via(cfg)
	}
	running.Go(func() { w.done <- run(ctx, cfg, o) })
	running.Go(func() { mountSecret(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: o.secret}, o.certDir) })
	t.Cleanup(func() {
		cancel()
		running.Wait()
	})
	return w
}

// admitInjected creates a JobSet that asks for agent injection, retrying
// until the webhook admits it, and returns it as stored.
func (w *runningWebhook) admitInjected(t *testing.T, name string) *jobset.JobSet {
	t.Helper()
	js := wrappers.MakeJobSet(name, w.o.namespace).RestartStrategy(jobset.InPlaceRestart).
		Annotations(map[string]string{jobset.InjectAgentKey: "true"}).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
	var lastErr error
	err := wait.PollUntilContextTimeout(w.ctx, framework.Interval, framework.Timeout, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-w.done:
			t.Fatalf("the webhook stopped: %v", err)
		default:
		}
		lastErr = w.env.Client.Create(ctx, js.DeepCopy())
		return lastErr == nil, nil
	})
	if err != nil {
		t.Fatalf("admission never worked with the self-managed certificate: %v (%v)", lastErr, err)
	}
	got := &jobset.JobSet{}
	if err := w.env.Client.Get(w.ctx, client.ObjectKeyFromObject(js), got); err != nil {
		t.Fatal(err)
	}
	return got
}

func (w *runningWebhook) secret(t *testing.T) *corev1.Secret {
	t.Helper()
	secret := &corev1.Secret{}
	if err := w.env.Client.Get(w.ctx, client.ObjectKey{Namespace: w.o.namespace, Name: w.o.secret}, secret); err != nil {
		t.Fatalf("the certificate Secret: %v", err)
	}
	return secret
}

// mountSecret plays the kubelet, which keeps a Secret volume in sync: the
// rotator writes the certificate into the Secret and waits for it to show
// up in the webhook's certificate directory.
func mountSecret(ctx context.Context, c client.Client, key client.ObjectKey, dir string) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		secret := &corev1.Secret{}
		if err := c.Get(ctx, key, secret); err == nil {
			// Each file whole or not at all, as the kubelet's atomic
			// writer does: the webhook server fails to start on a
			// half-written certificate.
			for name, data := range secret.Data {
				tmp := filepath.Join(dir, "."+name+".tmp")
				if os.WriteFile(tmp, data, 0o600) == nil {
					_ = os.Rename(tmp, filepath.Join(dir, name))
				}
			}
		}
	}, framework.Interval)
}
