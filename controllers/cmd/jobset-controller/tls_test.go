package main

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/fastjobset/jobset/api/tlsoptions"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// The metrics server follows --tls-min-version: with VersionTLS13 it
// serves a TLS 1.3 client and refuses a TLS 1.2 one.
func TestMetricsServerRefusesClientsBelowTheMinimumTLSVersion(t *testing.T) {
	addr := framework.FreeLoopbackAddress(t)
	o := options{metricsAddr: addr, probeAddr: "0", tls: tlsoptions.Options{MinVersion: "VersionTLS13"}}
	ctx, cancel := context.WithCancel(context.Background())
	// Serving metrics asks the API server nothing without an auth filter.
	servers, err := startServers(ctx, &rest.Config{Host: "https://127.0.0.1:1"}, o, healthz.Ping)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		servers.Wait()
	})

	var lastErr error
	err = wait.PollUntilContextTimeout(ctx, framework.Interval, framework.Timeout, true, func(context.Context) (bool, error) {
		lastErr = framework.TLSHandshake(addr, tls.VersionTLS13)
		return lastErr == nil, nil
	})
	if err != nil {
		t.Fatalf("the metrics server never served a TLS 1.3 client: %v", lastErr)
	}
	if err := framework.TLSHandshake(addr, tls.VersionTLS12); err == nil {
		t.Errorf("the metrics server served a TLS 1.2 client under --tls-min-version=VersionTLS13")
	}
}

// A bad TLS flag stops the controller before it starts, naming the flag.
func TestValidateNamesTheTLSFlag(t *testing.T) {
	o := options{tls: tlsoptions.Options{MinVersion: "VersionTLS10"}}
	if err := o.validate(); err == nil || !strings.Contains(err.Error(), "--tls-min-version=VersionTLS10") {
		t.Errorf("validate: %v, want an error naming --tls-min-version=VersionTLS10", err)
	}
}
