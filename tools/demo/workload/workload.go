// Package workload deploys install.yaml and runs the seed's story 1 on a
// real cluster, for the demo and the benchmarks: with W workers, in place
// (the agent by hand, or injected with the worker wrapper, in either restart
// tier) or with Recreate, each in a namespace of its own made afresh with
// the agent's RBAC, and waits for its workers to run.
package workload

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/api/scheme"
	"github.com/fastjobset/jobset/images/manifest"
)

// Cluster is a connection to the cluster and the source tree's root
// (docs/examples, agent/rbac).
type Cluster struct {
	Client    client.Client
	Clientset *kubernetes.Clientset
	root      string
}

// Connect connects to the cluster of kubeconfig.
func Connect(kubeconfig, root string) (*Cluster, error) {
	if kubeconfig == "" {
		return nil, errors.New("no cluster: set KUBECONFIG or -kubeconfig (tools/demo.sh and tools/bench/run.sh bring up the local one)")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 100, 200
	s, err := scheme.New()
	if err != nil {
		return nil, err
	}
	cl, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, err
	}
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Cluster{Client: cl, Clientset: clientset, root: root}, nil
}

// Deploy applies install.yaml (at path) and waits until the controller and
// the webhook Deployments of jobset-system are available.
func (c *Cluster) Deploy(ctx context.Context, path string) error {
	if err := manifest.Apply(ctx, c.Client, path, ""); err != nil {
		return err
	}
	for _, name := range []string{"jobset-controller", "jobset-webhook"} {
		key := client.ObjectKey{Namespace: "jobset-system", Name: name}
		err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			var d appsv1.Deployment
			if err := c.Client.Get(ctx, key, &d); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return d.Status.AvailableReplicas >= 1, nil
		})
		if wait.Interrupted(err) {
			return fmt.Errorf("waiting for Deployment %s to be available: %w", key, err)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// PodState is what a restart must change: the Pod (Recreate) or the
// worker's restart count (in place).
type PodState struct {
	UID      types.UID
	Restarts int32
}

// WaitForWorkers polls every 50 ms until w Pods of js run with every
// container started (the barrier lifted) and done accepts them. The
// benchmarks time restarts with it: the interval is their resolution.
func (c *Cluster) WaitForWorkers(ctx context.Context, js *jobset.JobSet, w int, done func(map[string]PodState) bool) (map[string]PodState, error) {
	var running map[string]PodState
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := c.Client.List(ctx, &pods, client.InNamespace(js.Namespace), client.MatchingLabels{jobset.JobSetNameKey: js.Name}); err != nil {
			return false, err
		}
		running = map[string]PodState{}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && AllStarted(&p) {
				running[p.Name] = PodState{UID: p.UID, Restarts: WorkerRestarts(&p)}
			}
		}
		return len(running) == w && done(running), nil
	})
	if wait.Interrupted(err) {
		return nil, fmt.Errorf("waiting for %d workers to run (%d do): %w", w, len(running), err)
	}
	if err != nil {
		return nil, err
	}
	return running, nil
}

// AllStarted reports whether every container of p runs and has started
// (its startup probe passed: the barrier lifted), but for init containers
// that run to completion (the worker wrapper's installer), which must have
// succeeded.
func AllStarted(p *corev1.Pod) bool {
	statuses := append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...)
	if len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, cs := range statuses {
		if runsToCompletion(p, cs.Name) {
			if t := cs.State.Terminated; t == nil || t.ExitCode != 0 {
				return false
			}
			continue
		}
		if cs.State.Running == nil || !ptr.Deref(cs.Started, false) {
			return false
		}
	}
	return true
}

// runsToCompletion: name is an init container of p that is not a sidecar.
func runsToCompletion(p *corev1.Pod, name string) bool {
	for _, c := range p.Spec.InitContainers {
		if c.Name == name {
			return ptr.Deref(c.RestartPolicy, "") != corev1.ContainerRestartPolicyAlways
		}
	}
	return false
}

// WorkerRestarts is the restart count of p's container named worker.
func WorkerRestarts(p *corev1.Pod) int32 {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == "worker" {
			return cs.RestartCount
		}
	}
	return 0
}

// JobSet is the seed's story 1 (docs/examples/story1-inplace.yaml) with w
// workers: 2 Jobs of w/2 Pods, or one Pod for w = 1; for Recreate, without
// the agent and with backoffLimit 0, the way community JobSet users run it.
func (c *Cluster) JobSet(ns string, strategy jobset.JobSetRestartStrategy, w int) (*jobset.JobSet, error) {
	js := &jobset.JobSet{}
	if err := manifest.ReadObject(filepath.Join(c.root, "docs/examples/story1-inplace.yaml"), js); err != nil {
		return nil, err
	}
	shape(js, ns, w)
	js.Spec.FailurePolicy.RestartStrategy = strategy
	rj := &js.Spec.ReplicatedJobs[0]
	if strategy == jobset.Recreate {
		rj.Template.Spec.BackoffLimit = ptr.To[int32](0)
		rj.Template.Spec.PodReplacementPolicy = nil
		pod := &rj.Template.Spec.Template.Spec
		pod.InitContainers = nil
		for i := range pod.Containers {
			pod.Containers[i].RestartPolicy, pod.Containers[i].RestartPolicyRules = nil, nil
		}
	}
	return js, nil
}

// InjectedJobSet is story 1 with agent injection
// (docs/examples/story1-injected.yaml) with w workers, shaped as JobSet
// shapes it: the webhook adds the agent and, as the worker names its
// command, the worker wrapper. Its workers restart in the process tier,
// or in the Pod tier when tier is jobset.RestartTierPod (the JobSet's
// jobset.RestartTierKey annotation).
func (c *Cluster) InjectedJobSet(ns string, w int, tier string) (*jobset.JobSet, error) {
	js := &jobset.JobSet{}
	if err := manifest.ReadObject(filepath.Join(c.root, "docs/examples/story1-injected.yaml"), js); err != nil {
		return nil, err
	}
	shape(js, ns, w)
	if tier != "" {
		js.Annotations[jobset.RestartTierKey] = tier
	}
	return js, nil
}

// shape names js bench in ns and gives it w workers: 2 Jobs of w/2 Pods,
// or one Pod for w = 1, with restarts enough for any benchmark.
func shape(js *jobset.JobSet, ns string, w int) {
	js.Name, js.Namespace = "bench", ns
	if js.Annotations == nil {
		js.Annotations = map[string]string{}
	}
	js.Spec.FailurePolicy.MaxRestarts = 1000
	rj := &js.Spec.ReplicatedJobs[0]
	replicas, pods := int32(2), int32(w/2)
	if w == 1 {
		replicas, pods = 1, 1
	}
	rj.Replicas = replicas
	rj.Template.Spec.Parallelism, rj.Template.Spec.Completions = ptr.To(pods), ptr.To(pods)
}

// RecreateNamespace deletes ns if it exists and creates it afresh, with
// the agent's RBAC.
func (c *Cluster) RecreateNamespace(ctx context.Context, ns string) error {
	if err := c.DeleteNamespace(ctx, ns); err != nil {
		return err
	}
	if err := c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	return manifest.Apply(ctx, c.Client, filepath.Join(c.root, "agent/rbac/agent-rbac.yaml"), ns)
}

// DeleteNamespace deletes ns and waits until it is gone, so that its Pods
// no longer compete for the node.
func (c *Cluster) DeleteNamespace(ctx context.Context, ns string) error {
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := c.Client.Delete(ctx, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		err := c.Client.Get(ctx, client.ObjectKeyFromObject(obj), &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if wait.Interrupted(err) {
		return fmt.Errorf("waiting for namespace %s to go: %w", ns, err)
	}
	return err
}

// Start runs the JobSet of the strategy with w workers in namespace ns
// (made afresh) until its workers run, and returns it with their state.
func (c *Cluster) Start(ctx context.Context, ns string, strategy jobset.JobSetRestartStrategy, w int) (*jobset.JobSet, map[string]PodState, error) {
	if err := c.RecreateNamespace(ctx, ns); err != nil {
		return nil, nil, err
	}
	js, err := c.JobSet(ns, strategy, w)
	if err != nil {
		return nil, nil, err
	}
	return c.Run(ctx, js, w)
}

// Run creates js in its namespace, which must exist, and waits until its
// w workers run; it returns js with their state.
func (c *Cluster) Run(ctx context.Context, js *jobset.JobSet, w int) (*jobset.JobSet, map[string]PodState, error) {
	if err := c.CreateJobSet(ctx, js); err != nil {
		return nil, nil, err
	}
	states, err := c.WaitForWorkers(ctx, js, w, func(map[string]PodState) bool { return true })
	return js, states, err
}

// CreateJobSet creates js, again while the API server answers with an
// internal error: right after a deployment the webhook may not serve yet.
func (c *Cluster) CreateJobSet(ctx context.Context, js *jobset.JobSet) error {
	var createErr error
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		createErr = c.Client.Create(ctx, js.DeepCopy())
		if apierrors.IsInternalError(createErr) {
			return false, nil
		}
		return createErr == nil, createErr
	})
	if wait.Interrupted(err) && createErr != nil {
		return createErr
	}
	return err
}
