// Package metrics defines the JobSet controller's Prometheus metrics, served
// with controller-runtime's on the manager's metrics endpoint.
package metrics

import (
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/fastjobset/jobset/api/version"
)

var (
	// BuildInfo says which version each replica runs, for a rollout to be
	// followed and a dashboard to be read against the right release notes.
	BuildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: "jobset",
		Name:      "build_info",
		Help:      "Always 1; its labels are the controller's version and the Go toolchain that built it.",
	}, []string{"version", "go_version"})

	// JobSetsCompleted and JobSetsFailed have community JobSet's names and
	// labels, for its dashboards and alerts to work unchanged. As in
	// community, a JobSet's series outlive the JobSet: deleting them would
	// make a sum over them fall, which rate() and increase() read as a
	// counter reset.
	JobSetsCompleted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "jobset",
		Name:      "completed_total",
		Help:      "JobSets that completed, counted once each, when the Completed condition was persisted.",
	}, []string{"jobset_name", "namespace"})
	JobSetsFailed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "jobset",
		Name:      "failed_total",
		Help:      "JobSets that failed, counted once each, when the Failed condition was persisted.",
	}, []string{"jobset_name", "namespace"})

	// JobSetsFailedByReason keeps the reason, which community's
	// jobset_failed_total does not carry, under a name of its own.
	JobSetsFailedByReason = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "jobset",
		Name:      "failed_by_reason_total",
		Help:      "JobSets that failed, by the reason of their Failed condition, counted when it was persisted.",
	}, []string{"namespace", "reason"})

	// JobSetRestarts counts full restarts (every child Job recreated).
	JobSetRestarts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "jobset",
		Name:      "restarts_total",
		Help:      "Full restarts of JobSets (every child Job recreated), counted when status.restarts was persisted.",
	}, []string{"namespace"})

	// InPlaceRestarts counts group restarts done in place.
	InPlaceRestarts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "jobset",
		Name:      "inplace_restarts_total",
		Help:      "In-place group restarts started, counted when status.inPlaceRestarts was persisted.",
	}, []string{"namespace"})

	// InPlaceRestartsByCause counts the same restarts by their cause
	// (CauseFailure, CauseHang), under a name of its own so that the
	// labels of jobset_inplace_restarts_total stay as they are.
	InPlaceRestartsByCause = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "jobset",
		Name:      "inplace_restarts_by_cause_total",
		Help:      "In-place group restarts started (counted toward maxRestarts), by cause: Failure (a member failed or restarted) or Hang (a member's worker made no progress within the JobSet's hang timeouts).",
	}, []string{"namespace", "cause"})

	// InPlaceRestartDuration measures group restarts from the first sign of
	// failure (deprecation) to the sync of the new epoch.
	InPlaceRestartDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: "jobset",
		Name:      "inplace_restart_duration_seconds",
		Help:      "Duration of in-place group restarts, from deprecation of the synced epoch to the sync of the next.",
		Buckets:   []float64{0.5, 1, 2, 3, 4, 5, 7.5, 10, 15, 20, 30, 60, 120, 300},
	}, []string{"namespace"})

	// InPlaceRestartPods counts the members that in-place group restarts
	// brought back, by how their agents report it (TierProcess, TierPod,
	// TierReplaced, TierUnreported): a restart of the worker's process
	// moves no restartCount, so this is where it shows.
	InPlaceRestartPods = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "jobset",
		Name:      "inplace_restart_pods_total",
		Help:      "Pods that completed in-place group restarts brought back, by tier, as their agents report it: process (the worker's process restarted, the Pod's containers kept running), pod (the Pod's containers restarted), replaced (a new Pod) or unreported (no report of the join).",
	}, []string{"namespace", "tier"})

	// NodeLossReplacements counts members marked Failed because their
	// node was lost.
	NodeLossReplacements = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "jobset",
		Name:      "node_loss_replacements_total",
		Help:      "Pods of in-place groups marked Failed, for their Jobs to replace, because their node's kubelet was silent past the bound.",
	}, []string{"namespace", "node"})

	// RepeatedFailureReplacements counts Pods replaced off a node where
	// they failed in place again and again.
	RepeatedFailureReplacements = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "jobset",
		Name:      "repeated_failure_replacements_total",
		Help:      "Pods of in-place groups marked Failed, for their Jobs to replace them on another node, because they failed in place again and again on their node.",
	}, []string{"namespace", "node"})

	// SyncedEpoch and DeprecatedEpoch mirror each InPlaceRestart JobSet's
	// status epochs.
	SyncedEpoch = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: "jobset",
		Name:      "synced_epoch",
		Help:      "status.syncedEpoch of InPlaceRestart JobSets.",
	}, []string{"namespace", "jobset"})
	DeprecatedEpoch = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: "jobset",
		Name:      "deprecated_epoch",
		Help:      "status.deprecatedEpoch of InPlaceRestart JobSets.",
	}, []string{"namespace", "jobset"})

	// GatherStalled mirrors the GatherStalled condition: the alert on a
	// stalled group restart reads it, so that it fires after the
	// controller's own threshold and not one of its own.
	GatherStalled = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: "jobset",
		Name:      "gather_stalled",
		Help:      "1 while the GatherStalled condition of an InPlaceRestart JobSet is True (its Pods have not joined the next epoch within --gather-stall-threshold), else 0.",
	}, []string{"namespace", "jobset"})

	// RestartsUsed and MaxRestarts are the restart budget of each
	// unfinished InPlaceRestart JobSet, for an alert before it runs out
	// (a finished JobSet needs none, and loses the series).
	RestartsUsed = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: "jobset",
		Name:      "restarts_used",
		Help:      "Restarts an unfinished InPlaceRestart JobSet has used of spec.failurePolicy.maxRestarts: full restarts and restarts of one Job that count, and group restarts in place.",
	}, []string{"namespace", "jobset"})
	MaxRestarts = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: "jobset",
		Name:      "max_restarts",
		Help:      "spec.failurePolicy.maxRestarts of an unfinished InPlaceRestart JobSet (0 without a failure policy).",
	}, []string{"namespace", "jobset"})
)

func init() {
	crmetrics.Registry.MustRegister(BuildInfo, JobSetsCompleted, JobSetsFailed, JobSetsFailedByReason, JobSetRestarts,
		InPlaceRestarts, InPlaceRestartsByCause, InPlaceRestartDuration, InPlaceRestartPods, NodeLossReplacements, RepeatedFailureReplacements, SyncedEpoch, DeprecatedEpoch,
		GatherStalled, RestartsUsed, MaxRestarts)
	BuildInfo.WithLabelValues(version.Version, runtime.Version()).Set(1)
}

// JobSetCompleted counts a JobSet whose Completed condition was persisted.
func JobSetCompleted(namespace, name string) {
	JobSetsCompleted.WithLabelValues(name, namespace).Inc()
}

// JobSetFailed counts a JobSet whose Failed condition was persisted, with
// the condition's reason.
func JobSetFailed(namespace, name, reason string) {
	JobSetsFailed.WithLabelValues(name, namespace).Inc()
	JobSetsFailedByReason.WithLabelValues(namespace, reason).Inc()
}

// SetEpochs mirrors an InPlaceRestart JobSet's status epochs. It is called on
// every reconcile, not only when they change, so that a newly elected
// controller reports every JobSet before its epochs next move.
func SetEpochs(namespace, name string, synced, deprecated int32) {
	SyncedEpoch.WithLabelValues(namespace, name).Set(float64(synced))
	DeprecatedEpoch.WithLabelValues(namespace, name).Set(float64(deprecated))
}

// SetGroupState mirrors an InPlaceRestart JobSet's GatherStalled
// condition and, until it finishes, its restart budget. Called on every
// reconcile, as SetEpochs.
func SetGroupState(namespace, name string, gatherStalled bool, restartsUsed, maxRestarts int32, finished bool) {
	stalled := 0.0
	if gatherStalled {
		stalled = 1
	}
	GatherStalled.WithLabelValues(namespace, name).Set(stalled)
	if finished {
		RestartsUsed.DeleteLabelValues(namespace, name)
		MaxRestarts.DeleteLabelValues(namespace, name)
		return
	}
	RestartsUsed.WithLabelValues(namespace, name).Set(float64(restartsUsed))
	MaxRestarts.WithLabelValues(namespace, name).Set(float64(maxRestarts))
}

// ForgetJobSet deletes the series of a JobSet that is gone, so that deleted
// JobSets do not accumulate.
func ForgetJobSet(namespace, name string) {
	for _, g := range []*prometheus.GaugeVec{SyncedEpoch, DeprecatedEpoch, GatherStalled, RestartsUsed, MaxRestarts} {
		g.DeleteLabelValues(namespace, name)
	}
}

// The causes of InPlaceRestartsByCause.
const (
	CauseFailure = "Failure"
	CauseHang    = "Hang"
)

// The tiers of InPlaceRestartPods.
const (
	TierProcess    = "process"
	TierPod        = "pod"
	TierReplaced   = "replaced"
	TierUnreported = "unreported"
)

// InPlaceRestartCompleted counts how the members of a completed group
// restart came back. Every tier but unreported is counted, a zero too, so
// that a rate over it is never absent.
func InPlaceRestartCompleted(namespace string, process, pod, replaced, unreported int32) {
	InPlaceRestartPods.WithLabelValues(namespace, TierProcess).Add(float64(process))
	InPlaceRestartPods.WithLabelValues(namespace, TierPod).Add(float64(pod))
	InPlaceRestartPods.WithLabelValues(namespace, TierReplaced).Add(float64(replaced))
	if unreported > 0 {
		InPlaceRestartPods.WithLabelValues(namespace, TierUnreported).Add(float64(unreported))
	}
}
