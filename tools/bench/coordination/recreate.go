package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// Recreate, end to end on the same control plane: one worker fails under
// restartPolicy Never (its kubelet reports the Pod Failed), its Job fails
// (backoffLimit 0) and the Job controller deletes that Job's other Pods;
// the controller deletes every Job in the foreground, the garbage
// collector deletes their Pods, each Pod's kubelet stops it, reports it
// Failed and deletes it for good, the Job controller drops its tracking
// finalizer; the controller creates each Job again once its predecessor
// is gone, the Job controller creates its Pods, the scheduler binds them,
// and their kubelets run them. The clock stops when every new Pod runs
// and is ready.

type recreateResult struct {
	seconds float64
	// The breakdown, from the failure: the first old Pod being deleted
	// (the failed Job's others, by the Job controller), the last old Pod
	// gone; the first new Pod created, the last created, the last bound.
	firstDeleting, lastGone, firstCreated, lastCreated, lastBound float64
	requests                                                      apiRequestCounts
	kubeletRequests                                               int64
	controllerCPU, controllerPeakMiB                              float64
}

// restartAllContainersFeature is the node feature a kubelet declares when
// it runs restart rules' RestartAllContainers action
// (k8s.io/component-helpers/nodedeclaredfeatures).
const restartAllContainersFeature = "RestartAllContainersOnContainerExits"

// registerNodes adds n Ready Nodes, each with room for podsPerNode Pods.
func registerNodes(ctx context.Context, c client.Client, n int) error {
	errs := make([]error, n)
	workqueue.ParallelizeUntil(ctx, 32, n, func(i int) {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:   nodeName(i),
			Labels: map[string]string{corev1.LabelHostname: nodeName(i)},
		}}
		if errs[i] = c.Create(ctx, node); errs[i] != nil {
			return
		}
		// The apiserver taints a new Node not-ready (TaintNodesByCondition);
		// the node lifecycle controller, which would lift it, does not run.
		node.Spec.Taints = nil
		if errs[i] = c.Update(ctx, node); errs[i] != nil {
			return
		}
		capacity := corev1.ResourceList{
			corev1.ResourcePods:   *resource.NewQuantity(podsPerNode, resource.DecimalSI),
			corev1.ResourceCPU:    resource.MustParse("8"),
			corev1.ResourceMemory: resource.MustParse("32Gi"),
		}
		node.Status = corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			// As a kubelet with RestartAllContainers declares it: the
			// scheduler places the Pods that use it on such nodes alone.
			DeclaredFeatures: []string{restartAllContainersFeature},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		}
		errs[i] = c.Status().Update(ctx, node)
	})
	return errors.Join(errs...)
}

// recreate runs a Recreate JobSet of n Pods and times runs group restarts,
// each triggered by the failure of the first Pod's worker.
func (b *bench) recreate(ctx context.Context, controller *process, n, runs int, report func(recreateResult)) error {
	w, err := b.newWorkload(ctx, "recreate", n, jobset.Recreate, false)
	defer w.close(b.c)
	if err != nil {
		return err
	}
	for run := 1; run <= runs; run++ {
		if err := sleep(ctx, 1500*time.Millisecond); err != nil {
			return err
		}
		progress("%s: group restart %d of %d", w.ns, run, runs)
		watch := newRecreateWatch(w.pods)
		w.nodes.setObserver(watch.observe)
		before, err := apiRequestCountsNow(ctx, b.env.Config)
		if err != nil {
			return err
		}
		kubeletBefore := b.kubelets.requests.Load()
		cpuBefore, err := controller.cpuSeconds()
		if err != nil {
			return err
		}
		watch.start = time.Now()
		victim, worker := w.pods[0], w.pods[0].Spec.Containers[0].Name
		now := metav1.Now()
		w.kubelet[0].set(ctx, true, func(s corev1.PodStatus) corev1.PodStatus { return stopped(s, worker, 1, now) })
		w.kubelet[0].set(ctx, false, func(s corev1.PodStatus) corev1.PodStatus { return stopped(s, "", 143, now) })
		select {
		case <-watch.done:
		case <-ctx.Done():
			return fmt.Errorf("group restart %d after Pod %s failed: %s: %w", run, victim.Name, watch, ctx.Err())
		}
		w.nodes.setObserver(nil)
		r := watch.result()
		// As in place: the requests that follow (the Jobs' status) count.
		if err := sleep(ctx, time.Second); err != nil {
			return err
		}
		cpu, err := controller.cpuSeconds()
		if err != nil {
			return err
		}
		after, err := apiRequestCountsNow(ctx, b.env.Config)
		if err != nil {
			return err
		}
		r.requests = after.minus(before)
		r.kubeletRequests = b.kubelets.requests.Load() - kubeletBefore
		r.controllerCPU = cpu - cpuBefore
		if r.controllerPeakMiB, err = controller.peakMiB(); err != nil {
			return err
		}
		report(r)
		if w.pods, err = w.nodes.waitRunning(ctx, n); err != nil {
			return err
		}
		for i, pod := range w.pods {
			w.kubelet[i] = w.nodes.writer(pod)
		}
	}
	return nil
}

// recreateWatch follows a Recreate from the Pods the watch delivers: the
// old ones going, the new ones created, bound and running.
type recreateWatch struct {
	start time.Time
	old   map[types.UID]bool
	// done is closed when every new Pod runs, at finished.
	done     chan struct{}
	finished time.Time

	mu                                     sync.Mutex
	deleting, created, bound, running      map[types.UID]bool
	deletingAt, goneAt, createdAt, boundAt phase
	gone                                   int
}

func newRecreateWatch(pods []*corev1.Pod) *recreateWatch {
	r := &recreateWatch{old: map[types.UID]bool{}, done: make(chan struct{}),
		deleting: map[types.UID]bool{}, created: map[types.UID]bool{}, bound: map[types.UID]bool{}, running: map[types.UID]bool{}}
	for _, pod := range pods {
		r.old[pod.UID] = true
	}
	return r
}

func (r *recreateWatch) observe(pod *corev1.Pod, deleted bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.old[pod.UID] {
		switch {
		case deleted:
			r.gone++
			r.goneAt.mark()
		case pod.DeletionTimestamp != nil && !r.deleting[pod.UID]:
			r.deleting[pod.UID] = true
			r.deletingAt.mark()
		}
		return
	}
	if deleted {
		return
	}
	if !r.created[pod.UID] {
		r.created[pod.UID] = true
		r.createdAt.mark()
	}
	if pod.Spec.NodeName != "" && !r.bound[pod.UID] {
		r.bound[pod.UID] = true
		r.boundAt.mark()
	}
	if runningAndReady(pod) && !r.running[pod.UID] {
		r.running[pod.UID] = true
		if len(r.running) == len(r.old) {
			r.finished = time.Now()
			close(r.done)
		}
	}
}

func (r *recreateWatch) result() recreateResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	return recreateResult{seconds: r.finished.Sub(r.start).Seconds(),
		firstDeleting: since(r.start, &r.deletingAt.first), lastGone: since(r.start, &r.goneAt.last),
		firstCreated: since(r.start, &r.createdAt.first), lastCreated: since(r.start, &r.createdAt.last),
		lastBound: since(r.start, &r.boundAt.last)}
}

func (r *recreateWatch) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprintf("of %d old Pods %d gone; of the new, %d created, %d bound, %d running",
		len(r.old), r.gone, len(r.created), len(r.bound), len(r.running))
}
