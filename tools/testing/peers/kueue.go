package peers

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Kueue is Kueue (tools/peers/kueue.sh), built from its module's
// config/default: its JobSet integration on, its webhook's certificate
// from its internal cert rotator (no cert-manager).
var Kueue = &Peer{
	Name:          "kueue",
	Namespace:     "kueue-system",
	Deployments:   []string{"kueue-controller-manager"},
	rollout:       300 * time.Second,
	probe:         kueueProbe,
	probeAttempts: 120,
	probeInterval: time.Second,
	config:        &configFile{ConfigMap: "kueue-manager-config", Key: "controller_manager_config.yaml"},
	render:        renderKueue,
}

// kueueJobSetFramework names the JobSet integration in Kueue's
// Configuration (integrations.frameworks).
const kueueJobSetFramework = "jobset.x-k8s.io/jobset"

// renderKueue leaves out Kueue's visibility API: the local cluster's API
// server has no aggregation layer (no front-proxy client certificate), so
// the visibility server answers it 403, its APIServices stay unavailable,
// and an unavailable APIService stops the deletion of every namespace. The
// visibility API (pending workloads on demand) is not what the specs test.
func renderKueue(p *Peer, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	objs = without(objs, "APIService")
	if err := pullNothing(objs); err != nil {
		return nil, err
	}
	_, cfg, err := p.config.in(objs, p.Namespace)
	if err != nil {
		return nil, err
	}
	frameworks, _ := nested(cfg, "integrations", "frameworks")
	list, _ := frameworks.([]any)
	if !slices.Contains(list, any(kueueJobSetFramework)) {
		return nil, fmt.Errorf("the Configuration of Kueue does not enable the JobSet integration (integrations.frameworks lacks %q): the specs need Kueue to manage JobSets", kueueJobSetFramework)
	}
	if enable, set := nested(cfg, "internalCertManagement", "enable"); set && enable != true {
		return nil, fmt.Errorf("the Configuration of Kueue sets internalCertManagement.enable to %v: its webhook would wait for a certificate that nothing here makes (no cert-manager)", enable)
	}
	return objs, nil
}

// kueueProbe is a ResourceFlavor, which Kueue's webhook admits once it
// serves (the manager is available once its certificate is in place).
func kueueProbe() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2",
		"kind":       "ResourceFlavor",
		"metadata":   map[string]any{"name": "kueue-install-probe"},
	}}
}
