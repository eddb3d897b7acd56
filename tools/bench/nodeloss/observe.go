package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// observer follows the group's Pods, its JobSet and the faulted Node with
// watches opened before the fault, and dates each milestone the first
// time a change shows it: status timestamps have a resolution of one
// second, and a watch event arrives within milliseconds of the write.
type observer struct {
	base   baseline
	cancel context.CancelFunc

	pods, nodes, jobSets cache.Store

	mu     sync.Mutex
	synced bool
	at     map[string]time.Time
	// replacementWorkers: when each rank of the faulted node was first
	// seen running its worker in its new Pod.
	replacementWorkers map[string]time.Time
	trainingAt         time.Time
	// notReady and training are closed at the first sight of each.
	notReady, training chan struct{}
}

// observe opens the watches and returns once each has listed what exists.
func observe(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, js *jobset.JobSet, base baseline) (*observer, error) {
	ctx, cancel := context.WithCancel(ctx)
	o := &observer{
		base: base, cancel: cancel,
		at: map[string]time.Time{}, replacementWorkers: map[string]time.Time{},
		notReady: make(chan struct{}), training: make(chan struct{}),
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { o.changed() },
		UpdateFunc: func(any, any) { o.changed() },
		DeleteFunc: func(any) { o.changed() },
	}
	selector := labels.SelectorFromSet(labels.Set{jobset.JobSetNameKey: js.Name}).String()
	var podsCtl, nodesCtl cache.Controller
	o.pods, podsCtl = cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: cache.NewFilteredListWatchFromClient(cs.CoreV1().RESTClient(), "pods", js.Namespace,
			func(opts *metav1.ListOptions) { opts.LabelSelector = selector }),
		ObjectType: &corev1.Pod{},
		Handler:    handler,
	})
	o.nodes, nodesCtl = cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: cache.NewFilteredListWatchFromClient(cs.CoreV1().RESTClient(), "nodes", "",
			func(opts *metav1.ListOptions) {
				opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", base.node).String()
			}),
		ObjectType: &corev1.Node{},
		Handler:    handler,
	})
	jobSets := dynamicinformer.NewFilteredDynamicInformer(dyn, jobset.GroupVersion.WithResource("jobsets"), js.Namespace, 0, cache.Indexers{},
		func(opts *metav1.ListOptions) {
			opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", js.Name).String()
		}).Informer()
	if _, err := jobSets.AddEventHandler(handler); err != nil {
		cancel()
		return nil, err
	}
	o.jobSets = jobSets.GetStore()
	go podsCtl.RunWithContext(ctx)
	go nodesCtl.RunWithContext(ctx)
	go jobSets.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), podsCtl.HasSynced, nodesCtl.HasSynced, jobSets.HasSynced) {
		cancel()
		return nil, fmt.Errorf("watching the Pods of %s/%s: %w", js.Namespace, js.Name, context.Cause(ctx))
	}
	o.mu.Lock()
	o.synced = true
	o.mu.Unlock()
	o.changed()
	return o, nil
}

// stop closes the watches; what was seen stays.
func (o *observer) stop() { o.cancel() }

// changed reads the watches' stores afresh and dates what they show for
// the first time. Before every store has listed, a missing Pod would read
// as a deleted one: nothing is judged then.
func (o *observer) changed() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.synced {
		return
	}
	now := time.Now()
	s := scene{nodeReady: true, counter: -1}
	for _, obj := range o.pods.List() {
		s.pods = append(s.pods, obj.(*corev1.Pod))
	}
	if obj, ok, _ := o.nodes.GetByKey(o.base.node); ok {
		s.nodeReady = nodeReady(obj.(*corev1.Node))
	}
	if o.base.counterField != "" {
		for _, obj := range o.jobSets.List() {
			if v, ok, _ := unstructured.NestedInt64(obj.(*unstructured.Unstructured).Object, "status", o.base.counterField); ok {
				s.counter = v
			}
		}
	}
	pr := o.base.evaluate(s)
	for _, m := range milestones {
		if pr.reached[m] && o.at[m].IsZero() {
			o.at[m] = now
			if m == notReady {
				close(o.notReady)
			}
		}
	}
	for r := range pr.replacementWorkers {
		if o.replacementWorkers[r].IsZero() {
			o.replacementWorkers[r] = now
		}
	}
	if pr.training && o.trainingAt.IsZero() {
		o.trainingAt = now
		close(o.training)
	}
}

// mark dates a milestone the harness itself brought about.
func (o *observer) mark(m string, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.at[m].IsZero() {
		o.at[m] = at
	}
}

// seen is what the observer saw, as seconds from the fault: each
// milestone reached no later than the group trained (or than now, when it
// never did), and when each rank of the faulted node ran its worker anew.
func (o *observer) seen(fault time.Time) (at map[string]float64, trained float64, ok bool, replacementWorkers map[string]time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	end := o.trainingAt
	if end.IsZero() {
		end = time.Now()
	}
	at = map[string]float64{}
	for m, t := range o.at {
		if !t.After(end) {
			at[m] = t.Sub(fault).Seconds()
		}
	}
	replacementWorkers = map[string]time.Time{}
	for r, t := range o.replacementWorkers {
		replacementWorkers[r] = t
	}
	if o.trainingAt.IsZero() {
		return at, 0, false, replacementWorkers
	}
	return at, o.trainingAt.Sub(fault).Seconds(), true, replacementWorkers
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
