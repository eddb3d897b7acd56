package v1alpha2

// RestartStrategyOf returns the JobSet's restart strategy, Recreate when
// unset (the schema's default).
func RestartStrategyOf(js *JobSet) JobSetRestartStrategy {
	if js.Spec.FailurePolicy == nil || js.Spec.FailurePolicy.RestartStrategy == "" {
		return Recreate
	}
	return js.Spec.FailurePolicy.RestartStrategy
}
