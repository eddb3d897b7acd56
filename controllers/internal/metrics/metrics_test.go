package metrics

import (
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/fastjobset/jobset/api/version"
)

// The controller's metrics endpoint serves controller-runtime's registry:
// what is checked here is what a scrape reads.

func TestBuildInfo(t *testing.T) {
	want := `
# HELP jobset_build_info Always 1; its labels are the controller's version and the Go toolchain that built it.
# TYPE jobset_build_info gauge
jobset_build_info{go_version="` + runtime.Version() + `",version="` + version.Version + `"} 1
`
	if err := testutil.GatherAndCompare(crmetrics.Registry, strings.NewReader(want), "jobset_build_info"); err != nil {
		t.Error(err)
	}
}

// jobset_completed_total and jobset_failed_total carry community JobSet's
// labels, jobset_name and namespace, and nothing more; the reason of a
// failure is counted apart.
func TestTerminalCountersHaveCommunityLabels(t *testing.T) {
	JobSetsCompleted.Reset()
	JobSetsFailed.Reset()
	JobSetsFailedByReason.Reset()

	JobSetCompleted("team-a", "trainer")
	JobSetFailed("team-a", "eval", "FailedJobs")
	JobSetFailed("team-a", "eval-2", "FailedJobs")
	JobSetFailed("team-b", "eval", "ReachedMaxRestarts")

	want := `
# HELP jobset_completed_total JobSets that completed, counted once each, when the Completed condition was persisted.
# TYPE jobset_completed_total counter
jobset_completed_total{jobset_name="trainer",namespace="team-a"} 1
# HELP jobset_failed_total JobSets that failed, counted once each, when the Failed condition was persisted.
# TYPE jobset_failed_total counter
jobset_failed_total{jobset_name="eval",namespace="team-a"} 1
jobset_failed_total{jobset_name="eval-2",namespace="team-a"} 1
jobset_failed_total{jobset_name="eval",namespace="team-b"} 1
# HELP jobset_failed_by_reason_total JobSets that failed, by the reason of their Failed condition, counted when it was persisted.
# TYPE jobset_failed_by_reason_total counter
jobset_failed_by_reason_total{namespace="team-a",reason="FailedJobs"} 2
jobset_failed_by_reason_total{namespace="team-b",reason="ReachedMaxRestarts"} 1
`
	if err := testutil.GatherAndCompare(crmetrics.Registry, strings.NewReader(want),
		"jobset_completed_total", "jobset_failed_total", "jobset_failed_by_reason_total"); err != nil {
		t.Error(err)
	}
}

// A completed group restart counts its members by the way they came back,
// every reported tier present, a zero too, so that a rate over it is
// never absent.
func TestInPlaceRestartCompletedCountsEveryTier(t *testing.T) {
	InPlaceRestartPods.Reset()
	InPlaceRestartCompleted("team-a", 3, 1, 0, 0)
	InPlaceRestartCompleted("team-a", 4, 0, 0, 2)

	want := `
# HELP jobset_inplace_restart_pods_total Pods that completed in-place group restarts brought back, by tier, as their agents report it: process (the worker's process restarted, the Pod's containers kept running), pod (the Pod's containers restarted), replaced (a new Pod) or unreported (no report of the join).
# TYPE jobset_inplace_restart_pods_total counter
jobset_inplace_restart_pods_total{namespace="team-a",tier="pod"} 1
jobset_inplace_restart_pods_total{namespace="team-a",tier="process"} 7
jobset_inplace_restart_pods_total{namespace="team-a",tier="replaced"} 0
jobset_inplace_restart_pods_total{namespace="team-a",tier="unreported"} 2
`
	if err := testutil.GatherAndCompare(crmetrics.Registry, strings.NewReader(want), "jobset_inplace_restart_pods_total"); err != nil {
		t.Error(err)
	}
}
