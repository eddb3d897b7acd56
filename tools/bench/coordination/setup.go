package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// workload is one configuration's namespace: a JobSet, its n Pods (Pod i
// on node i/podsPerNode), their kubelets' status writers and their agents' tokens.
type workload struct {
	ns      string
	jobSet  *jobset.JobSet
	pods    []*corev1.Pod
	kubelet []*podStatusWriter
	tokens  []string
	roots   *x509.CertPool
	host    string
}

// newJobSet is the benchmark's JobSet of n Pods, restarting in place.
func newJobSet(ns string, n int) *jobset.JobSet {
	return wrappers.MakeJobSet("bench", ns).RestartStrategy(jobset.InPlaceRestart).MaxRestarts(1000).
		EnableDNSHostnames(false).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(int32(n / podsPerJob)).Pods(podsPerJob).InPlaceReady().Obj()).Obj()
}

// newWorkload creates a namespace with the agent's RBAC and policy and the
// JobSet. pods gives the n Pods to create once the JobSet exists (from the
// controller's Jobs, or without a controller from the JobSet's template).
func (b *bench) newWorkload(ctx context.Context, prefix string, n int, pods func(*jobset.JobSet) ([]*corev1.Pod, error)) (*workload, error) {
	ns, err := framework.CreateNamespace(ctx, b.c, fmt.Sprintf("%s-%d", prefix, n))
	if err != nil {
		return nil, err
	}
	w := &workload{ns: ns, host: b.env.Config.Host}
	if w.roots, err = caPool(b.env.Config); err != nil {
		return nil, err
	}
	if err := installAgentRBAC(ctx, b.env, ns, b.agentFlowSchema); err != nil {
		return w, err
	}
	w.jobSet = newJobSet(ns, n)
	if err := b.c.Create(ctx, w.jobSet); err != nil {
		return w, err
	}
	specs, err := pods(w.jobSet)
	if err != nil {
		return w, err
	}
	progress("%s: creating %d Pods, their running status (their kubelets) and their agents' tokens", ns, n)
	if w.pods, w.kubelet, err = b.createPods(ctx, specs); err != nil {
		return w, err
	}
	if w.tokens, err = agentTokens(ctx, b.clientset, ns, w.pods); err != nil {
		return w, err
	}
	api, closeConns, err := agentClient(w.host, podIP(0), w.roots, w.tokens[0], "bench-probe", nil)
	if err != nil {
		return w, err
	}
	defer closeConns()
	return w, waitForPolicy(ctx, api, ns, w.pods[0].Name)
}

// podsOfJobs waits for the controller's Jobs of js and returns their Pods
// as the Job controller would create them: the Pod template's labels and
// annotations, the completion index.
func (b *bench) podsOfJobs(ctx context.Context, js *jobset.JobSet) ([]*corev1.Pod, error) {
	want := int(js.Spec.ReplicatedJobs[0].Replicas)
	var jobs batchv1.JobList
	for {
		if err := b.c.List(ctx, &jobs, client.InNamespace(js.Namespace)); err != nil {
			return nil, err
		}
		if len(jobs.Items) == want {
			break
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, fmt.Errorf("waiting for %d Jobs (%d so far): %w", want, len(jobs.Items), err)
		}
	}
	var pods []*corev1.Pod
	for j := range jobs.Items {
		job := &jobs.Items[j]
		for i := range podsPerJob {
			template := job.Spec.Template
			pods = append(pods, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					Name:        fmt.Sprintf("%s-%d", job.Name, i),
					Namespace:   js.Namespace,
					Labels:      withEntry(template.Labels, batchv1.JobNameLabel, job.Name),
					Annotations: withEntry(template.Annotations, batchv1.JobCompletionIndexAnnotation, strconv.Itoa(i)),
				},
				Spec: *template.Spec.DeepCopy(),
			})
		}
	}
	return pods, nil
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
		writers[i] = b.kubelets.writer(i, pod)
		spec := pod.Spec
		writers[i].set(ctx, false, func(corev1.PodStatus) corev1.PodStatus { return runningStatus(&spec, started) })
		errs[i] = writers[i].wait()
	})
	return pods, writers, errors.Join(errs...)
}

func withEntry(m map[string]string, key, value string) map[string]string {
	out := map[string]string{key: value}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// close deletes the workload's objects.
func (w *workload) close(c client.Client) {
	if w != nil && w.ns != "" {
		cleanUp(c, w.ns)
	}
}
