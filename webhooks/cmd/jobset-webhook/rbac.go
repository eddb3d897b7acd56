package main

import (
	"net/http"
	"path"
	"strings"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// The webhook's permissions: each names the objects it needs where RBAC
// can (docs/security.md lists them with their reasons). The names are the
// defaults of --secret-name, --mutating-webhook-configuration and
// --validating-webhook-configuration; a deployment that changes a flag
// changes the Role with it. Creating the Secret cannot be limited by name
// (RBAC knows no name at create), so it is limited to the namespace.
//
// +kubebuilder:rbac:groups=core,namespace=jobset-system,resources=secrets,verbs=create
// +kubebuilder:rbac:groups=core,namespace=jobset-system,resources=secrets,resourceNames=jobset-webhook-server-cert,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,resourceNames=jobset-mutating-webhook-configuration,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,resourceNames=jobset-validating-webhook-configuration,verbs=get;list;watch;update

// rotatorManager is the manager as the certificate rotator sees it: the
// rotator lists and watches whole collections (every Secret of the
// namespace, every webhook configuration of the cluster), which RBAC grants
// by resourceNames only to requests that select one name. Its API
// requests carry that selection.
type rotatorManager struct {
	manager.Manager
	cfg *rest.Config
}

// forRotator returns mgr with a config whose list and watch requests of
// the rotator's collections select only the objects it keeps.
func forRotator(mgr manager.Manager, secretNamespace, secret, mutatingConfig, validatingConfig string) manager.Manager {
	cfg := rest.CopyConfig(mgr.GetConfig())
	names := map[string]string{
		"/api/v1/namespaces/" + secretNamespace + "/secrets":                    secret,
		"/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations":   mutatingConfig,
		"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations": validatingConfig,
	}
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return nameSelecting{next: next, names: names} })
	return rotatorManager{Manager: mgr, cfg: cfg}
}

func (m rotatorManager) GetConfig() *rest.Config { return m.cfg }

// nameSelecting adds fieldSelector=metadata.name=<name> to the list and
// watch requests of the collections it knows (paths without the host's
// prefix), replacing any field selector they had: the rotator's caches
// then hold only the objects it keeps.
type nameSelecting struct {
	next  http.RoundTripper
	names map[string]string
}

func (t nameSelecting) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return t.next.RoundTrip(req)
	}
	for collection, name := range t.names {
		if !strings.HasSuffix(path.Clean(req.URL.Path), collection) {
			continue
		}
		req = req.Clone(req.Context())
		query := req.URL.Query()
		query.Set("fieldSelector", "metadata.name="+name)
		req.URL.RawQuery = query.Encode()
		break
	}
	return t.next.RoundTrip(req)
}
