// Package jobsetcontroller is the JobSet reconciler: it keeps a JobSet's child Jobs
// and headless Service converged on its spec and reports their state in its
// status. The policies (success, failure, restart, suspend) are pure
// functions over the JobSet and its children; the reconciler gathers state,
// asks them for a decision and applies it.
package jobsetcontroller

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
	"github.com/fastjobset/jobset/controllers/internal/metrics"
)

// JobOwnerUIDIndex indexes Jobs by the UID of their controlling JobSet. Jobs
// are found by UID, not by name: a JobSet recreated under the same name
// while the old one's children are still being deleted must not adopt them.
const JobOwnerUIDIndex = "jobset.x-k8s.io/owner-uid"

// writeParallelism bounds the concurrent child writes of one reconcile.
const writeParallelism = 16

// Reconciler reconciles JobSets.
type Reconciler struct {
	client client.Client
	// apiReader reads from the API server, bypassing the cache, for the
	// epoch decisions that must not act on a stale view.
	apiReader client.Reader
	recorder  events.EventRecorder
	clock     clock.PassiveClock
	// gatherStallThreshold: how long a gather may take before the
	// GatherStalled condition reports it.
	gatherStallThreshold time.Duration
	// pacer spaces the reconciles that Pod events cause (pace.go).
	pacer *podEventPacer
}

// Option configures a Reconciler.
type Option func(*Reconciler)

// WithClock replaces the wall clock, for tests.
func WithClock(c clock.PassiveClock) Option {
	return func(r *Reconciler) { r.clock = c }
}

// NewReconciler returns a Reconciler writing through c and reporting
// through recorder.
func NewReconciler(c client.Client, recorder events.EventRecorder, opts ...Option) *Reconciler {
	r := &Reconciler{client: c, apiReader: c, recorder: recorder, clock: clock.RealClock{}, gatherStallThreshold: DefaultGatherStallThreshold}
	for _, opt := range opts {
		opt(r)
	}
	// Real time, as the work queue keeps it, whatever clock the policies read.
	r.pacer = newPodEventPacer(clock.RealClock{})
	return r
}

// CacheOptions restricts the manager's cache to the objects a JobSet owns:
// Jobs, Services, Pods and shared claims that carry the JobSet name label.
// The controller's memory then grows with JobSet workloads, not with the
// cluster.
func CacheOptions() cache.Options {
	selector := cache.ByObject{Label: jobset.ChildrenSelector()}
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&batchv1.Job{}:                  selector,
		&corev1.Service{}:               selector,
		&corev1.Pod{}:                   selector,
		&corev1.PersistentVolumeClaim{}: selector,
	}}
}

// SetupIndexes registers the field indexes the reconciler lists with.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &batchv1.Job{}, JobOwnerUIDIndex, indexJobByOwnerUID); err != nil {
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

// SetupWithManager registers the reconciler with the manager.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	r.apiReader = mgr.GetAPIReader()
	return ctrl.NewControllerManagedBy(mgr).
		For(&jobset.JobSet{}).
		Owns(&batchv1.Job{}).
		Owns(&corev1.Service{}).
		// A shared claim deleted by hand comes back while the JobSet runs.
		Owns(&corev1.PersistentVolumeClaim{}).
		// Pods drive the epoch protocol of InPlaceRestart JobSets.
		Watches(&corev1.Pod{}, r.pacer.handler()).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Complete(r)
}

// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets/status,verbs=patch
// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=core,resources=services,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=core,resources=persistentvolumeclaims,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile converges one JobSet.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	// 1. Get the JobSet; leave alone those another controller manages.
	js := &jobset.JobSet{}
	if err := r.client.Get(ctx, req.NamespacedName, js); err != nil {
		if apierrors.IsNotFound(err) {
			metrics.ForgetJobSet(req.Namespace, req.Name)
			r.pacer.forget(req.NamespacedName)
			return ctrl.Result{}, r.releaseAllMembers(ctx, nil, req.Namespace, req.Name)
		}
		return ctrl.Result{}, err
	}
	log := ctrl.LoggerFrom(ctx).WithValues("jobSet", klog.KObj(js))
	ctx = ctrl.LoggerInto(ctx, log)
	if js.DeletionTimestamp != nil {
		metrics.ForgetJobSet(js.Namespace, js.Name)
		return ctrl.Result{}, r.releaseAllMembers(ctx, js, js.Namespace, js.Name)
	}
	if !managedHere(js) {
		log.V(2).Info("Left alone: managed by another controller", "managedBy", *js.Spec.ManagedBy)
		return ctrl.Result{}, nil
	}

	// 2. Gather its children.
	// The cache's objects are used as they are (no copy of thousands of
	// Jobs per reconcile): whatever writes a Job copies it first.
	var jobs batchv1.JobList
	if err := r.client.List(ctx, &jobs, client.InNamespace(js.Namespace),
		client.MatchingFields{JobOwnerUIDIndex: string(js.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the Jobs of JobSet %s: %w", req.NamespacedName, err)
	}
	children := classifyJobs(js, jobs.Items)

	// 3. A finished JobSet only stops what still runs, and goes once its
	// ttlSecondsAfterFinished is over.
	if finished(js) {
		recordEpochs(js)
		if err := r.deleteJobs(ctx, children.active); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.releaseAllMembers(ctx, js, js.Namespace, js.Name); err != nil {
			return ctrl.Result{}, err
		}
		return r.expire(ctx, js)
	}

	// The Pods, for the epoch protocol and the group-member finalizer.
	var pods []corev1.Pod
	var left *epochs // the epochs it leaves, once the status that says so is written
	if jobset.RestartStrategyOf(js) == jobset.InPlaceRestart {
		if pods, err = r.listPods(ctx, js.Namespace, js.Name); err != nil {
			return ctrl.Result{}, err
		}
		defer func() {
			if r.pacer.reconciled(req.NamespacedName, len(pods), left) && err == nil {
				result.RequeueAfter = sooner(result.RequeueAfter, time.Duration(len(pods))*DefaultPausePerPod)
			}
		}()
	}

	// 4. Decide, with pure functions.
	status := replicatedJobsStatus(js, children)
	plan := planChildren(js, children, status)
	d := decide(js, children)
	// The epoch protocol's inputs, read from the cache once per reconcile.
	var cached inplace.Snapshot
	if inPlaceRestartEnabled(js) {
		cached = epochSnapshot(js, pods, children.current())
	}
	// A lost index comes before the success policy: its Job may count
	// complete only because the index's worker was stopped.
	if inPlaceRestartEnabled(js) && (d.kind == keepRunning || d.kind == completeJobSet) {
		lost, err := r.lostIndex(ctx, js, cached)
		if err != nil {
			return ctrl.Result{}, err
		}
		if lost != "" {
			d = lostIndexDecision(js, lost)
		}
	}
	log.V(2).Info("Reconciling", "activeJobs", len(children.active), "create", len(plan.create),
		"delete", len(plan.delete), "decision", d.kind)

	// 5. Apply: children first, then one status write, then events.
	update := newStatusUpdate(js, metav1.NewTime(r.clock.Now()))
	var lookAgain time.Duration // a gather that may stall: when to report it
	update.js.Status.ReplicatedJobsStatus = status
	if err := r.deleteJobs(ctx, plan.delete); err != nil {
		return ctrl.Result{}, err
	}
	if d.kind == keepRunning {
		if err := r.convergeChildren(ctx, js, children, plan); err != nil {
			return ctrl.Result{}, err
		}
		update.setRestarting(plan.restarting(js))
		update.setStartupPolicy(plan.inOrderPending)
		// In-place restarts: the epoch protocol over the current Pods.
		if inPlaceRestartEnabled(js) {
			epochs, snapshot, err := r.decideEpochs(ctx, js, cached)
			if err != nil {
				return ctrl.Result{}, err
			}
			if epochs.LostIndex != "" {
				d = lostIndexDecision(js, epochs.LostIndex)
			} else {
				update.applyEpochs(epochs, snapshot)
			}
			var report string
			report, lookAgain = stalledGather(update.js, currentAttempt(js, pods), snapshot.ExpectedPods, update.now.Time, r.gatherStallThreshold)
			update.setGatherStalled(report)
		} else {
			update.setGatherStalled("") // suspended: nothing gathers
		}
	}
	if d.kind != keepRunning {
		// Finished or restarting fully: the gather a GatherStalled
		// condition reported is over either way.
		update.setGatherStalled("")
	}
	update.apply(d)
	update.setSuspended()
	if err := r.writeStatus(ctx, update); err != nil {
		return ctrl.Result{}, err
	}
	recordEpochs(update.js)
	// After the status write: a Pod that left while running is released
	// only once the full restart that answers it is recorded.
	if err := r.releaseMembers(ctx, update.js, pods, children.current()); err != nil {
		return ctrl.Result{}, err
	}
	if d.kind == keepRunning && inPlaceRestartEnabled(update.js) {
		left = &epochs{gather: gatherOf(update.js)}
	}
	return ctrl.Result{RequeueAfter: lookAgain}, nil
}

// sooner is the sooner of two requeue delays, where 0 is never.
func sooner(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// convergeChildren creates the missing children and moves every active Job
// to the JobSet's suspend state.
func (r *Reconciler) convergeChildren(ctx context.Context, js *jobset.JobSet, children childJobs, plan childrenPlan) error {
	if DNSHostnamesEnabled(js) {
		if err := r.ensureExists(ctx, "headless Service", constructService(js)); err != nil {
			return err
		}
	}
	// Claims before Jobs: a Pod whose claim is missing does not schedule.
	for _, claim := range volumeClaims(js) {
		if err := r.ensureExists(ctx, "PersistentVolumeClaim of volumeClaimPolicies", claim); err != nil {
			return err
		}
	}
	if len(plan.create) > 0 {
		ctrl.LoggerFrom(ctx).V(2).Info("Creating Jobs", "count", len(plan.create))
	}
	if err := r.forEach(ctx, plan.create, func(job *batchv1.Job) error {
		if err := r.client.Create(ctx, job); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating Job %s: the name is taken by a Job this JobSet does not own (another JobSet's, or one still being deleted): %w", job.Name, err)
			}
			return fmt.Errorf("creating Job %s: %w", job.Name, err)
		}
		return nil
	}); err != nil {
		return err
	}
	suspend, resume := suspendPlan(js, children.active)
	if err := r.forEach(ctx, suspend, func(job *batchv1.Job) error {
		suspended := job.DeepCopy()
		suspended.Spec.Suspend = ptr.To(true)
		return r.patchJob(ctx, job, suspended)
	}); err != nil {
		return fmt.Errorf("suspending Jobs: %w", err)
	}
	if err := r.forEach(ctx, resume, func(job *batchv1.Job) error {
		return r.patchJob(ctx, job, resumedJob(js, job))
	}); err != nil {
		return fmt.Errorf("resuming Jobs: %w", err)
	}
	return nil
}

// patchJob is the one way a Job is changed: a merge patch from the cached
// Job, guarded by its resourceVersion so that a change made since (by the
// Job controller, or Kueue) fails with a conflict and is retried on fresh
// state instead of being overwritten.
func (r *Reconciler) patchJob(ctx context.Context, cached, changed *batchv1.Job) error {
	ctrl.LoggerFrom(ctx).V(2).Info("Patching Job", "job", klog.KObj(changed), "suspend", ptr.Deref(changed.Spec.Suspend, false))
	if err := r.client.Patch(ctx, changed, client.MergeFromWithOptions(cached, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("patching Job %s: %w", changed.Name, err)
	}
	return nil
}

// ensureExists creates obj, described as what in errors, unless an object
// of its name exists. For a shared claim, one that a retained policy kept
// from an earlier JobSet of the same name is mounted again, data and all.
func (r *Reconciler) ensureExists(ctx context.Context, what string, obj client.Object) error {
	err := r.client.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
	if apierrors.IsNotFound(err) {
		err = r.client.Create(ctx, obj)
	}
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ensuring %s %s: %w", what, obj.GetName(), err)
	}
	return nil
}

// deleteJobs deletes in the foreground: a Job stays visible, holding its
// name, until its Pods are gone, which is what BlockingRecreate waits for.
func (r *Reconciler) deleteJobs(ctx context.Context, jobs []*batchv1.Job) error {
	if len(jobs) > 0 {
		ctrl.LoggerFrom(ctx).V(2).Info("Deleting Jobs", "count", len(jobs))
	}
	return r.forEach(ctx, jobs, func(job *batchv1.Job) error {
		err := r.client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationForeground),
			client.Preconditions{UID: &job.UID})
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Job %s: %w", job.Name, err)
		}
		return nil
	})
}

// forEach runs write for every Job, in parallel, and returns every error:
// with thousands of Jobs, the first alone may hide that all failed alike.
func (r *Reconciler) forEach(ctx context.Context, jobs []*batchv1.Job, write func(*batchv1.Job) error) error {
	errs := make([]error, len(jobs))
	workqueue.ParallelizeUntil(ctx, writeParallelism, len(jobs), func(i int) {
		errs[i] = write(jobs[i])
	})
	return errors.Join(errs...)
}

// expire deletes a finished JobSet whose ttlSecondsAfterFinished is over,
// with its children (foreground: the JobSet goes last), or looks again when
// it will be.
func (r *Reconciler) expire(ctx context.Context, js *jobset.JobSet) (ctrl.Result, error) {
	remaining, ok := ttlRemaining(js, r.clock.Now())
	if !ok {
		return ctrl.Result{}, nil
	}
	if remaining > 0 {
		return ctrl.Result{RequeueAfter: remaining}, nil
	}
	ctrl.LoggerFrom(ctx).Info("Deleting the finished JobSet: its ttlSecondsAfterFinished is over")
	err := r.client.Delete(ctx, js, client.PropagationPolicy(metav1.DeletePropagationForeground), client.Preconditions{UID: &js.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("deleting JobSet %s after its ttlSecondsAfterFinished: %w", js.Name, err)
	}
	return ctrl.Result{}, nil
}

func managedHere(js *jobset.JobSet) bool {
	return js.Spec.ManagedBy == nil || *js.Spec.ManagedBy == jobset.JobSetControllerName
}

func finished(js *jobset.JobSet) bool {
	return meta.IsStatusConditionTrue(js.Status.Conditions, string(jobset.JobSetCompleted)) ||
		meta.IsStatusConditionTrue(js.Status.Conditions, string(jobset.JobSetFailed))
}
