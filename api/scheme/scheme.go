// Package scheme builds the runtime scheme the controller, the webhook and
// the tests share: Kubernetes' built-in types plus JobSet. (The agent does
// not use it: it needs none of the built-in types.)
package scheme

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// New returns a scheme with the built-in types, CustomResourceDefinitions
// and JobSet.
func New() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		jobset.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}
