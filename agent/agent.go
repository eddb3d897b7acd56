package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/fastjobset/jobset/api/jobset/epoch"
)

// Agent runs the protocol for one Pod.
type Agent struct {
	cfg      Config
	jobsets  dynamic.ResourceInterface
	pods     rest.Interface
	barrier  *barrier
	backoff  *backoff
	listener net.Listener
	// epoch is the epoch this agent joined; 0 until its patch succeeded.
	epoch int32
}

// Option configures an Agent.
type Option func(*Agent)

// WithListener serves the barrier on l instead of :BarrierPort (tests).
func WithListener(l net.Listener) Option {
	return func(a *Agent) { a.listener = l }
}

// WithSleep replaces how the agent waits between retries (tests).
func WithSleep(sleep func(context.Context, time.Duration) error) Option {
	return func(a *Agent) { a.backoff.sleep = sleep }
}

// New builds an agent talking to the API server of restConfig.
func New(cfg Config, restConfig *rest.Config, opts ...Option) (*Agent, error) {
	restConfig = rest.CopyConfig(restConfig)
	if restConfig.UserAgent == "" {
		restConfig.UserAgent = "jobset-agent/" + cfg.Namespace + "/" + cfg.PodName
	}
	dyn, err := dynamic.NewForConfig(restConfig)
	if err != nil {
		return nil, err
	}
	// Pods are only patched: a bare REST client, whose responses are not
	// decoded beyond their status.
	podsConfig := rest.CopyConfig(restConfig)
	podsConfig.APIPath, podsConfig.GroupVersion = "/api", &schema.GroupVersion{Version: "v1"}
	statusOnly := runtime.NewScheme()
	metav1.AddToGroupVersion(statusOnly, schema.GroupVersion{Version: "v1"})
	podsConfig.NegotiatedSerializer = serializer.NewCodecFactory(statusOnly).WithoutConversion()
	pods, err := rest.RESTClientFor(podsConfig)
	if err != nil {
		return nil, err
	}
	a := &Agent{
		cfg:     cfg,
		jobsets: dyn.Resource(schema.GroupVersionResource{Group: epoch.Group, Version: epoch.Version, Resource: epoch.Resource}).Namespace(cfg.Namespace),
		pods:    pods,
		barrier: newBarrier(),
		backoff: newBackoff(),
	}
	for _, opt := range opts {
		opt(a)
	}
	return a, nil
}

// Epoch is the epoch the agent joined, 0 before. Read it from another
// goroutine only after Lifted is closed.
func (a *Agent) Epoch() int32 { return a.epoch }

// Lifted is closed once the agent lifts its barrier, for observers in the
// same process (the coordination benchmark), which need no probe.
func (a *Agent) Lifted() <-chan struct{} { return a.barrier.liftedCh }

// Run serves the barrier and follows the JobSet until the Pod must restart
// in place or ctx ends, and returns the process's exit code.
func (a *Agent) Run(ctx context.Context) int {
	listener := a.listener
	if listener == nil {
		var err error
		if listener, err = net.Listen("tcp", ":"+strconv.Itoa(a.cfg.BarrierPort)); err != nil {
			klog.ErrorS(err, "Cannot serve the barrier", "port", a.cfg.BarrierPort)
			return ExitFatal
		}
	}
	server := &http.Server{Handler: a.cfg.handler(a.barrier), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.ErrorS(err, "Barrier server stopped")
		}
	}()
	defer func() { _ = server.Close() }()

	if a.follow(ctx) {
		klog.InfoS("Epoch deprecated: restarting the Pod in place", "epoch", a.epoch, "exitCode", a.cfg.RestartExitCode)
		return a.cfg.RestartExitCode
	}
	klog.InfoS("Shutting down", "epoch", a.epoch)
	return ExitTerminated
}

// follow watches the JobSet and acts on its status; it returns true when
// the Pod must restart, false when ctx ended.
func (a *Agent) follow(ctx context.Context) bool {
	resourceVersion := ""
	for ctx.Err() == nil {
		w, err := a.watch(ctx, resourceVersion)
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				resourceVersion = "" // too old to resume: start afresh
			}
			if ctx.Err() == nil {
				klog.InfoS("Watching the JobSet failed; retrying", "err", err)
				_ = a.backoff.wait(ctx, err)
			}
			continue
		}
		restart, next, err := a.consume(ctx, w, resourceVersion)
		w.Stop()
		if restart {
			return true
		}
		resourceVersion = next
		if err != nil && ctx.Err() == nil {
			klog.InfoS("JobSet watch reported an error; resuming", "err", err)
			_ = a.backoff.wait(ctx, err)
		}
	}
	return false
}

// consume handles one watch's events until it ends, and returns the
// resourceVersion to resume from ("" after 410 Gone: start afresh, with the
// current state as the first event) and the error that ended it, if any.
func (a *Agent) consume(ctx context.Context, w watch.Interface, resourceVersion string) (restart bool, next string, err error) {
	for {
		select {
		case <-ctx.Done():
			return false, resourceVersion, nil
		case event, ok := <-w.ResultChan():
			if !ok {
				return false, resourceVersion, nil
			}
			switch event.Type {
			case watch.Error:
				err := apierrors.FromObject(event.Object)
				if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					return false, "", nil
				}
				return false, resourceVersion, err
			case watch.Bookmark:
				if m, err := meta.Accessor(event.Object); err == nil {
					resourceVersion = m.GetResourceVersion()
				}
			case watch.Deleted:
				a.barrier.hold("JobSet %s was deleted", a.cfg.JobSetName)
			case watch.Added, watch.Modified:
				js, ok := event.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				a.backoff.reset()
				resourceVersion = js.GetResourceVersion()
				if a.observe(ctx, epochsOf(js)) {
					return true, resourceVersion, nil
				}
			}
		}
	}
}

// epochsOf reads status.syncedEpoch and status.deprecatedEpoch (absent: 0;
// the schema guarantees int32 values).
func epochsOf(js *unstructured.Unstructured) Epochs {
	synced, _, _ := unstructured.NestedInt64(js.Object, "status", "syncedEpoch")
	deprecated, _, _ := unstructured.NestedInt64(js.Object, "status", "deprecatedEpoch")
	return Epochs{Synced: int32(synced), Deprecated: int32(deprecated)}
}

// observe acts on one status of the JobSet; it returns true when the Pod
// must restart.
func (a *Agent) observe(ctx context.Context, status Epochs) bool {
	action := Next(a.epoch, status)
	if action == Join {
		if !a.join(ctx, status.Synced+1) {
			return false
		}
		action = Next(a.epoch, status)
	}
	switch action {
	case Restart:
		return true
	case Lift:
		a.barrier.lift()
	case Wait:
		a.barrier.hold("epoch %d is not synced yet (the JobSet's synced epoch is %d): waiting for every Pod of the group to join", a.epoch, status.Synced)
	}
	return false
}

// join writes the Pod's epoch annotation, retrying until it succeeds or ctx
// ends. The agent acts on nothing before.
func (a *Agent) join(ctx context.Context, e int32) bool {
	a.barrier.hold("joining epoch %d: writing the Pod's %s annotation", e, epoch.PodAnnotation)
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, epoch.PodAnnotation, strconv.Itoa(int(e)))
	for ctx.Err() == nil {
		err := a.pods.Patch(types.MergePatchType).
			Namespace(a.cfg.Namespace).Resource("pods").Name(a.cfg.PodName).
			Body(patch).MaxRetries(0).Do(ctx).Error()
		if err == nil {
			a.backoff.reset()
			a.epoch = e
			klog.InfoS("Joined epoch", "epoch", e)
			return true
		}
		klog.InfoS("Writing the Pod's epoch failed; retrying", "epoch", e, "err", err)
		_ = a.backoff.wait(ctx, err)
	}
	return false
}

func (a *Agent) watch(ctx context.Context, resourceVersion string) (watch.Interface, error) {
	return a.jobsets.Watch(ctx, metav1.ListOptions{
		FieldSelector:       fields.OneTermEqualSelector("metadata.name", a.cfg.JobSetName).String(),
		ResourceVersion:     resourceVersion,
		AllowWatchBookmarks: true,
	})
}
