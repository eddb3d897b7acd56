package peers

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Trainer is Kubeflow Trainer v2 (tools/peers/trainer.sh), built from its
// module's manifests/overlays/manager without the community JobSet that
// overlay bundles (ours is the cluster's JobSet); its webhook's
// certificate from its internal cert rotator, which writes it into the
// Secret the overlay creates empty and the CA bundle into its webhook
// configurations (no cert-manager).
var Trainer = &Peer{
	Name:          "trainer",
	Namespace:     "kubeflow-system",
	Deployments:   []string{"kubeflow-trainer-controller-manager"},
	rollout:       300 * time.Second,
	probe:         trainerProbe,
	probeAttempts: 120,
	probeInterval: time.Second,
	config:        &configFile{ConfigMap: "kubeflow-trainer-config", Key: "controller_manager_config.yaml"},
	render:        renderTrainer,
}

func renderTrainer(p *Peer, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	for _, u := range objs {
		if u.GetName() == "jobsets.jobset.x-k8s.io" || strings.HasPrefix(u.GetName(), "jobset-") {
			return nil, fmt.Errorf("%s %s is community JobSet's, which the overlay bundles (manifests/third-party/jobset): the build must remove that resource, ours is the cluster's JobSet", u.GetKind(), ref(u))
		}
	}
	for _, kind := range []string{"CustomResourceDefinition", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"} {
		if len(only(objs, kind)) == 0 {
			return nil, fmt.Errorf("no %s: not Trainer's manager overlay", kind)
		}
	}
	if err := pullNothing(objs); err != nil {
		return nil, err
	}
	_, cfg, err := p.config.in(objs, p.Namespace)
	if err != nil {
		return nil, err
	}
	if enable, _ := nested(cfg, "certManagement", "enable"); enable != true {
		return nil, fmt.Errorf("the Configuration of Trainer does not set certManagement.enable to true: its webhook would wait for a certificate that nothing here makes (no cert-manager)")
	}
	secret, _ := nested(cfg, "certManagement", "webhookSecretName")
	name, _ := secret.(string)
	if find(objs, "Secret", p.Namespace, name) == nil {
		return nil, fmt.Errorf("no Secret %s/%q (certManagement.webhookSecretName), which Trainer's cert rotator fills", p.Namespace, name)
	}
	return objs, nil
}

// trainerProbe is a ClusterTrainingRuntime, which goes through Trainer's
// validating webhook: admitted once the manager's certificate is in place
// and its webhook server started.
func trainerProbe() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1",
		"kind":       "ClusterTrainingRuntime",
		"metadata":   map[string]any{"name": "trainer-install-probe"},
		"spec": map[string]any{
			"template": map[string]any{"spec": map[string]any{
				"replicatedJobs": []any{map[string]any{
					"name": "node",
					"template": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
						"restartPolicy": "Never",
						"containers":    []any{map[string]any{"name": "node", "image": "probe"}},
					}}}},
				}},
			}},
		},
	}}
}
