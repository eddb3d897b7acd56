package main

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/rest"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/fastjobset/jobset/api/version"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/scrapecheck"
)

// The webhook's metrics endpoint serves controller-runtime's registry, with
// the same jobset_build_info as the controller's.
func TestBuildInfo(t *testing.T) {
	want := `
# HELP jobset_build_info Always 1; its labels are the webhook's version and the Go toolchain that built it.
# TYPE jobset_build_info gauge
jobset_build_info{go_version="` + runtime.Version() + `",version="` + version.Version + `"} 1
`
	if err := testutil.GatherAndCompare(crmetrics.Registry, strings.NewReader(want), "jobset_build_info"); err != nil {
		t.Error(err)
	}
}

// The metrics endpoint serves a scraper bound to jobset-metrics-reader and
// refuses anyone else, while the webhook runs as its ServiceAccount with
// nothing but its generated RBAC: the TokenReviews and
// SubjectAccessReviews that decide are its own requests.
func TestMetricsNeedAnAuthorizedToken(t *testing.T) {
	const user = "system:serviceaccount:jobset-system:jobset-webhook"
	addr := framework.FreeLoopbackAddress(t)
	// Its own Secret name: the rotator's controller is named after it, and
	// controller names are unique per process.
	w := startWebhookVia(t, func(o *options) { o.secret, o.metricsAddr = "metrics-test-cert", addr }, func(cfg *rest.Config) *rest.Config {
		cfg = rest.CopyConfig(cfg)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:serviceaccounts", "system:authenticated"}}
		return cfg
	}, func(ctx context.Context, env *framework.Environment, o options) {
		bindGeneratedRBAC(ctx, t, env.Client, o, user)
	})
	scrapecheck.Check(w.ctx, t, w.env, w.o.namespace, "https://"+addr+"/metrics", "jobset_build_info{")
}
