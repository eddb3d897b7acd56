package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// registerNodes adds Ready Nodes from index have up to want, each with room
// for its share of Pods.
func registerNodes(ctx context.Context, c client.Client, have, want int) error {
	errs := make([]error, want)
	workqueue.ParallelizeUntil(ctx, 32, want-have, func(i int) {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:   nodeName(have + i),
			Labels: map[string]string{corev1.LabelHostname: nodeName(have + i)},
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
			corev1.ResourcePods:   resource.MustParse("110"),
			corev1.ResourceCPU:    resource.MustParse("8"),
			corev1.ResourceMemory: resource.MustParse("32Gi"),
		}
		node.Status = corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		}
		errs[i] = c.Status().Update(ctx, node)
	})
	return errors.Join(errs...)
}

// recreateFloor creates n/podsPerJob Indexed Jobs and times until the Job
// controller created their n Pods and the scheduler bound them all.
func recreateFloor(ctx context.Context, c client.Client, n int) (float64, error) {
	ns, err := framework.CreateNamespace(ctx, c, fmt.Sprintf("recreate-%d", n))
	if err != nil {
		return 0, err
	}
	defer cleanUp(c, ns)
	rj := wrappers.MakeReplicatedJob("workers").Pods(podsPerJob).Obj()
	start := time.Now()
	errs := make([]error, n/podsPerJob)
	workqueue.ParallelizeUntil(ctx, 32, n/podsPerJob, func(i int) {
		errs[i] = c.Create(ctx, &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("workers-%d", i), Namespace: ns},
			Spec:       *rj.Template.Spec.DeepCopy(),
		})
	})
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	for {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return 0, err
		}
		bound := 0
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		if bound == n {
			return time.Since(start).Seconds(), nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return 0, fmt.Errorf("%d of %d Pods bound: %w", bound, n, err)
		}
	}
}
