package main

import (
	"context"
	"crypto/tls"
	"net"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/fastjobset/jobset/api/tlsoptions"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// Both servers of the webhook binary follow --tls-min-version: with
// VersionTLS13 the admission server (which the apiserver reaches over
// TLS 1.3) and the metrics server serve a TLS 1.3 client and refuse a
// TLS 1.2 one.
func TestServersRefuseClientsBelowTheMinimumTLSVersion(t *testing.T) {
	metricsAddr := framework.FreeLoopbackAddress(t)
	w := startWebhook(t, func(o *options) {
		o.secret = "tls13-cert" // the rotator's controller is named after it: unique per process
		o.metricsAddr = metricsAddr
		o.tls = tlsoptions.Options{MinVersion: "VersionTLS13"}
	})
	w.admitInjected(t, "trainer")

	host, port := w.env.WebhookServing()
	for server, addr := range map[string]string{"admission": net.JoinHostPort(host, strconv.Itoa(port)), "metrics": metricsAddr} {
		var lastErr error
		err := wait.PollUntilContextTimeout(w.ctx, framework.Interval, framework.Timeout, true, func(context.Context) (bool, error) {
			lastErr = framework.TLSHandshake(addr, tls.VersionTLS13)
			return lastErr == nil, nil
		})
		if err != nil {
			t.Errorf("the %s server never served a TLS 1.3 client: %v", server, lastErr)
			continue
		}
		if err := framework.TLSHandshake(addr, tls.VersionTLS12); err == nil {
			t.Errorf("the %s server served a TLS 1.2 client under --tls-min-version=VersionTLS13", server)
		}
	}
}
