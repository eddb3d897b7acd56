package v1alpha2

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// RestartStrategyOf returns the JobSet's restart strategy, Recreate when
// unset (the schema's default).
func RestartStrategyOf(js *JobSet) JobSetRestartStrategy {
	if js.Spec.FailurePolicy == nil || js.Spec.FailurePolicy.RestartStrategy == "" {
		return Recreate
	}
	return js.Spec.FailurePolicy.RestartStrategy
}

// ChildrenSelector selects what the controller creates for JobSets (Jobs,
// their Pods, Services): objects labelled with a JobSet name. Caches
// restricted to it grow with JobSet workloads, not with the cluster.
func ChildrenSelector() labels.Selector {
	owned, err := labels.NewRequirement(JobSetNameKey, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant key: cannot fail
	}
	return labels.NewSelector().Add(*owned)
}
