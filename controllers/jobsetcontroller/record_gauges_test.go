package jobsetcontroller

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/internal/metrics"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// The gauges the alerts read: a stalled gather while GatherStalled is
// True, and the restart budget while the JobSet runs.
func TestRecordEpochsMirrorsStallAndBudget(t *testing.T) {
	js := wrappers.MakeJobSet("budget", "gauges").RestartStrategy(jobset.InPlaceRestart).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
	js.Spec.FailurePolicy.MaxRestarts = 5
	js.Status.RestartsCountTowardsMax, js.Status.InPlaceRestarts = 1, 3
	js.Status.Conditions = []metav1.Condition{{Type: string(jobset.JobSetGatherStalled), Status: metav1.ConditionTrue, Reason: jobset.ReasonPodsNotJoined}}
	defer metrics.ForgetJobSet(js.Namespace, js.Name)

	recordEpochs(js)
	if got := testutil.ToFloat64(metrics.RestartsUsed.WithLabelValues(js.Namespace, js.Name)); got != 4 {
		t.Errorf("jobset_restarts_used = %v, want 4 (1 full that counts + 3 in place)", got)
	}
	if got := testutil.ToFloat64(metrics.MaxRestarts.WithLabelValues(js.Namespace, js.Name)); got != 5 {
		t.Errorf("jobset_max_restarts = %v, want 5", got)
	}
	if got := testutil.ToFloat64(metrics.GatherStalled.WithLabelValues(js.Namespace, js.Name)); got != 1 {
		t.Errorf("jobset_gather_stalled = %v while GatherStalled is True, want 1", got)
	}

	js.Status.Conditions = []metav1.Condition{{Type: string(jobset.JobSetFailed), Status: metav1.ConditionTrue, Reason: jobset.ReasonReachedMaxRestarts}}
	recordEpochs(js)
	// DeleteLabelValues says whether the series was there.
	if metrics.RestartsUsed.DeleteLabelValues(js.Namespace, js.Name) || metrics.MaxRestarts.DeleteLabelValues(js.Namespace, js.Name) {
		t.Error("a finished JobSet keeps its restart budget series")
	}
	if got := testutil.ToFloat64(metrics.GatherStalled.WithLabelValues(js.Namespace, js.Name)); got != 0 {
		t.Errorf("jobset_gather_stalled = %v once GatherStalled is gone, want 0", got)
	}
}
