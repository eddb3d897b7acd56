package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
	jobsetwebhook "github.com/fastjobset/jobset/webhooks/jobset"
)

// TestSelfManagedCertificate runs the webhook as the binary does, with a
// certificate it generates itself, against a real apiserver whose webhook
// configurations trust another CA at first: admission works once the
// webhook has injected its own CA bundle.
func TestSelfManagedCertificate(t *testing.T) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	env, err := framework.Start(framework.WithWebhooks())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns, err := framework.CreateNamespace(ctx, env.Client, "jobset-system")
	if err != nil {
		t.Fatal(err)
	}

	host, port := env.WebhookServing()
	o := options{
		port: port, certDir: t.TempDir(), probeAddr: "0", metricsAddr: "0",
		namespace: ns, service: "jobset-webhook-service", secret: "jobset-webhook-server-cert",
		mutatingConfig: "mutating-webhook-configuration", validatingConfig: "validating-webhook-configuration",
		extraDNSNames: []string{host},
		agent:         jobsetwebhook.AgentOptions{Image: "jobset-agent:test", RestartExitCode: 88},
	}
	done := make(chan error, 1)
	go func() { done <- run(ctx, env.Config, o) }()
	go mountSecret(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: o.secret}, o.certDir)

	js := wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).
		Annotations(map[string]string{jobset.InjectAgentKey: "true"}).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
	var lastErr error
	for deadline := time.Now().Add(framework.Timeout); time.Now().Before(deadline); time.Sleep(framework.Interval) {
		select {
		case err := <-done:
			t.Fatalf("the webhook stopped: %v", err)
		default:
		}
		if lastErr = env.Client.Create(ctx, js.DeepCopy()); lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		t.Fatalf("admission never worked with the self-managed certificate: %v", lastErr)
	}

	got := &jobset.JobSet{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(js), got); err != nil {
		t.Fatal(err)
	}
	spec := got.Spec.ReplicatedJobs[0].Template.Spec
	if *spec.BackoffLimit != math.MaxInt32 || len(spec.Template.Spec.InitContainers) != 1 {
		t.Errorf("the JobSet was not defaulted and injected by the webhook: backoffLimit %d, init containers %d",
			*spec.BackoffLimit, len(spec.Template.Spec.InitContainers))
	}
	secret := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: o.secret}, secret); err != nil {
		t.Fatalf("the certificate Secret: %v", err)
	}
	if len(secret.Data["ca.crt"]) == 0 || len(secret.Data["tls.crt"]) == 0 {
		t.Errorf("the Secret holds no CA or serving certificate")
	}
}

// mountSecret plays the kubelet, which keeps a Secret volume in sync: the
// rotator writes the certificate into the Secret and waits for it to show
// up in the webhook's certificate directory.
func mountSecret(ctx context.Context, c client.Client, key client.ObjectKey, dir string) {
	for ctx.Err() == nil {
		secret := &corev1.Secret{}
		if err := c.Get(ctx, key, secret); err == nil {
			for name, data := range secret.Data {
				_ = os.WriteFile(filepath.Join(dir, name), data, 0o600)
			}
		}
		time.Sleep(framework.Interval)
	}
}
