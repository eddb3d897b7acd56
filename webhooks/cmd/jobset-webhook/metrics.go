package main

import (
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/fastjobset/jobset/api/version"
)

// buildInfo is the controller's jobset_build_info, on the webhook's own
// metrics endpoint: the two Deployments roll out apart, and each replica
// says which version it runs. The webhook may not import the controller's
// metrics package, so the name and labels are repeated here, and both
// tests pin them.
var buildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Subsystem: "jobset",
	Name:      "build_info",
	Help:      "Always 1; its labels are the webhook's version and the Go toolchain that built it.",
}, []string{"version", "go_version"})

func init() {
	crmetrics.Registry.MustRegister(buildInfo)
	buildInfo.WithLabelValues(version.Version, runtime.Version()).Set(1)
}
