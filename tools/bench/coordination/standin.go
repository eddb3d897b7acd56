package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
)

// nodeKubelets plays the kubelets of every node for one namespace's Pods,
// as kube-controller-manager's Job controller creates them and
// kube-scheduler binds them: from a watch of the namespace's Pods, the
// node's kubelet starts a Pod bound to it (the three updates of
// accepted, initialized, running) and ends a Pod that is being deleted
// (stopped, then the final delete with the Pod's UID as precondition),
// each request by that node's own client. The restarts in place are the
// group's (group.go), through the same status writers.
//
// One watch stands for every node's (a kubelet watches the Pods bound to
// its node): what the API server sends kubelets is not counted, in either
// way.
type nodeKubelets struct {
	ctx      context.Context
	kubelets *kubelets
	informer cache.SharedIndexInformer

	mu      sync.Mutex
	writers map[types.UID]*podStatusWriter
	ending  map[types.UID]bool
	// observe, when set, is told every Pod the watch delivers.
	observe func(pod *corev1.Pod, deleted bool)
	err     error
}

func (b *bench) startKubelets(ctx context.Context, ns string) (*nodeKubelets, error) {
	factory := informers.NewSharedInformerFactoryWithOptions(b.clientset, 0, informers.WithNamespace(ns))
	k := &nodeKubelets{ctx: ctx, kubelets: b.kubelets, informer: factory.Core().V1().Pods().Informer(),
		writers: map[types.UID]*podStatusWriter{}, ending: map[types.UID]bool{}}
	_, err := k.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { k.handle(obj.(*corev1.Pod), false) },
		UpdateFunc: func(_, obj any) { k.handle(obj.(*corev1.Pod), false) },
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				k.handle(pod, true)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	go k.informer.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), k.informer.HasSynced) {
		return nil, fmt.Errorf("watching the Pods of %s: %w", ns, ctx.Err())
	}
	return k, nil
}

func (k *nodeKubelets) handle(pod *corev1.Pod, deleted bool) {
	k.mu.Lock()
	observe := k.observe
	var start, end *podStatusWriter
	switch {
	case deleted:
		delete(k.writers, pod.UID)
		delete(k.ending, pod.UID)
	case pod.Spec.NodeName == "":
	case pod.DeletionTimestamp != nil:
		if !k.ending[pod.UID] {
			k.ending[pod.UID] = true
			end = k.writerLocked(pod)
		}
	case k.writers[pod.UID] == nil:
		start = k.writerLocked(pod)
	}
	k.mu.Unlock()
	if observe != nil {
		observe(pod, deleted)
	}
	switch {
	case start != nil:
		now, spec := metav1.Now(), pod.Spec
		agent := spec.InitContainers[sidecar.Index(spec)].Name
		start.set(k.ctx, true, func(s corev1.PodStatus) corev1.PodStatus { return accepted(s, &spec, now) })
		start.set(k.ctx, true, func(s corev1.PodStatus) corev1.PodStatus { return initialized(s, agent, now) })
		start.set(k.ctx, false, func(s corev1.PodStatus) corev1.PodStatus { return running(s, now) })
	case end != nil:
		go k.end(pod, end)
	}
}

func (k *nodeKubelets) writerLocked(pod *corev1.Pod) *podStatusWriter {
	w := k.writers[pod.UID]
	if w == nil {
		w = k.kubelets.writer(pod)
		k.writers[pod.UID] = w
	}
	return w
}

// end stops a deleted Pod's containers, reports it Failed, and deletes it
// for good, as the kubelet does once a Pod it was told to delete is
// terminal.
func (k *nodeKubelets) end(pod *corev1.Pod, w *podStatusWriter) {
	now := metav1.Now()
	w.set(k.ctx, true, func(s corev1.PodStatus) corev1.PodStatus { return stopped(s, "", 143, now) })
	err := w.wait()
	if err == nil {
		err = k.kubelets.deletePod(k.ctx, pod)
	}
	if err != nil && !apierrors.IsNotFound(err) && k.ctx.Err() == nil {
		k.mu.Lock()
		k.err = fmt.Errorf("kubelet: ending Pod %s: %w", pod.Name, err)
		k.mu.Unlock()
	}
}

// writer returns the status writer of a Pod the watch has delivered.
func (k *nodeKubelets) writer(pod *corev1.Pod) *podStatusWriter {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.writerLocked(pod)
}

// setObserver has every Pod the watch delivers from now on told to
// observe (nil: none).
func (k *nodeKubelets) setObserver(observe func(pod *corev1.Pod, deleted bool)) {
	k.mu.Lock()
	k.observe = observe
	k.mu.Unlock()
}

// waitRunning waits until n Pods run and are ready, every status write
// done, and returns them by name.
func (k *nodeKubelets) waitRunning(ctx context.Context, n int) ([]*corev1.Pod, error) {
	for {
		var ready []*corev1.Pod
		for _, obj := range k.informer.GetStore().List() {
			if pod := obj.(*corev1.Pod); pod.DeletionTimestamp == nil && runningAndReady(pod) {
				ready = append(ready, pod)
			}
		}
		k.mu.Lock()
		err := k.err
		k.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if len(ready) == n {
			sort.Slice(ready, func(i, j int) bool { return ready[i].Name < ready[j].Name })
			return ready, nil
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return nil, fmt.Errorf("%d of %d Pods running: %w", len(ready), n, err)
		}
	}
}

func runningAndReady(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// nodeIndex is the index of the node a Pod is bound to (nodeName).
func nodeIndex(pod *corev1.Pod) int {
	i, err := strconv.Atoi(strings.TrimPrefix(pod.Spec.NodeName, "node-"))
	if err != nil {
		panic(fmt.Sprintf("Pod %s is bound to %q, not a node of the benchmark", pod.Name, pod.Spec.NodeName))
	}
	return i
}
