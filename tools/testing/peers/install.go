package peers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fastjobset/jobset/images/manifest"
)

// Cluster is where peers are installed.
type Cluster struct {
	Client client.Client
	// Clientset reads the logs of a peer that does not serve in time (nil:
	// no logs).
	Clientset kubernetes.Interface
	// Out receives progress and, when a peer does not serve in time, what
	// its Pods say (nil: nowhere).
	Out io.Writer
	// NoNodes: the cluster runs no Pod (envtest's API server alone): what
	// a Pod of a peer would run once (the rollback's release of the Pods
	// our controller held), this process runs.
	NoNodes bool
}

func (cl Cluster) logf(format string, args ...any) {
	if cl.Out != nil {
		fmt.Fprintf(cl.Out, "peers: "+format+"\n", args...)
	}
}

// pollInterval paces the waits for a state the API server reports (a
// Deployment rolled out, an object gone).
const pollInterval = 500 * time.Millisecond

// Install applies the manifests and waits until the peer serves.
func (m *Manifests) Install(ctx context.Context, cl Cluster) error {
	start := time.Now()
	if err := manifest.ApplyObjects(ctx, cl.Client, m.Objects, client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("installing %s: %w", m.Peer.Name, err)
	}
	for _, crd := range only(m.Objects, "CustomResourceDefinition") {
		if err := waitEstablished(ctx, cl.Client, crd.GetName()); err != nil {
			return fmt.Errorf("installing %s: %w", m.Peer.Name, err)
		}
	}
	if err := m.Peer.WaitServing(ctx, cl); err != nil {
		return err
	}
	cl.logf("%s: installed in %.0f s", m.Peer.Name, time.Since(start).Seconds())
	return nil
}

// Uninstall removes every object of the manifests but the
// CustomResourceDefinitions (and so the objects of the peer's kinds stay,
// as they are), and waits until they are gone: the peer's namespace with
// everything in it, its webhook configurations, so that nothing of the
// peer stands in the way of the next spec. Remove the objects whose
// finalizers the peer's manager handles first.
func (m *Manifests) Uninstall(ctx context.Context, cl Cluster) error {
	if err := remove(ctx, cl, without(m.Objects, "CustomResourceDefinition")); err != nil {
		return fmt.Errorf("removing %s: %w", m.Peer.Name, err)
	}
	cl.logf("%s: removed (its CustomResourceDefinitions stay)", m.Peer.Name)
	return nil
}

// Configure adds the top-level fields of the YAML document fields to the
// running peer's Configuration, restarts its manager (which reads the
// Configuration once, at start) and waits until it serves again: what a
// user does to turn on, say, Kueue's waitForPodsReady. A field the
// Configuration sets already is refused. Uninstall drops the change with
// the rest.
func (p *Peer) Configure(ctx context.Context, cl Cluster, fields []byte) error {
	if p.config == nil {
		return fmt.Errorf("%s has no Configuration to change", p.Name)
	}
	start := time.Now()
	var cm corev1.ConfigMap
	key := client.ObjectKey{Namespace: p.Namespace, Name: p.config.ConfigMap}
	if err := cl.Client.Get(ctx, key, &cm); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("configuring %s: it is not installed (no ConfigMap %s)", p.Name, key)
		}
		return err
	}
	text, err := addToConfig(cm.Data[p.config.Key], fields)
	if err != nil {
		return fmt.Errorf("configuring %s (ConfigMap %s, data.%s): %w", p.Name, key, p.config.Key, err)
	}
	cm.Data[p.config.Key] = text
	if err := cl.Client.Update(ctx, &cm, client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("configuring %s: %w", p.Name, err)
	}
	for _, name := range p.Deployments {
		if err := restart(ctx, cl.Client, client.ObjectKey{Namespace: p.Namespace, Name: name}); err != nil {
			return fmt.Errorf("configuring %s: %w", p.Name, err)
		}
	}
	if err := p.WaitServing(ctx, cl); err != nil {
		return err
	}
	cl.logf("%s: configured in %.0f s", p.Name, time.Since(start).Seconds())
	return nil
}

// restart rolls a Deployment's Pods, as `kubectl rollout restart` does.
func restart(ctx context.Context, c client.Client, key client.ObjectKey) error {
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":%q}}}}}`, time.Now().Format(time.RFC3339))
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := c.Patch(ctx, d, client.RawPatch(types.StrategicMergePatchType, []byte(patch)), client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("restarting Deployment %s: %w", key, err)
	}
	return nil
}

// WaitServing waits until every Deployment of the peer has rolled out and
// its webhook admits an object. When it does not in time, what the peer's
// Pods say goes to cl.Out.
func (p *Peer) WaitServing(ctx context.Context, cl Cluster) error {
	for _, name := range p.Deployments {
		key := client.ObjectKey{Namespace: p.Namespace, Name: name}
		if err := waitRolledOut(ctx, cl.Client, key, p.rollout); err != nil {
			p.diagnose(ctx, cl)
			return fmt.Errorf("%s: %w", p.Name, err)
		}
	}
	// An available manager has its certificate; its webhook serves once it
	// admits an object.
	var last error
	probe := wait.Backoff{Duration: p.probeInterval, Factor: 1, Steps: p.probeAttempts}
	err := wait.ExponentialBackoffWithContext(ctx, probe, func(ctx context.Context) (bool, error) {
		last = cl.Client.Create(ctx, p.probe(), client.DryRunAll)
		return last == nil, nil
	})
	if err != nil {
		p.diagnose(ctx, cl)
		obj := p.probe()
		return fmt.Errorf("%s's webhook did not admit %s %s in %d attempts %s apart: %w (last: %v)", p.Name, obj.GetKind(), obj.GetName(), p.probeAttempts, p.probeInterval, err, last)
	}
	return nil
}

// rolledOut reports whether the Deployment's rollout is complete, as
// `kubectl rollout status` judges it: the controller has seen its latest
// spec, every replica is updated and available, and no old one is left.
// An error means the rollout cannot complete.
func rolledOut(d *appsv1.Deployment) (done bool, why string, err error) {
	if d.Generation > d.Status.ObservedGeneration {
		return false, "waiting for the Deployment's spec update to be observed", nil
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return false, "", fmt.Errorf("deployment %s/%s exceeded its progress deadline", d.Namespace, d.Name)
		}
	}
	s := d.Status
	switch {
	case d.Spec.Replicas != nil && s.UpdatedReplicas < *d.Spec.Replicas:
		return false, fmt.Sprintf("%d of %d new replicas updated", s.UpdatedReplicas, *d.Spec.Replicas), nil
	case s.Replicas > s.UpdatedReplicas:
		return false, fmt.Sprintf("%d old replicas pending termination", s.Replicas-s.UpdatedReplicas), nil
	case s.AvailableReplicas < s.UpdatedReplicas:
		return false, fmt.Sprintf("%d of %d updated replicas available", s.AvailableReplicas, s.UpdatedReplicas), nil
	}
	return true, "", nil
}

// waitRolledOut waits up to timeout until the Deployment has rolled out.
func waitRolledOut(ctx context.Context, c client.Client, key client.ObjectKey, timeout time.Duration) error {
	why := "not found"
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := c.Get(ctx, key, &d); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		done, w, err := rolledOut(&d)
		why = w
		return done, err
	})
	if err != nil {
		return fmt.Errorf("deployment %s did not roll out within %s (%s): %w", key, timeout, why, err)
	}
	return nil
}

// establishTimeout bounds the wait for a CustomResourceDefinition to be
// served, which takes the API server a moment.
const establishTimeout = time.Minute

// waitEstablished waits until the CustomResourceDefinition is established.
func waitEstablished(ctx context.Context, c client.Client, name string) error {
	err := wait.PollUntilContextTimeout(ctx, pollInterval, establishTimeout, true, func(ctx context.Context) (bool, error) {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return established(crd), nil
	})
	if err != nil {
		return fmt.Errorf("CustomResourceDefinition %s not established within %s: %w", name, establishTimeout, err)
	}
	return nil
}

func established(crd *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conditions {
		if c, ok := c.(map[string]any); ok && c["type"] == "Established" && c["status"] == "True" {
			return true
		}
	}
	return false
}

// remove deletes objs in their order, as `kubectl delete --wait` does
// (background propagation: a Deployment's Pods go after it), then waits
// until each is gone (an object of the same name but another UID counts as
// gone), with no limit but ctx's.
func remove(ctx context.Context, cl Cluster, objs []*unstructured.Unstructured) error {
	uids := make([]types.UID, len(objs))
	for i, u := range objs {
		current := &unstructured.Unstructured{}
		current.SetGroupVersionKind(u.GroupVersionKind())
		err := cl.Client.Get(ctx, client.ObjectKeyFromObject(u), current)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", u.GetKind(), ref(u), err)
		}
		uids[i] = current.GetUID()
		err = cl.Client.Delete(ctx, current, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %s %s: %w", u.GetKind(), ref(u), err)
		}
	}
	for i, u := range objs {
		if uids[i] == "" {
			continue
		}
		err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
			current := &unstructured.Unstructured{}
			current.SetGroupVersionKind(u.GroupVersionKind())
			err := cl.Client.Get(ctx, client.ObjectKeyFromObject(u), current)
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return err == nil && current.GetUID() != uids[i], err
		})
		if err != nil {
			return fmt.Errorf("waiting for %s %s to be gone: %w", u.GetKind(), ref(u), err)
		}
	}
	return nil
}

// diagnoseTimeout bounds the reads of diagnose, which may run after ctx
// expired.
const diagnoseTimeout = 30 * time.Second

// diagnose writes what the peer's Pods say to cl.Out: their state and
// conditions, the namespace's events, and the last lines of each
// container's log (as `kubectl describe pods` and `kubectl logs` would).
func (p *Peer) diagnose(ctx context.Context, cl Cluster) {
	if cl.Out == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), diagnoseTimeout)
	defer cancel()
	var errs []error
	var pods corev1.PodList
	errs = append(errs, cl.Client.List(ctx, &pods, client.InNamespace(p.Namespace)))
	for _, pod := range pods.Items {
		status, err := yaml.Marshal(pod.Status)
		errs = append(errs, err)
		fmt.Fprintf(cl.Out, "--- Pod %s/%s on %q:\n%s", pod.Namespace, pod.Name, pod.Spec.NodeName, status)
		if cl.Clientset == nil {
			continue
		}
		for _, c := range pod.Spec.Containers {
			log, err := cl.Clientset.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
				Container: c.Name, TailLines: ptr.To[int64](60),
			}).DoRaw(ctx)
			errs = append(errs, err)
			fmt.Fprintf(cl.Out, "--- the last lines of its container %s:\n%s\n", c.Name, log)
		}
	}
	var events corev1.EventList
	errs = append(errs, cl.Client.List(ctx, &events, client.InNamespace(p.Namespace)))
	fmt.Fprintf(cl.Out, "--- events in %s:\n", p.Namespace)
	for _, e := range events.Items {
		at := e.LastTimestamp.Time
		if at.IsZero() {
			at = e.EventTime.Time
		}
		fmt.Fprintf(cl.Out, "%s %s %s/%s: %s: %s\n", at.Format(time.RFC3339), e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(cl.Out, "--- (some of it could not be read: %v)\n", err)
	}
}
