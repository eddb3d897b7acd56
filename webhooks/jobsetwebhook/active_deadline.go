package jobsetwebhook

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fastjobset/jobset/api/features"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// validateActiveDeadline: spec.activeDeadlineSeconds needs the
// JobSetActiveDeadlineSeconds feature gate. A controller with the gate off
// would run the JobSet without its bound, so a JobSet that asks for one is
// refused rather than run unbounded. (Its lower bound, 1, is the CRD's.)
func validateActiveDeadline(js *jobset.JobSet, gates features.Gates) field.ErrorList {
	if js.Spec.ActiveDeadlineSeconds == nil || gates.Enabled(features.JobSetActiveDeadlineSeconds) {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "activeDeadlineSeconds"),
		"needs the JobSetActiveDeadlineSeconds feature gate: start the webhook and the controller with --feature-gates=JobSetActiveDeadlineSeconds=true, or remove the field")}
}
