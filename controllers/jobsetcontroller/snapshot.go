package jobsetcontroller

import (
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
	"github.com/fastjobset/jobset/controllers/internal/metrics"
)

// recordEpochs mirrors the epochs, the GatherStalled condition and the
// restart budget of an InPlaceRestart JobSet in the gauges, from every
// reconcile; a JobSet that is gone loses its series.
func recordEpochs(js *jobset.JobSet) {
	if jobset.RestartStrategyOf(js) != jobset.InPlaceRestart {
		return
	}
	metrics.SetEpochs(js.Namespace, js.Name, ptr.Deref(js.Status.SyncedEpoch, 0), ptr.Deref(js.Status.DeprecatedEpoch, 0))
	var maxRestarts int32
	if js.Spec.FailurePolicy != nil {
		maxRestarts = js.Spec.FailurePolicy.MaxRestarts
	}
	metrics.SetGroupState(js.Namespace, js.Name, meta.IsStatusConditionTrue(js.Status.Conditions, string(jobset.JobSetGatherStalled)),
		inplace.RestartsUsed(js), maxRestarts, finished(js))
}

func inPlaceRestartEnabled(js *jobset.JobSet) bool {
	return jobset.RestartStrategyOf(js) == jobset.InPlaceRestart && !ptr.Deref(js.Spec.Suspend, false)
}

// gatherOf is the gather the JobSet's in-place group is in, for the Pod
// tally, or nil when the group is in sync.
func gatherOf(js *jobset.JobSet) *inplace.Gather {
	synced := ptr.Deref(js.Status.SyncedEpoch, 0)
	if !inplace.Gathering(synced, ptr.Deref(js.Status.DeprecatedEpoch, 0), inplace.Regathering(js)) {
		return nil
	}
	_, group := inplace.Group(js)
	return &inplace.Gather{
		Attempt: attemptOf(string(js.UID), strconv.Itoa(int(js.Status.Restarts))),
		Group:   group,
		Epoch:   synced + 1,
	}
}
