package jobsetwebhook

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/api/version"
)

var hangDoc = "see " + version.Docs("user-guide.md#hung-workers")

// validateHangTimeouts checks a JobSet's hang timeouts: each a duration
// the agent can keep, and set only where an agent watches the worker's
// progress, which is in the volume the worker wrapper shares with it.
func validateHangTimeouts(js *jobset.JobSet) field.ErrorList {
	var errs field.ErrorList
	annotations := field.NewPath("metadata", "annotations")
	_, bad := agentspec.ParseHangTimeouts(js.Annotations)
	for _, e := range bad {
		errs = append(errs, field.Invalid(annotations.Key(e.Annotation), e.Value, e.Problem+" ("+hangDoc+")"))
	}
	for _, key := range []string{agentspec.FirstProgressTimeoutAnnotation, agentspec.ProgressTimeoutAnnotation} {
		value, set := js.Annotations[key]
		if !set {
			continue
		}
		switch {
		case jobset.RestartStrategyOf(js) != jobset.InPlaceRestart:
			errs = append(errs, field.Invalid(annotations.Key(key), value, fmt.Sprintf(
				`a hung worker restarts its group in place through the agent sidecar: set spec.failurePolicy.restartStrategy: InPlaceRestart (and annotate the JobSet %s: "true" to have the agent and the worker wrapper injected), or remove this annotation (%s)`,
				jobset.InjectAgentKey, hangDoc)))
		case js.Annotations[jobset.WorkerWrapperKey] == "false":
			errs = append(errs, field.Invalid(annotations.Key(key), value, fmt.Sprintf(
				`the agent reads the worker's progress in the volume the worker wrapper shares with it: remove the annotation %s: "false", or remove this annotation (%s)`,
				jobset.WorkerWrapperKey, hangDoc)))
		}
	}
	return errs
}
