// Package jobsetcontroller is the JobSet reconciler: it keeps a JobSet's child Jobs
// and headless Service converged on its spec and reports their state in its
// status. The policies (success, failure, restart, suspend) are pure
// functions over the JobSet and its children; the reconciler gathers state,
// asks them for a decision and applies it.
package jobsetcontroller

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/fastjobset/jobset/api/features"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/internal/metrics"
	"github.com/fastjobset/jobset/controllers/nodeloss"
)

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
	// nodeLoss tells the members whose node was lost (node_loss.go).
	nodeLoss nodeLoss
	// nodeTracker is the nodes' silence the process keeps across its
	// leadership terms (nil: each term tracks them afresh).
	nodeTracker *nodeloss.Tracker
	// repeatedFailures: when a Pod that fails in place again and again is
	// replaced off its node (repeated_failures.go).
	repeatedFailures repeatedFailures
	// gates are community JobSet's feature gates, as the binary's
	// --feature-gates set them.
	gates features.Gates
	// unconfirmed are the status writes whose answer was lost (unconfirmed.go).
	unconfirmed unconfirmedWrites
}

// WithFeatureGates sets the feature gates (the default: community's
// defaults).
func WithFeatureGates(gates features.Gates) Option {
	return func(r *Reconciler) { r.gates = gates }
}

// WithRepeatedFailures replaces, off its node, a Pod that failed in place
// limit times within window (limit 0: never).
func WithRepeatedFailures(limit int, window time.Duration) Option {
	return func(r *Reconciler) { r.repeatedFailures = repeatedFailures{Limit: limit, Window: window} }
}

// WithNodeLoss has the reconciler mark Failed the members of in-place
// groups whose node's kubelet was silent past their bound, which is
// threshold at least (0: never); silence is how long a node has been
// silent, nil for the nodes' Leases as the manager's cache sees them.
func WithNodeLoss(threshold time.Duration, silence NodeSilence) Option {
	return func(r *Reconciler) { r.nodeLoss = nodeLoss{silence: silence, threshold: threshold} }
}

// WithNodeTracker has the node-loss controller of each leadership term
// feed tracker, which the process keeps across its terms
// (nodeloss.Tracker.NewTerm); without it, each term tracks the nodes
// afresh.
func WithNodeTracker(tracker *nodeloss.Tracker) Option {
	return func(r *Reconciler) { r.nodeTracker = tracker }
}

// Option configures a Reconciler.
type Option func(*Reconciler)

// NewReconciler returns a Reconciler writing through c and reporting
// through recorder.
func NewReconciler(c client.Client, recorder events.EventRecorder, opts ...Option) *Reconciler {
	r := &Reconciler{client: c, apiReader: c, recorder: recorder, clock: clock.RealClock{}, gatherStallThreshold: DefaultGatherStallThreshold,
		repeatedFailures: repeatedFailures{Limit: DefaultRepeatedFailureLimit, Window: DefaultRepeatedFailureWindow}}
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
// cluster. Of a Pod the cache keeps only what the decisions read
// (cachedPod), and of every other object all but its managedFields, which
// only a Pod's are read: no object is written back from the cache whole
// (an update), only patched from a copy of it, which leaves what the
// cache dropped as it is.
func CacheOptions() cache.Options {
	selector := cache.ByObject{Label: jobset.ChildrenSelector()}
	pods := selector
	pods.Transform = cachePod
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&batchv1.Job{}:                  selector,
			&corev1.Service{}:               selector,
			&corev1.Pod{}:                   pods,
			&corev1.PersistentVolumeClaim{}: selector,
			// The kubelets' Leases, one a node: how the node-loss
			// controller tells a lost node (controllers/nodeloss).
			&coordinationv1.Lease{}: {Namespaces: map[string]cache.Config{corev1.NamespaceNodeLease: {}}},
		},
	}
}

// SetupWithManager registers the reconciler with the manager.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	r.apiReader = mgr.GetAPIReader()
	b := ctrl.NewControllerManagedBy(mgr)
	if r.nodeLoss.threshold > 0 {
		// Node loss is a controller of its own; this one declares the
		// members lost, from the silence it tracks.
		nodes := nodeloss.NewController(mgr.GetClient(), r.apiReader, r.nodeTracker)
		if err := nodes.SetupWithManager(mgr); err != nil {
			return err
		}
		if r.nodeLoss.silence == nil {
			r.nodeLoss.silence, r.nodeLoss.ended = nodes.Tracker.Silence, nodes.Tracker.Ended
		}
		b = b.WatchesRawSource(nodes.Suspects(handler.EnqueueRequestsFromMapFunc(r.jobSetsOnNode)))
	}
	return b.
		For(&jobset.JobSet{}).
		// Owned Jobs, at the pace of their readiness changes.
		Watches(&batchv1.Job{}, r.pacer.jobHandler()).
		Owns(&corev1.Service{}).
		// A shared claim deleted by hand comes back while the JobSet runs.
		Owns(&corev1.PersistentVolumeClaim{}).
		// Pods drive the epoch protocol of InPlaceRestart JobSets.
		Watches(&corev1.Pod{}, r.pacer.handler()).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Complete(r)
}

// jobSetsOnNode maps a node that the node-loss controller found suspect to
// the JobSets with Pods on it, each once, so that each looks at its
// members there. The cache's index answers without the API server.
func (r *Reconciler) jobSetsOnNode(ctx context.Context, node client.Object) []ctrl.Request {
	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, client.MatchingFields{PodNodeNameIndex: node.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Finding the JobSets with Pods on a suspect node", "node", node.GetName())
		return nil
	}
	var requests []ctrl.Request
	sent := map[client.ObjectKey]bool{}
	for _, pod := range pods.Items {
		key := client.ObjectKey{Namespace: pod.Namespace, Name: pod.Labels[jobset.JobSetNameKey]}
		if key.Name == "" || sent[key] {
			continue
		}
		sent[key] = true
		requests = append(requests, ctrl.Request{NamespacedName: key})
	}
	return requests
}

// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets/status,verbs=patch
// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=core,resources=services,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups=core,resources=pods/status,verbs=patch
// +kubebuilder:rbac:groups=core,resources=nodes,verbs=get;list;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=kube-node-lease,resources=leases,verbs=get;list;watch
// +kubebuilder:rbac:groups=core,resources=persistentvolumeclaims,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile converges one JobSet in five phases: observe it and its
// children; decide every action with one pure function; confirm, when the
// actions write something a cache behind the API server may have misled,
// by deciding again on a fresh read; apply; and publish what the in-place
// group was left in to the Pod event pacer.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	js := &jobset.JobSet{}
	if err := r.client.Get(ctx, req.NamespacedName, js); err != nil {
		if apierrors.IsNotFound(err) {
			r.pacer.forget(req.NamespacedName)
			r.unconfirmed.forget(req.NamespacedName)
			return ctrl.Result{}, r.releaseAll(ctx, nil, req.NamespacedName)
		}
		return ctrl.Result{}, err
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("jobSet", klog.KObj(js)))
	r.unconfirmed.confirm(js)
	if js.DeletionTimestamp != nil {
		return ctrl.Result{}, r.releaseAll(ctx, js, req.NamespacedName)
	}
	if !managedHere(js) {
		ctrl.LoggerFrom(ctx).V(2).Info("Left alone: managed by another controller", "managedBy", *js.Spec.ManagedBy)
		return ctrl.Result{}, nil
	}

	began := time.Now()
	o, err := r.observe(ctx, js)
	if err != nil {
		return ctrl.Result{}, err
	}
	a := decide(o, r.gatherStallThreshold)
	var freshRead time.Duration
	if a.confirm {
		readAt := time.Now()
		if o.fresh, err = r.readFresh(ctx, js); err != nil {
			return r.publish(req.NamespacedName, o, a, ctrl.Result{}, err)
		}
		freshRead = time.Since(readAt)
		a = decide(o, r.gatherStallThreshold)
	}
	// The durations say where a large group's reconcile spends its time
	// before it writes: reading the children from the cache and deciding,
	// and the fresh read from the API server.
	ctrl.LoggerFrom(ctx).V(2).Info("Reconciling", "activeJobs", len(o.children.active), "pods", len(o.pods),
		"delete", len(a.deleteJobs), "confirmed", o.fresh != nil, "release", len(a.release),
		"decidedIn", time.Since(began), "freshRead", freshRead)
	result, err := r.apply(ctx, o, a)
	return r.publish(req.NamespacedName, o, a, result, err)
}

// releaseAll lets go of every Pod labelled with the name of a JobSet that
// is gone (js nil) or being deleted.
func (r *Reconciler) releaseAll(ctx context.Context, js *jobset.JobSet, key types.NamespacedName) error {
	metrics.ForgetJobSet(key.Namespace, key.Name)
	pods, err := r.listPods(ctx, key.Namespace, key.Name)
	if err != nil {
		return err
	}
	release, _ := releases(js, pods, nil, nodeLoss{}, time.Now())
	return r.releaseMembers(ctx, release)
}

// publish tells the Pod event pacer what the reconcile of an in-place
// JobSet left its group in (not known when it failed), and looks again
// after a pause when events it weighed as quiet may be news now.
func (r *Reconciler) publish(key types.NamespacedName, o *observed, a actions, result ctrl.Result, err error) (ctrl.Result, error) {
	r.pacer.readsPods(key, o.readsPods())
	if !o.paced() {
		return result, err
	}
	known := err == nil && a.gatherKnown
	if r.pacer.reconciled(key, len(o.pods), known, a.gather) && err == nil {
		result.RequeueAfter = sooner(result.RequeueAfter, time.Duration(len(o.pods))*DefaultPausePerPod)
	}
	return result, err
}

// sooner is the sooner of two requeue delays, where 0 is never.
func sooner(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

func managedHere(js *jobset.JobSet) bool {
	return js.Spec.ManagedBy == nil || *js.Spec.ManagedBy == jobset.JobSetControllerName
}

func finished(js *jobset.JobSet) bool {
	return meta.IsStatusConditionTrue(js.Status.Conditions, string(jobset.JobSetCompleted)) ||
		meta.IsStatusConditionTrue(js.Status.Conditions, string(jobset.JobSetFailed))
}
