package main

import (
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/fastjobset/jobset/tools/testing/outage"
)

// outageLength is how long these tests keep the webhook from the apiserver:
// longer than any retry the webhook might make before giving up at once.
const outageLength = 3 * time.Second

// TestAdmitsWhileCutOffFromTheAPIServer cuts the webhook off the apiserver
// (the apiserver can still call it): admission decisions need no API
// server, so admission goes on, and the webhook does not exit.
func TestAdmitsWhileCutOffFromTheAPIServer(t *testing.T) {
	var p *outage.Proxy
	w := startWebhookVia(t, func(o *options) { o.secret = "cut-off" }, func(cfg *rest.Config) *rest.Config {
		p = startProxy(t, cfg)
		return p.Config(cfg)
	})
	w.admitInjected(t, "before")

	p.Down()
	w.expectRunningFor(t, outageLength)
	w.admitInjected(t, "during")
	w.expectRunningFor(t, 0)

	if err := p.Up(); err != nil {
		t.Fatal(err)
	}
	w.admitInjected(t, "after")
}

// TestStartsWhileTheAPIServerIsAway starts the webhook with no apiserver
// to reach: it waits for one instead of exiting (a webhook that exits
// crash-loops through an outage and comes back minutes after it), and
// serves once the apiserver is back.
func TestStartsWhileTheAPIServerIsAway(t *testing.T) {
	var p *outage.Proxy
	w := startWebhookVia(t, func(o *options) { o.secret = "started-alone" }, func(cfg *rest.Config) *rest.Config {
		p = startProxy(t, cfg)
		p.Down()
		return p.Config(cfg)
	})
	w.expectRunningFor(t, outageLength)
	if err := p.Up(); err != nil {
		t.Fatal(err)
	}
	w.admitInjected(t, "after")
}

func startProxy(t *testing.T, cfg *rest.Config) *outage.Proxy {
	t.Helper()
	p, err := outage.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// expectRunningFor fails if the webhook's run returns within d.
func (w *runningWebhook) expectRunningFor(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case err := <-w.done:
		t.Fatalf("the webhook exited: %v", err)
	case <-time.After(d):
	}
}
