package jobsetwebhook

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/fastjobset/jobset/api/features"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/api/version"
)

// +kubebuilder:webhook:path=/mutate-jobset-x-k8s-io-v1alpha2-jobset,mutating=true,failurePolicy=fail,sideEffects=None,groups=jobset.x-k8s.io,resources=jobsets,verbs=create;update,versions=v1alpha2,name=mjobset.jobset.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-jobset-x-k8s-io-v1alpha2-jobset,mutating=false,failurePolicy=fail,sideEffects=None,groups=jobset.x-k8s.io,resources=jobsets,verbs=create;update,versions=v1alpha2,name=vjobset.jobset.x-k8s.io,admissionReviewVersions=v1

// Webhook adapts InjectAgent, Default, Validate, ValidateUpdate and
// Warnings to admission requests.
type Webhook struct {
	Agent sidecar.Options
	// Gates are the feature gates validation follows.
	Gates features.Gates
}

// SetupWithManager serves the JobSet webhooks on the manager's webhook
// server, injecting the agent described by agent where JobSets ask for it
// and validating with the features gates allow.
func SetupWithManager(mgr ctrl.Manager, agent sidecar.Options, gates features.Gates) error {
	w := Webhook{Agent: agent, Gates: gates}
	return ctrl.NewWebhookManagedBy(mgr, &jobset.JobSet{}).
		WithDefaulter(w).
		WithValidator(w).
		Complete()
}

// Default implements admission.Defaulter. It leaves a JobSet being deleted
// as it is: the updates it still gets remove finalizers, and a default or
// an agent that a newer webhook would add must not turn them into spec
// changes, nor fail them (a webhook without an agent image).
func (w Webhook) Default(_ context.Context, js *jobset.JobSet) error {
	if beingDeleted(js) {
		return nil
	}
	if wantsAgent(js) {
		if w.Agent.Image == "" {
			return apierrors.NewBadRequest(fmt.Sprintf("metadata.annotations[%s]: this webhook has no agent image to inject (start it with --agent-image), so add the agent sidecar by hand; see %s", jobset.InjectAgentKey, version.Docs("user-guide.md#by-hand")))
		}
		InjectAgent(js, w.Agent)
	}
	Default(js)
	return nil
}

// ValidateCreate implements admission.Validator.
func (w Webhook) ValidateCreate(_ context.Context, js *jobset.JobSet) (admission.Warnings, error) {
	return append(Warnings(js), SecurityWarnings(js)...), invalid(js, Validate(js, w.Gates))
}

// ValidateUpdate implements admission.Validator. A JobSet being deleted
// gets no warnings: nobody can act on them any more.
func (w Webhook) ValidateUpdate(_ context.Context, old, js *jobset.JobSet) (admission.Warnings, error) {
	if beingDeleted(js) {
		return nil, invalid(js, ValidateUpdate(js, old, w.Gates))
	}
	return append(Warnings(js), SecurityWarnings(js)...), invalid(js, ValidateUpdate(js, old, w.Gates))
}

// ValidateDelete implements admission.Validator: deletion is always allowed.
func (Webhook) ValidateDelete(context.Context, *jobset.JobSet) (admission.Warnings, error) {
	return nil, nil
}

// invalid turns field errors into the Invalid status kubectl prints field by
// field.
func invalid(js *jobset.JobSet, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(jobset.GroupVersion.WithKind("JobSet").GroupKind(), js.Name, errs)
}
