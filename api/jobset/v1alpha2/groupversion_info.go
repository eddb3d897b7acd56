// Package v1alpha2 contains the JobSet API, wire-compatible with community
// JobSet v1alpha2, plus the two status fields of KEP-467 (deprecatedEpoch and
// syncedEpoch) that drive in-place group restarts.
//
// The package also owns every key that the controller, the webhooks and the
// agent sidecar share: label and annotation keys, condition types and
// reasons. It depends only on k8s.io/api and k8s.io/apimachinery so that the
// agent can import it without pulling in controller-runtime; the agent
// itself imports only package agentspec, the names it needs without the types.
//
// +kubebuilder:object:generate=true
// +groupName=jobset.x-k8s.io
package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// GroupName is the API group of JobSet.
const GroupName = agentspec.Group

var (
	// GroupVersion is the group and version of the objects in this package.
	GroupVersion = schema.GroupVersion{Group: GroupName, Version: agentspec.Version}

	// SchemeGroupVersion is an alias of GroupVersion for generated clients.
	SchemeGroupVersion = GroupVersion

	// SchemeBuilder registers the types of this package with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource takes an unqualified resource and returns a group-qualified one.
func Resource(resource string) schema.GroupResource {
	return GroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &JobSet{}, &JobSetList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
