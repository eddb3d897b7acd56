// Package leadership keeps the controller process alive through API server
// outages and lost leader leases.
//
// controller-runtime ends Manager.Start with "leader election lost" when the
// lease cannot be renewed, and most binaries exit on it: an API server
// outage longer than the renew deadline then restarts every replica, and a
// long one puts them in CrashLoopBackOff, which outlives the outage by
// minutes. Here the process runs a sequence of terms instead. A term is a
// fresh manager (fresh caches, fresh controllers) built once the API server
// answers; it campaigns for the lease, reconciles while it holds it, and
// ends when it loses it, when the API server stays unready for longer than
// the renew deadline, or when the process is told to stop. Then the next
// term waits for the API server and campaigns again.
//
// Every term campaigns with the same identity, so the replica that led
// before an outage takes its own lease back at its first renewal instead of
// waiting for it to expire; a standby still has to wait LeaseDuration. A
// term's client refuses writes once the term has ended, so nothing written
// after the lease was lost comes from a reconcile still in flight.
package leadership

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/leaderelection"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// Defaults of the lease, as install.yaml runs them. A standby takes over a
// crashed leader's lease LeaseDuration after it last saw the lease renewed,
// at its next retry: at most LeaseDuration + 2 x 2.2 x RetryPeriod (client-go
// jitters retries by up to 1.2 x) after the crash, 4.8 s, under the 5 s a
// group restart may wait. Safety does not rest on synchronised clocks, only
// on clock rates: the leader stops acting RenewDeadline after its last
// successful renewal, and a standby cannot take the lease before
// LeaseDuration after it saw that renewal, which leaves 1 s for writes in
// flight: they time out after it (writeConfig). The leader renews 2.5
// times a second and a standby reads the lease about once a second: a few
// requests per second in all.
const (
	DefaultLeaseDuration = 3 * time.Second
	DefaultRenewDeadline = 2 * time.Second
	DefaultRetryPeriod   = 400 * time.Millisecond
)

// ErrTermEnded is what a term's client answers to writes once the term is
// over.
var ErrTermEnded = errors.New("not the leader any more: this term of the controller has ended")

var termsEnded = prometheus.NewCounterVec(prometheus.CounterOpts{
	Subsystem: "jobset_controller",
	Name:      "terms_ended_total",
	Help:      "Terms of this controller process that ended without the process exiting: lost lease, API server unready, or manager error.",
}, []string{"reason"})

func init() {
	crmetrics.Registry.MustRegister(termsEnded)
}

// Config says where the lease is and how it is held.
type Config struct {
	// LeaseNamespace and LeaseName name the Lease.
	LeaseNamespace, LeaseName                 string
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Manager is the options every term's manager starts from. Leader
	// election, the client and the probe and metrics servers are the
	// runner's: it serves probes and metrics itself, across terms.
	Manager manager.Options
	// Setup registers indexes and controllers with a term's manager.
	Setup func(context.Context, manager.Manager) error
}

// Runner runs the terms. Its Ready check passes while the current term's
// caches are synced, so a Deployment's rolling update waits for a warm
// standby before it stops the leader.
type Runner struct {
	cfg    *rest.Config
	c      Config
	lock   resourcelock.Interface
	api    rest.Interface
	synced atomic.Bool
}

// New checks the configuration and creates the lock with this process's
// identity, kept for every term.
func New(cfg *rest.Config, c Config) (*Runner, error) {
	if c.LeaseDuration == 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.RenewDeadline == 0 {
		c.RenewDeadline = DefaultRenewDeadline
	}
	if c.RetryPeriod == 0 {
		c.RetryPeriod = DefaultRetryPeriod
	}
	// client-go's own constraints, checked here so that a bad flag fails
	// at start, not in every term.
	if c.LeaseDuration <= c.RenewDeadline {
		return nil, fmt.Errorf("lease duration %s must be longer than the renew deadline %s", c.LeaseDuration, c.RenewDeadline)
	}
	if float64(c.RenewDeadline) <= 1.2*float64(c.RetryPeriod) {
		return nil, fmt.Errorf("renew deadline %s must be longer than 1.2 x the retry period %s", c.RenewDeadline, c.RetryPeriod)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	// The lock outlives managers, so its events ("became leader") go
	// through a broadcaster of the process's own.
	broadcaster := record.NewBroadcaster()
	broadcaster.StartRecordingToSink(&corev1client.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	// controller-runtime sets the user agent and the timeout of the lock's
	// requests on the config it is given: its own copy, or every request
	// of the controller would carry them (a watch cut every second).
	lock, err := leaderelection.NewResourceLock(rest.CopyConfig(cfg), lockEvents{broadcaster}, leaderelection.Options{
		LeaderElection:          true,
		LeaderElectionID:        c.LeaseName,
		LeaderElectionNamespace: c.LeaseNamespace,
		RenewDeadline:           c.RenewDeadline,
	})
	if err != nil {
		return nil, fmt.Errorf("leader election lock: %w", err)
	}
	probeCfg := rest.CopyConfig(cfg)
	probeCfg.Timeout = 2 * c.RetryPeriod
	probe, err := kubernetes.NewForConfig(probeCfg)
	if err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg, c: c, lock: lock, api: probe.Discovery().RESTClient()}, nil
}

// writeConfig is the config of a term's client, which writes and reads
// what the cache does not hold: a request in flight when the leader stops
// acting, RenewDeadline after its last renewal, ends before a standby can
// take the lease, LeaseDuration after it. The cache's watches and the API
// reader keep the config without a timeout.
func (c Config) writeConfig(cfg *rest.Config) *rest.Config {
	writes := rest.CopyConfig(cfg)
	writes.Timeout = c.LeaseDuration - c.RenewDeadline
	return writes
}

// Identity is this process's identity in the lease.
func (r *Runner) Identity() string { return r.lock.Identity() }

// Ready is a readyz check: the current term's caches are synced.
func (r *Runner) Ready(*http.Request) error {
	if !r.synced.Load() {
		return errors.New("no term with synced caches: waiting for the API server")
	}
	return nil
}

// Run runs terms until ctx ends. It returns nil then, after the last term
// released the lease; it returns an error only for a term that could not
// be set up at all, which no retry would fix.
func (r *Runner) Run(ctx context.Context) error {
	log := ctrl.Log.WithName("leadership").WithValues("identity", r.Identity())
	for term := 1; ; term++ {
		if err := r.waitForAPIServer(ctx); err != nil {
			return nil // ctx ended
		}
		reason, err := r.runTerm(ctx, term)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errSetup) {
			return err
		}
		termsEnded.WithLabelValues(reason).Inc()
		log.Info("Term ended; campaigning again in this process", "term", term, "reason", reason, "err", err)
	}
}

var errSetup = errors.New("setting up the manager")

// runTerm runs one manager until it ends, and says why it ended.
func (r *Runner) runTerm(ctx context.Context, term int) (reason string, err error) {
	termCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	f := &fence{}
	defer f.close()

	o := r.c.Manager
	o.LeaderElection = true
	o.LeaderElectionResourceLockInterface = r.lock
	// Only names the term's election, in the metric
	// leader_election_master_status{name} that the no-leader alert reads:
	// the lock above is the lease.
	o.LeaderElectionID = r.c.LeaseName
	o.LeaderElectionReleaseOnCancel = true
	o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = &r.c.LeaseDuration, &r.c.RenewDeadline, &r.c.RetryPeriod
	// Probes and metrics outlive terms: the runner's caller serves them.
	o.HealthProbeBindAddress = "0"
	o.Metrics = metricsserver.Options{BindAddress: "0"}
	// Every term registers the same controllers again in this process.
	o.Controller.SkipNameValidation = ptr.To(true)
	o.NewClient = func(cfg *rest.Config, opts client.Options) (client.Client, error) {
		writes := r.c.writeConfig(cfg)
		httpClient, err := rest.HTTPClientFor(writes)
		if err != nil {
			return nil, err
		}
		opts.HTTPClient = httpClient
		c, err := client.NewWithWatch(writes, opts)
		if err != nil {
			return nil, err
		}
		return f.wrap(c), nil
	}

	mgr, err := ctrl.NewManager(r.cfg, o)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errSetup, err)
	}
	if err := r.c.Setup(termCtx, mgr); err != nil {
		return "", fmt.Errorf("%w: %w", errSetup, err)
	}
	if err := mgr.Add(cachesSynced{r}); err != nil {
		return "", fmt.Errorf("%w: %w", errSetup, err)
	}
	go func() {
		select {
		case <-mgr.Elected():
			ctrl.Log.WithName("leadership").Info("Leading", "term", term, "identity", r.Identity())
		case <-termCtx.Done():
		}
	}()
	go r.watchAPIServer(termCtx, cancel)

	err = mgr.Start(termCtx)
	r.synced.Store(false)
	// controller-runtime says "leader election lost" in words only.
	switch cause := context.Cause(termCtx); {
	case ctx.Err() != nil:
		return "stopped", nil
	case err != nil && strings.Contains(err.Error(), "leader election lost"):
		return "lease-lost", err
	case errors.Is(cause, errAPIServerUnready):
		return "api-server-unready", cause
	default:
		return "manager-error", err
	}
}

var errAPIServerUnready = errors.New("the API server was not ready for longer than the renew deadline")

// watchAPIServer ends the term when the API server stays unready for
// longer than the renew deadline. A leader loses its lease then anyway; a
// standby would keep caches whose watches are backing off (client-go's
// reflectors wait up to 30 s between lists) and might take the lease with
// them after the outage. Ending every term makes the next one list afresh
// the moment the API server is back.
func (r *Runner) watchAPIServer(ctx context.Context, end context.CancelCauseFunc) {
	lastReady := time.Now()
	t := time.NewTicker(r.c.RetryPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if r.apiServerReady(ctx) {
			lastReady = time.Now()
		} else if time.Since(lastReady) > r.c.RenewDeadline {
			end(errAPIServerUnready)
			return
		}
	}
}

// waitForAPIServer returns once the API server is ready, so that a new
// term's informers list at once instead of starting into client-go's
// backoff.
func (r *Runner) waitForAPIServer(ctx context.Context) error {
	t := time.NewTicker(r.c.RetryPeriod / 2)
	defer t.Stop()
	for !r.apiServerReady(ctx) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

func (r *Runner) apiServerReady(ctx context.Context) bool {
	return r.api.Get().AbsPath("/readyz").Do(ctx).Error() == nil
}

// fence lets a term's writes through until the term ends, and waits for
// those in flight when it closes.
type fence struct {
	mu     sync.RWMutex
	closed bool
}

func (f *fence) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
}

func (f *fence) do(write func() error) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return ErrTermEnded
	}
	return write()
}

// wrap guards every write of c (the cache-backed reads stay as they are).
func (f *fence) wrap(c client.WithWatch) client.Client {
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return f.do(func() error { return c.Create(ctx, obj, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return f.do(func() error { return c.Delete(ctx, obj, opts...) })
		},
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			return f.do(func() error { return c.DeleteAllOf(ctx, obj, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return f.do(func() error { return c.Update(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return f.do(func() error { return c.Patch(ctx, obj, patch, opts...) })
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			return f.do(func() error { return c.Apply(ctx, obj, opts...) })
		},
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			return f.do(func() error { return c.SubResource(sub).Create(ctx, obj, subObj, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return f.do(func() error { return c.SubResource(sub).Update(ctx, obj, opts...) })
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return f.do(func() error { return c.SubResource(sub).Patch(ctx, obj, patch, opts...) })
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			return f.do(func() error { return c.SubResource(sub).Apply(ctx, obj, opts...) })
		},
	})
}

// lockEvents gives the lock an event recorder of the old events API, which
// is the one client-go's leader election writes.
type lockEvents struct{ b record.EventBroadcaster }

func (l lockEvents) GetEventRecorderFor(name string) record.EventRecorder {
	return l.b.NewRecorder(clientgoscheme.Scheme, corev1.EventSource{Component: name})
}

func (l lockEvents) GetEventRecorder(string) recorder.EventRecorder {
	panic("leadership: the leader election lock uses the old events API only")
}

// cachesSynced marks the runner ready while it runs: the manager starts
// runnables that need no lease once its caches synced, and stops them with
// the term.
type cachesSynced struct{ r *Runner }

func (c cachesSynced) Start(ctx context.Context) error {
	c.r.synced.Store(true)
	<-ctx.Done()
	c.r.synced.Store(false)
	return nil
}

func (cachesSynced) NeedLeaderElection() bool { return false }
