// Package jobset holds the admission logic for JobSets as pure functions:
// Default, Validate and ValidateUpdate, and the warnings for likely
// mistakes. The webhook server adapts them to admission requests; tests
// call them directly.
package jobsetwebhook

import (
	"fmt"
	"math"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// Default fills what the user left unset, as community JobSet does, plus
// what InPlaceRestart needs: Jobs that never fail because of Pod failures
// (backoffLimit MaxInt32) and replacement Pods created only once the
// original has fully failed (podReplacementPolicy Failed).
func Default(js *jobset.JobSet) {
	if js.Spec.SuccessPolicy == nil {
		js.Spec.SuccessPolicy = &jobset.SuccessPolicy{Operator: jobset.OperatorAll}
	}
	if js.Spec.StartupPolicy == nil {
		js.Spec.StartupPolicy = &jobset.StartupPolicy{StartupPolicyOrder: jobset.AnyOrder}
	}
	if js.Spec.Network == nil {
		js.Spec.Network = &jobset.Network{}
	}
	if js.Spec.Network.EnableDNSHostnames == nil {
		js.Spec.Network.EnableDNSHostnames = ptr.To(true)
	}
	if js.Spec.Network.PublishNotReadyAddresses == nil {
		js.Spec.Network.PublishNotReadyAddresses = ptr.To(true)
	}
	if fp := js.Spec.FailurePolicy; fp != nil {
		if fp.RestartStrategy == "" {
			fp.RestartStrategy = jobset.Recreate
		}
		for i := range fp.Rules {
			if fp.Rules[i].Name == "" {
				fp.Rules[i].Name = fmt.Sprintf("failurePolicyRule%d", i)
			}
		}
	}
	inPlace := js.Spec.FailurePolicy != nil && js.Spec.FailurePolicy.RestartStrategy == jobset.InPlaceRestart
	members := groupMembers(js)
	if members.Len() == 0 {
		// No agent yet: validation rejects it, naming each replicatedJob.
		for _, rj := range js.Spec.ReplicatedJobs {
			members.Insert(rj.Name)
		}
	}
	for i := range js.Spec.ReplicatedJobs {
		rj := &js.Spec.ReplicatedJobs[i]
		if rj.GroupName == "" {
			rj.GroupName = "default"
		}
		spec := &rj.Template.Spec
		if spec.CompletionMode == nil {
			spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		}
		if spec.Template.Spec.RestartPolicy == "" {
			// In place, containers restart through their restart rules; the
			// Pod itself never restarts them (and podFailurePolicy needs Never).
			spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			if inPlace {
				spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
			}
		}
		// Only the in-place group's Jobs: an initializer or a launcher
		// outside it keeps the Job API's defaults.
		if inPlace && members.Has(rj.Name) {
			if spec.BackoffLimit == nil {
				spec.BackoffLimit = ptr.To[int32](math.MaxInt32)
			}
			if spec.PodReplacementPolicy == nil {
				spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
			}
		}
	}
}
