// Package metrics defines the JobSet controller's Prometheus metrics, served
// with controller-runtime's on the manager's metrics endpoint.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// JobSetsCompleted counts JobSets that reached the Completed state.
	JobSetsCompleted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "jobset",
		Name:      "completed_total",
		Help:      "JobSets that completed, counted once each, when the Completed condition was persisted.",
	}, []string{"namespace"})

	// JobSetsFailed counts JobSets that reached the Failed state.
	JobSetsFailed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "jobset",
		Name:      "failed_total",
		Help:      "JobSets that failed, counted once each, when the Failed condition was persisted.",
	}, []string{"namespace", "reason"})

	// JobSetRestarts counts full restarts (every child Job recreated).
	JobSetRestarts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "jobset",
		Name:      "restarts_total",
		Help:      "Full restarts of JobSets (every child Job recreated), counted when status.restarts was persisted.",
	}, []string{"namespace"})
)

func init() {
	crmetrics.Registry.MustRegister(JobSetsCompleted, JobSetsFailed, JobSetRestarts)
}
