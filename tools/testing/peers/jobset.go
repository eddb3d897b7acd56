package peers

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fastjobset/jobset/api/tlsoptions"
	"github.com/fastjobset/jobset/images/manifest"
)

// Community JobSet and ours serve the same API group, so one runs at a
// time and SwitchJobSet replaces one with the other.
const (
	jobSetNamespace = "jobset-system"
	jobSetCRD       = "jobsets.jobset.x-k8s.io"
	// jobSetWebhookCert holds the webhook's certificate for either side,
	// each written its own way.
	jobSetWebhookCert = "jobset-webhook-server-cert"
	// jobSetGate turns community JobSet's in-place restart on (Alpha, off
	// by default).
	jobSetGate = "InPlaceRestart"
	// featureGatesFlag is the flag that turns our binaries' gates on
	// (api/features); a second one adds to the first.
	featureGatesFlag = "--feature-gates="
)

// CommunityJobSet is community JobSet (tools/peers/jobset.sh), built from
// its module's config/default, with its InPlaceRestart feature gate on,
// and the gates of WithFeatureGates.
var CommunityJobSet = &Peer{
	Name:        "jobset",
	Namespace:   jobSetNamespace,
	Deployments: []string{"jobset-controller-manager"},
	rollout:     180 * time.Second,
	// Its manager makes the webhook's certificate; a fresh one reaches the
	// webhook's Pods when the kubelet refreshes the mounted Secret: up to
	// about two minutes.
	probe:         jobSetProbe,
	probeAttempts: 600,
	probeInterval: 500 * time.Millisecond,
	config:        &configFile{ConfigMap: "jobset-manager-config", Key: "controller_manager_config.yaml"},
	render:        renderCommunityJobSet,
	enableGates:   configGates,
	setTLS:        configTLS,
}

// OurJobSet is ours, as install.yaml installs it (LoadFile), with the gates
// of WithFeatureGates.
var OurJobSet = &Peer{
	Name:          "ours",
	Namespace:     jobSetNamespace,
	Deployments:   []string{"jobset-controller", "jobset-webhook"},
	rollout:       180 * time.Second,
	probe:         jobSetProbe,
	probeAttempts: 600,
	probeInterval: 500 * time.Millisecond,
	beforeLeaving: releaseGroupMembers,
	enableGates:   flagGates,
	setTLS:        flagTLS,
}

func renderCommunityJobSet(_ *Peer, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return objs, pullNothing(objs)
}

// configGates turns community JobSet's gates on where its manager reads
// them: the featureGates of its Configuration. Its v0.12.0 manager has no
// --feature-gates flag (main.go: utilfeature.SetFromMap(cfg.FeatureGates)),
// and stops on an unknown flag.
func configGates(p *Peer, objs []*unstructured.Unstructured) error {
	cm, _, err := p.config.in(objs, p.Namespace)
	if err != nil {
		return err
	}
	gates := append([]string{jobSetGate}, p.featureGates...)
	doc := "featureGates:\n"
	for _, g := range gates {
		doc += "  " + g + ": true\n"
	}
	text, _, _ := unstructured.NestedString(cm.Object, "data", p.config.Key)
	text, err = addToConfig(text, []byte(doc))
	if err != nil {
		return fmt.Errorf("turning on the feature gates %s: %w", strings.Join(gates, ", "), err)
	}
	return unstructured.SetNestedField(cm.Object, text, "data", p.config.Key)
}

// flagGates turns our gates on: one more --feature-gates on the
// controller and the webhook (appendFlags), after the flags install.yaml
// gives, which it adds to.
func flagGates(p *Peer, objs []*unstructured.Unstructured) error {
	if len(p.featureGates) == 0 {
		return nil
	}
	pairs := make([]string, len(p.featureGates))
	for i, g := range p.featureGates {
		pairs[i] = g + "=true"
	}
	return appendFlags(p, objs, "turn the feature gates on", featureGatesFlag+strings.Join(pairs, ","))
}

// TLSAnnotation, on community JobSet's Pod template, is the TLS policy
// that its Configuration holds (TLS.String): its manager reads the
// Configuration once, at start, so that a new policy changes the template
// too and its Pods are replaced.
const TLSAnnotation = "jobset-peers/tls"

// configTLS sets community JobSet's TLS policy where its manager reads it:
// the tls field of its Configuration (v0.12.0: tls.minVersion and
// tls.cipherSuites, which pkg/config applies to the webhook server and
// main.go to the metrics server under the TLSOptions gate), and
// TLSAnnotation on its Pod template.
func configTLS(p *Peer, objs []*unstructured.Unstructured) error {
	cm, _, err := p.config.in(objs, p.Namespace)
	if err != nil {
		return err
	}
	policy := map[string]any{}
	if p.tls.MinVersion != "" {
		policy["minVersion"] = p.tls.MinVersion
	}
	if len(p.tls.CipherSuites) > 0 {
		policy["cipherSuites"] = p.tls.CipherSuites
	}
	doc, err := yaml.Marshal(map[string]any{"tls": policy})
	if err != nil {
		return err
	}
	text, _, _ := unstructured.NestedString(cm.Object, "data", p.config.Key)
	if text, err = addToConfig(text, doc); err != nil {
		return fmt.Errorf("setting the TLS policy %s: %w", p.tls, err)
	}
	if err := unstructured.SetNestedField(cm.Object, text, "data", p.config.Key); err != nil {
		return err
	}
	for _, name := range p.Deployments {
		d := find(objs, "Deployment", p.Namespace, name)
		if d == nil {
			return fmt.Errorf("no Deployment %s/%s to restart on a new TLS policy", p.Namespace, name)
		}
		if err := unstructured.SetNestedField(d.Object, p.tls.String(), "spec", "template", "metadata", "annotations", TLSAnnotation); err != nil {
			return fmt.Errorf("deployment %s: %w", ref(d), err)
		}
	}
	return nil
}

// flagTLS sets our TLS policy: --tls-min-version and --tls-cipher-suites
// on the controller and the webhook (appendFlags), which serve it alike.
func flagTLS(p *Peer, objs []*unstructured.Unstructured) error {
	var flags []string
	if p.tls.MinVersion != "" {
		flags = append(flags, "--"+tlsoptions.MinVersionFlag+"="+p.tls.MinVersion)
	}
	if len(p.tls.CipherSuites) > 0 {
		flags = append(flags, "--"+tlsoptions.CipherSuitesFlag+"="+strings.Join(p.tls.CipherSuites, ","))
	}
	return appendFlags(p, objs, "set the TLS policy", flags...)
}

// appendFlags appends flags to the arguments of the container of each
// Deployment that is named as the Deployment (the controller and the
// webhook, which must agree: the webhook admits what the controller then
// does); to names what they are for, in errors.
func appendFlags(p *Peer, objs []*unstructured.Unstructured, to string, flags ...string) error {
	for _, name := range p.Deployments {
		if err := appendDeploymentFlags(objs, p.Namespace, name, to, flags...); err != nil {
			return err
		}
	}
	return nil
}

// AppendFlags appends flags to the arguments of the container named as the
// Deployment named deployment; to names what they are for, in errors.
func (m *Manifests) AppendFlags(deployment, to string, flags ...string) error {
	return appendDeploymentFlags(m.Objects, m.Peer.Namespace, deployment, to, flags...)
}

func appendDeploymentFlags(objs []*unstructured.Unstructured, namespace, name, to string, flags ...string) error {
	d := find(objs, "Deployment", namespace, name)
	if d == nil {
		return fmt.Errorf("no Deployment %s/%s to %s in", namespace, name, to)
	}
	path := []string{"spec", "template", "spec", "containers"}
	containers, _, err := unstructured.NestedSlice(d.Object, path...)
	if err != nil {
		return fmt.Errorf("deployment %s: %w", ref(d), err)
	}
	found := false
	for _, c := range containers {
		c, ok := c.(map[string]any)
		if !ok || c["name"] != name {
			continue
		}
		args, _ := c["args"].([]any)
		for _, f := range flags {
			args = append(args, f)
		}
		c["args"] = args
		found = true
	}
	if !found {
		return fmt.Errorf("deployment %s has no container %s to %s in", ref(d), name, to)
	}
	return unstructured.SetNestedSlice(d.Object, containers, path...)
}

// jobSetProbe is a JobSet that either side's webhook admits once it
// serves.
func jobSetProbe() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "jobset.x-k8s.io/v1alpha2",
		"kind":       "JobSet",
		"metadata":   map[string]any{"name": "webhook-probe", "namespace": "default"},
		"spec": map[string]any{"replicatedJobs": []any{map[string]any{
			"name": "w",
			"template": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"restartPolicy": "Never",
				"containers":    []any{map[string]any{"name": "c", "image": "x", "imagePullPolicy": "Never"}},
			}}}},
		}}},
	}}
}

// SwitchJobSet replaces the JobSet controller leaving (ours or community
// JobSet) with arriving, and waits until arriving serves. The namespace
// jobset-system and the CustomResourceDefinition stay, and so every
// JobSet, Job and Pod: leaving's controller, webhook, RBAC, webhook
// configurations and certificate Secret go, the CustomResourceDefinition
// is replaced by arriving's, and arriving's other objects are applied.
func SwitchJobSet(ctx context.Context, cl Cluster, leaving, arriving *Manifests) error {
	start := time.Now()
	if err := client.IgnoreAlreadyExists(cl.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: arriving.Peer.Namespace}})); err != nil {
		return err
	}
	crds := only(arriving.Objects, "CustomResourceDefinition")
	if len(crds) != 1 || crds[0].GetName() != jobSetCRD {
		return fmt.Errorf("%s's manifests hold %d CustomResourceDefinitions, want the one %s", arriving.Peer.Name, len(crds), jobSetCRD)
	}
	// Only when leaving runs: switching to the side that runs already
	// applies it again and keeps its certificate (deleting the Secret under
	// a running webhook left it serving a certificate of the old CA until
	// the kubelet refreshed the mounted Secret, minutes later).
	runs, err := anyExists(ctx, cl.Client, leaving.Peer.Namespace, leaving.Peer.Deployments)
	if err != nil {
		return err
	}
	if runs && leaving.Peer.beforeLeaving != nil {
		if err := leaving.Peer.beforeLeaving(ctx, cl, leaving.Peer.Namespace); err != nil {
			return fmt.Errorf("before removing %s: %w", leaving.Peer.Name, err)
		}
	}
	if runs {
		cl.logf("%s: removing %s", arriving.Peer.Name, leaving.Peer.Name)
		gone := without(leaving.Objects, "CustomResourceDefinition", "Namespace")
		secret := &unstructured.Unstructured{}
		secret.SetAPIVersion("v1")
		secret.SetKind("Secret")
		secret.SetNamespace(jobSetNamespace)
		secret.SetName(jobSetWebhookCert)
		if err := remove(ctx, cl, gone); err != nil {
			return err
		}
		if err := remove(ctx, cl, []*unstructured.Unstructured{secret}); err != nil {
			return err
		}
	}
	if err := replace(ctx, cl.Client, crds[0]); err != nil {
		return err
	}
	if err := manifest.ApplyObjects(ctx, cl.Client, without(arriving.Objects, "CustomResourceDefinition", "Namespace"), client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("installing %s: %w", arriving.Peer.Name, err)
	}
	if err := arriving.Peer.WaitServing(ctx, cl); err != nil {
		return err
	}
	cl.logf("%s: replaced %s in %.0f s", arriving.Peer.Name, leaving.Peer.Name, time.Since(start).Seconds())
	return nil
}

// anyExists reports whether any of the Deployments exists.
func anyExists(ctx context.Context, c client.Client, namespace string, names []string) (bool, error) {
	for _, name := range names {
		err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &appsv1.Deployment{})
		if err == nil {
			return true, nil
		}
		if !apierrors.IsNotFound(err) {
			return false, err
		}
	}
	return false, nil
}

// replace writes obj whole, as `kubectl replace` does: server-side apply
// would keep the fields another field manager set (the other side's
// status fields, its conversion webhook), a union of both sides.
func replace(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current := &unstructured.Unstructured{}
		current.SetGroupVersionKind(obj.GroupVersionKind())
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), current)
		if apierrors.IsNotFound(err) {
			return c.Create(ctx, obj.DeepCopy(), client.FieldOwner(FieldManager))
		}
		if err != nil {
			return err
		}
		next := obj.DeepCopy()
		next.SetResourceVersion(current.GetResourceVersion())
		return c.Update(ctx, next, client.FieldOwner(FieldManager))
	})
	if err != nil {
		return fmt.Errorf("replacing %s %s: %w", obj.GetKind(), ref(obj), err)
	}
	return nil
}
