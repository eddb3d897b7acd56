package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// workload is one configuration's namespace: a JobSet, its n Pods (the
// Job controller's, bound by the scheduler; or for the I/O floor, the
// harness's, Pod i on node i/podsPerNode), their kubelets' status writers
// and their agents' tokens.
type workload struct {
	ns      string
	jobSet  *jobset.JobSet
	pods    []*corev1.Pod
	kubelet []*podStatusWriter
	// nodes are the kubelets of the Job controller's Pods (nil for the
	// I/O floor's), stopped by close.
	nodes     *nodeKubelets
	stopNodes context.CancelFunc
	tokens    []string
	roots     *x509.CertPool
	host      string
}

// newJobSet is the benchmark's JobSet of n Pods, restarting in place, or
// recreating its Jobs: the same Pods either way, but that a Job under
// Recreate fails with its first failed Pod, as Recreate's users set it.
// wrapped: the worker runs under the worker wrapper, as the webhook's
// injection puts it in place for a worker that names its command (the
// process tier: the JobSet does not ask for the Pod tier); the Pods are
// the Job controller's, so the template holds what injection adds.
func newJobSet(ns string, n int, strategy jobset.JobSetRestartStrategy, wrapped bool) *jobset.JobSet {
	rjw := wrappers.MakeReplicatedJob("workers").Replicas(int32(n / podsPerJob)).Pods(podsPerJob)
	if wrapped {
		rjw.Template.Spec.Template.Spec.Containers[0].Command = []string{"/pause"}
	}
	rj := rjw.InPlaceReady().Obj()
	if wrapped && !sidecar.InjectWrapper(&rj.Template.Spec.Template.Spec, sidecar.Options{Image: wrappers.AgentImage}) {
		panic("the benchmark's Pod template has no worker to wrap")
	}
	if strategy != jobset.InPlaceRestart {
		rj.Template.Spec.BackoffLimit = ptr.To[int32](0)
		rj.Template.Spec.PodReplacementPolicy = nil
	}
	return wrappers.MakeJobSet("bench", ns).RestartStrategy(strategy).MaxRestarts(1000).
		EnableDNSHostnames(false).ReplicatedJob(rj).Obj()
}

// newWorkload creates a namespace with the agent's RBAC and policy and a
// JobSet of n Pods restarting by strategy, and waits for the controller's
// Jobs' Pods to run: the Job controller creates them, the scheduler binds
// them, their nodes' kubelets run them.
func (b *bench) newWorkload(ctx context.Context, prefix string, n int, strategy jobset.JobSetRestartStrategy, wrapped bool) (*workload, error) {
	w, err := b.namespace(ctx, prefix, n, strategy, wrapped)
	if err != nil {
		return w, err
	}
	nodesCtx, stop := context.WithCancel(ctx)
	w.stopNodes = stop
	if w.nodes, err = b.startKubelets(nodesCtx, w.ns); err != nil {
		return w, err
	}
	if err := b.c.Create(ctx, w.jobSet); err != nil {
		return w, err
	}
	progress("%s: %d Pods of %d Jobs created, bound and run", w.ns, n, n/podsPerJob)
	if w.pods, err = w.nodes.waitRunning(ctx, n); err != nil {
		return w, err
	}
	w.kubelet = make([]*podStatusWriter, n)
	for i, pod := range w.pods {
		w.kubelet[i] = w.nodes.writer(pod)
		if err := w.kubelet[i].wait(); err != nil {
			return w, err
		}
	}
	return w, b.agentIdentities(ctx, w)
}

// newFloorWorkload creates a namespace with the agent's RBAC and policy, a
// JobSet that no controller acts on, and n running Pods of its template
// with no owner, Pod i on node i/podsPerNode: for the I/O floor.
func (b *bench) newFloorWorkload(ctx context.Context, n int) (*workload, error) {
	w, err := b.namespace(ctx, "floor", n, jobset.InPlaceRestart, false)
	if err != nil {
		return w, err
	}
	if err := b.c.Create(ctx, w.jobSet); err != nil {
		return w, err
	}
	progress("%s: creating %d Pods, their running status (their kubelets) and their agents' tokens", w.ns, n)
	if w.pods, w.kubelet, err = b.createPods(ctx, podsOfTemplate(w.jobSet, n)); err != nil {
		return w, err
	}
	return w, b.agentIdentities(ctx, w)
}

func (b *bench) namespace(ctx context.Context, prefix string, n int, strategy jobset.JobSetRestartStrategy, wrapped bool) (*workload, error) {
	ns, err := framework.CreateNamespace(ctx, b.c, fmt.Sprintf("%s-%d", prefix, n))
	if err != nil {
		return nil, err
	}
	w := &workload{ns: ns, host: b.env.Config.Host, jobSet: newJobSet(ns, n, strategy, wrapped)}
	if w.roots, err = caPool(b.env.Config); err != nil {
		return w, err
	}
	return w, installAgentRBAC(b.env, ns)
}

// agentIdentities issues the agents' tokens and waits until the epoch-only
// admission policy is in force for them.
func (b *bench) agentIdentities(ctx context.Context, w *workload) error {
	var err error
	if w.tokens, err = agentTokens(ctx, b.clientset, w.ns, w.pods); err != nil {
		return err
	}
	api, closeConns, err := agentClient(w.host, podIP(0), w.roots, w.tokens[0], "bench-probe", nil)
	if err != nil {
		return err
	}
	defer closeConns()
	return waitForPolicy(ctx, api, w.ns, w.pods[0].Name)
}

// podsOfTemplate returns n Pods of js's Pod template with no owner: for the
// I/O floor, which runs no controller.
func podsOfTemplate(js *jobset.JobSet, n int) []*corev1.Pod {
	template := js.Spec.ReplicatedJobs[0].Template.Spec.Template
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("floor-%d", i), Namespace: js.Namespace, Labels: template.Labels},
			Spec:       *template.Spec.DeepCopy(),
		}
	}
	return pods
}

// createPods creates the Pods, Pod i bound to node i/podsPerNode, and has
// its node's kubelet write its running status.
func (b *bench) createPods(ctx context.Context, pods []*corev1.Pod) ([]*corev1.Pod, []*podStatusWriter, error) {
	writers := make([]*podStatusWriter, len(pods))
	errs := make([]error, len(pods))
	started := metav1.Now()
	workqueue.ParallelizeUntil(ctx, 32, len(pods), func(i int) {
		pod := pods[i]
		pod.Spec.NodeName = nodeName(i / podsPerNode)
		if errs[i] = b.c.Create(ctx, pod); errs[i] != nil {
			return
		}
		writers[i] = b.kubelets.writer(pod)
		spec := pod.Spec
		writers[i].set(ctx, false, func(corev1.PodStatus) corev1.PodStatus { return runningStatus(&spec, started) })
		errs[i] = writers[i].wait()
	})
	return pods, writers, errors.Join(errs...)
}

// close deletes the workload's objects.
func (w *workload) close(c client.Client) {
	if w == nil {
		return
	}
	if w.stopNodes != nil {
		w.stopNodes()
	}
	if w.ns != "" {
		cleanUp(c, w.ns)
	}
}
