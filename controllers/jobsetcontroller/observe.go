package jobsetcontroller

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/fastjobset/jobset/api/features"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// JobOwnerUIDIndex indexes Jobs by the UID of their controlling JobSet. Jobs
// are found by UID, not by name: a JobSet recreated under the same name
// while the old one's children are still being deleted must not adopt them.
const JobOwnerUIDIndex = "jobset.x-k8s.io/owner-uid"

// PodJobSetNameIndex indexes Pods by the name of their JobSet (the
// jobset-name label every child Pod carries), so that the Pods of a JobSet
// that is gone, or of an earlier JobSet of the same name, are found too:
// they may still hold the group-member finalizer.
const PodJobSetNameIndex = "jobset.x-k8s.io/pod-jobset-name"

// PodNodeNameIndex indexes the JobSets' Pods by their node, for the
// members of a node that may be lost.
const PodNodeNameIndex = "jobset.x-k8s.io/pod-node-name"

// SetupIndexes registers the field indexes the reconciler lists with.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &batchv1.Job{}, JobOwnerUIDIndex, indexJobByOwnerUID); err != nil {
		return err
	}
	if err := indexer.IndexField(ctx, &corev1.Pod{}, PodNodeNameIndex, func(o client.Object) []string {
		if node := o.(*corev1.Pod).Spec.NodeName; node != "" {
			return []string{node}
		}
		return nil
	}); err != nil {
		return err
	}
	return indexer.IndexField(ctx, &corev1.Pod{}, PodJobSetNameIndex, indexPodByJobSetName)
}

func indexJobByOwnerUID(o client.Object) []string {
	owner := metav1.GetControllerOf(o)
	if owner == nil || owner.Kind != "JobSet" || owner.APIVersion != jobset.GroupVersion.String() {
		return nil
	}
	return []string{string(owner.UID)}
}

func indexPodByJobSetName(o client.Object) []string {
	if name, ok := o.GetLabels()[jobset.JobSetNameKey]; ok {
		return []string{name}
	}
	return nil
}

// podToJobSet maps a child Pod event to its JobSet.
func podToJobSet(_ context.Context, o client.Object) []reconcile.Request {
	name, ok := o.GetLabels()[jobset.JobSetNameKey]
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// observed is what one reconcile decides on: the JobSet and, from the
// cache, its children. The cache's objects are used as they are, never
// copied (a reconcile reads thousands of Pods): whatever writes one copies
// it first.
type observed struct {
	js       *jobset.JobSet
	children childJobs
	// pods are every Pod labelled with the JobSet's name, its own and any
	// that a JobSet of the same name left behind; read for the epoch
	// protocol and the group-member finalizer only.
	pods []corev1.Pod
	// fresh, once a decision asked to confirm a write, holds the current
	// children as the API server has them.
	fresh *freshChildren
	now   time.Time
	// nodeLoss tells the members whose node was lost.
	nodeLoss nodeLoss
	// repeatedFailures tells a Pod to replace off its node.
	repeatedFailures repeatedFailures
	// signs are the failure signals the Pod event handler saw in sync
	// that the Pods may no longer show (inplace.Tally.Signs).
	signs map[string]string
	// gates are the controller's feature gates.
	gates features.Gates
}

// freshChildren are the JobSet's Pods and the Jobs of its current restart
// attempt, read from the API server, bypassing the cache.
type freshChildren struct {
	pods []corev1.Pod
	jobs []*batchv1.Job
}

// epochInputs are the Pods and current Jobs the epoch decision and the
// group-member release read: the fresh ones once read.
func (o *observed) epochInputs() ([]corev1.Pod, []*batchv1.Job) {
	if o.fresh != nil {
		return o.fresh.pods, o.fresh.jobs
	}
	return o.pods, o.children.current()
}

// paced: the JobSet's Pod events are paced by what its reconciles leave
// (pace.go), as for every in-place JobSet that has not finished.
func (o *observed) paced() bool {
	return jobset.RestartStrategyOf(o.js) == jobset.InPlaceRestart && !finished(o.js)
}

// readsPods: the reconcile reads the JobSet's Pods, for the epoch protocol
// and the group-member finalizer (which a finished JobSet lets go of).
func (o *observed) readsPods() bool {
	return jobset.RestartStrategyOf(o.js) == jobset.InPlaceRestart || finished(o.js)
}

// observe reads the JobSet's children from the cache.
func (r *Reconciler) observe(ctx context.Context, js *jobset.JobSet) (*observed, error) {
	o := &observed{js: js, now: r.clock.Now(), nodeLoss: r.nodeLoss, repeatedFailures: r.repeatedFailures,
		signs: r.pacer.signs(types.NamespacedName{Namespace: js.Namespace, Name: js.Name}), gates: r.gates}
	var jobs batchv1.JobList
	if err := r.client.List(ctx, &jobs, client.InNamespace(js.Namespace),
		client.MatchingFields{JobOwnerUIDIndex: string(js.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing the Jobs of JobSet %s: %w", js.Name, err)
	}
	o.children = classifyJobs(js, jobs.Items, o.gates.Enabled(features.RestartJob))
	if o.readsPods() {
		var err error
		if o.pods, err = r.listPods(ctx, js.Namespace, js.Name); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// listPods lists, from the cache, the Pods labelled with the JobSet's name.
func (r *Reconciler) listPods(ctx context.Context, namespace, name string) ([]corev1.Pod, error) {
	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, client.InNamespace(namespace),
		client.MatchingFields{PodJobSetNameIndex: name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing the Pods of JobSet %s: %w", name, err)
	}
	return pods.Items, nil
}

// readFresh lists the JobSet's current Jobs and its Pods from the API
// server. The Jobs first: a Job counts an index complete only after its
// Pod ended, so Pods read afterwards show every Pod that a completed index
// stands for as ended. The other way round, a worker deleted while it ran
// could still look running in the Pods and already complete in its Job:
// not live, not expected, and the rest of the group would sync without it.
func (r *Reconciler) readFresh(ctx context.Context, js *jobset.JobSet) (*freshChildren, error) {
	var jobs batchv1.JobList
	if err := r.apiReader.List(ctx, &jobs, client.InNamespace(js.Namespace),
		client.MatchingLabels{jobset.JobSetUIDKey: string(js.UID)}); err != nil {
		return nil, fmt.Errorf("reading the Jobs of JobSet %s from the API server: %w", js.Name, err)
	}
	pods, err := r.readFreshPods(ctx, js)
	if err != nil {
		return nil, err
	}
	fresh := &freshChildren{pods: pods}
	for i := range jobs.Items {
		if job := &jobs.Items[i]; job.DeletionTimestamp == nil && restartAttempt(job) == js.Status.Restarts {
			fresh.jobs = append(fresh.jobs, job)
		}
	}
	return fresh, nil
}

// freshPageSize is how many Pods a page of the fresh read holds: the
// controller holds one page of whole Pods at a time.
const freshPageSize = 500

// readFreshPods lists the JobSet's Pods from the API server page by page,
// each Pod kept as the cache keeps it (cachedPod), which the decisions
// read alike: at thousands of Pods, the whole Pods of one list were the
// largest part of the controller's peak memory. The pages are one
// snapshot, as one list is: the API server serves every page at the
// resourceVersion of the first (and answers 410 Gone, an error here, once
// that is compacted), so the read is as fresh as a single list, and comes
// after the Jobs' read all the same.
func (r *Reconciler) readFreshPods(ctx context.Context, js *jobset.JobSet) ([]corev1.Pod, error) {
	var pods []corev1.Pod
	opts := []client.ListOption{client.InNamespace(js.Namespace), client.MatchingLabels{jobset.JobSetUIDKey: string(js.UID)}, client.Limit(freshPageSize)}
	for {
		var page corev1.PodList
		if err := r.apiReader.List(ctx, &page, opts...); err != nil {
			return nil, fmt.Errorf("reading the Pods of JobSet %s from the API server: %w", js.Name, err)
		}
		if pods == nil {
			pods = make([]corev1.Pod, 0, len(page.Items)+int(ptr.Deref(page.RemainingItemCount, 0)))
		}
		for i := range page.Items {
			pods = append(pods, *cachedPod(&page.Items[i]))
		}
		if page.Continue == "" {
			return pods, nil
		}
		opts = append(opts[:3], client.Continue(page.Continue))
	}
}
