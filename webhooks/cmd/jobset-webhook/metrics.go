package main

import (
	"crypto/tls"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/fastjobset/jobset/api/metricsauth"
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

// The metrics endpoint asks the API server who each scraper is (a
// TokenReview) and whether it may get the non-resource URL /metrics (a
// SubjectAccessReview), as community JobSet's does (package metricsauth):
// a scraper's token must be bound to the ClusterRole jobset-metrics-reader.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// metricsServing serves the metrics over HTTPS, behind authentication and
// authorization ("0": not at all).
func metricsServing(addr string, tlsOpts ...func(*tls.Config)) metricsserver.Options {
	return metricsserver.Options{BindAddress: addr, SecureServing: addr != "0", FilterProvider: metricsauth.Filter, TLSOpts: tlsOpts}
}
