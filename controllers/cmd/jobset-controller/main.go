// Command jobset-controller runs the JobSet controller.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/fastjobset/jobset/api/features"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/api/metricsauth"
	"github.com/fastjobset/jobset/api/scheme"
	"github.com/fastjobset/jobset/api/tlsoptions"
	"github.com/fastjobset/jobset/api/version"
	"github.com/fastjobset/jobset/controllers/agentaccess"
	"github.com/fastjobset/jobset/controllers/jobsetcontroller"
	"github.com/fastjobset/jobset/controllers/leadership"
	"github.com/fastjobset/jobset/controllers/nodeloss"
	"github.com/fastjobset/jobset/controllers/placementcontroller"
)

// Leader election takes a Lease in the controller's namespace (client-go's
// LeaseLock gets, creates and updates it; releasing it on a graceful stop is
// an update) and records its transitions as events of the old API on the
// Lease, in the same namespace: a Role there, not a ClusterRole. With
// --leader-election-namespace set to another namespace, bind the same
// Role there. (The reconcilers' events, in JobSets' namespaces, use the
// events.k8s.io API: jobsetcontroller's markers.)
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=jobset-system,resources=leases,verbs=get;create;update
// +kubebuilder:rbac:groups=core,namespace=jobset-system,resources=events,verbs=create;patch

// options are the command-line flags.
type options struct {
	metricsAddr, probeAddr string
	leaderElect            bool
	leaderElectionNS       string
	// The lease: see leadership's defaults for why these values.
	leaseDuration, renewDeadline, retryPeriod time.Duration
	gatherStallThreshold                      time.Duration
	nodeLossThreshold                         time.Duration
	repeatedFailureLimit                      int
	repeatedFailureWindow                     time.Duration
	qps                                       float64
	burst, concurrency                        int
	// releaseGroupMembers: release every Pod and exit (a rollback's step).
	releaseGroupMembers bool
	gates               features.Gates
	tls                 tlsoptions.Options
}

func main() {
	var o options
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", ":8443", "Address of the Prometheus metrics endpoint (\"0\" disables it).")
	flag.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz endpoints.")
	flag.BoolVar(&o.leaderElect, "leader-elect", false, "Elect a leader, so that only one replica reconciles at a time.")
	flag.StringVar(&o.leaderElectionNS, "leader-election-namespace", "", "Namespace of the leader election Lease (default: the Pod's namespace).")
	flag.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", leadership.DefaultLeaseDuration, "How long a standby waits, after it last saw the lease renewed, before it takes the lease.")
	flag.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", leadership.DefaultRenewDeadline, "How long the leader tries to renew the lease before it stops reconciling (shorter than the lease duration).")
	flag.DurationVar(&o.retryPeriod, "leader-elect-retry-period", leadership.DefaultRetryPeriod, "How often the leader renews and a standby tries to take the lease.")
	flag.Float64Var(&o.qps, "kube-api-qps", 500, "Sustained queries per second to the API server.")
	flag.IntVar(&o.burst, "kube-api-burst", 500, "Burst of queries to the API server.")
	flag.IntVar(&o.concurrency, "concurrency", 10, "JobSets reconciled in parallel.")
	flag.DurationVar(&o.gatherStallThreshold, "gather-stall-threshold", jobsetcontroller.DefaultGatherStallThreshold,
		"How long the Pods of an InPlaceRestart JobSet may take to join the next epoch before the GatherStalled condition names those that have not (0 disables it).")
	flag.BoolVar(&o.releaseGroupMembers, "release-group-members", false,
		"Remove the finalizer "+jobset.GroupMemberFinalizer+" from every Pod, then exit. Run it with the controller stopped, before a rollback or downgrade to a controller that does not remove it (community JobSet): see "+version.Docs("operations.md#downgrade-and-rollback")+".")
	flag.DurationVar(&o.nodeLossThreshold, "node-loss-threshold", jobsetcontroller.DefaultNodeLossThreshold,
		"How long a node's kubelet may leave its Lease unrenewed before the members of in-place groups on it are marked Failed and replaced (0: never). A member's bound is never shorter than its agent's fence time plus the kubelet's renew interval and restart of the Pod: see "+version.Docs("user-guide.md#when-a-node-is-lost")+".")
	flag.IntVar(&o.repeatedFailureLimit, "repeated-failure-limit", jobsetcontroller.DefaultRepeatedFailureLimit,
		"After this many failures in place of the same Pod within --repeated-failure-window, the Pod is replaced on another node instead (0: never).")
	flag.DurationVar(&o.repeatedFailureWindow, "repeated-failure-window", jobsetcontroller.DefaultRepeatedFailureWindow,
		"The window of --repeated-failure-limit.")
	flag.Var(&o.gates, "feature-gates", features.Usage())
	o.tls.BindFlags(flag.CommandLine)
	printVersion := flag.Bool("version", false, "Print the version and exit.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	if *printVersion {
		fmt.Println(version.String("jobset-controller"))
		return
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	if err := o.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "jobset-controller:", err)
		os.Exit(2)
	}
	cfg, err := ctrl.GetConfig()
	switch {
	case err != nil:
	case o.releaseGroupMembers:
		err = releaseGroupMembers(ctrl.SetupSignalHandler(), cfg)
	default:
		err = run(ctrl.SetupSignalHandler(), cfg, o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "jobset-controller:", err)
		os.Exit(1)
	}
}

// run serves probes and metrics for the life of the process and runs the
// controllers: with leader election, in terms that survive API server
// outages and lost leases (package leadership); it returns when ctx ends.
// clientConfig is how the controller talks to the API server: at its own
// rate limits, and without gzip. Like kube-controller-manager and
// kube-scheduler, the controller runs next to the API servers, where
// compressing its lists and watch-lists of thousands of Pods costs both
// ends CPU (a tenth of the controller's during a group restart of 5000
// Pods) to save bandwidth nobody is short of.
func clientConfig(cfg *rest.Config, o options) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = float32(o.qps), o.burst
	cfg.DisableCompression = true
	return cfg
}

func run(ctx context.Context, cfg *rest.Config, o options) error {
	s, err := scheme.New()
	if err != nil {
		return err
	}
	cfg = clientConfig(cfg, o)

	cacheOptions := jobsetcontroller.CacheOptions()
	maps.Copy(cacheOptions.ByObject, agentaccess.CacheObjects())
	mgrOptions := ctrl.Options{
		Scheme: s,
		Cache:  cacheOptions,
		// The process serves these across terms.
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	}
	// The nodes' silence outlives a term: see nodeloss.Tracker.NewTerm.
	nodes := nodeloss.NewTracker(clock.RealClock{}, nodeloss.QuietGap)
	setup := func(ctx context.Context, mgr ctrl.Manager) error {
		if err := jobsetcontroller.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
			return fmt.Errorf("registering field indexes: %w", err)
		}
		reconciler := jobsetcontroller.NewReconciler(mgr.GetClient(), mgr.GetEventRecorder("jobset-controller"),
			jobsetcontroller.WithGatherStallThreshold(o.gatherStallThreshold), jobsetcontroller.WithNodeLoss(o.nodeLossThreshold, nil),
			jobsetcontroller.WithNodeTracker(nodes),
			jobsetcontroller.WithRepeatedFailures(o.repeatedFailureLimit, o.repeatedFailureWindow), jobsetcontroller.WithFeatureGates(o.gates))
		if err := reconciler.SetupWithManager(mgr, o.concurrency); err != nil {
			return fmt.Errorf("setting up the JobSet reconciler: %w", err)
		}
		placementReconciler := placementcontroller.NewReconciler(mgr.GetClient(), mgr.GetEventRecorder("jobset-controller"))
		if err := placementReconciler.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the exclusive placement reconciler: %w", err)
		}
		if err := agentaccess.NewReconciler(mgr.GetClient()).SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the agents' access to their nodes' Leases: %w", err)
		}
		return nil
	}

	ready := healthz.Ping
	var controllers func(context.Context) error
	if o.leaderElect {
		runner, err := leadership.New(cfg, leadership.Config{
			LeaseNamespace: o.leaderElectionNS, LeaseName: leaseName,
			LeaseDuration: o.leaseDuration, RenewDeadline: o.renewDeadline, RetryPeriod: o.retryPeriod,
			Manager: mgrOptions, Setup: setup,
		})
		if err != nil {
			return err
		}
		ready, controllers = runner.Ready, runner.Run
	} else {
		mgr, err := ctrl.NewManager(cfg, mgrOptions)
		if err != nil {
			return fmt.Errorf("building the manager: %w", err)
		}
		if err := setup(ctx, mgr); err != nil {
			return err
		}
		controllers = mgr.Start
	}

	servers, err := startServers(ctx, cfg, o, ready)
	if err != nil {
		return err
	}
	err = controllers(ctx)
	servers.Wait()
	return err
}

// validate checks the flags that have no meaning out of range.
func (o options) validate() error {
	var errs []error
	if o.nodeLossThreshold < 0 {
		errs = append(errs, fmt.Errorf("--node-loss-threshold=%s: must be 0 (never replace the members of a lost node) or a positive duration", o.nodeLossThreshold))
	}
	if o.repeatedFailureLimit < 0 {
		errs = append(errs, fmt.Errorf("--repeated-failure-limit=%d: must be 0 (never replace a Pod off its node) or a positive count", o.repeatedFailureLimit))
	}
	if o.repeatedFailureLimit > 0 && o.repeatedFailureWindow <= 0 {
		errs = append(errs, fmt.Errorf("--repeated-failure-window=%s: must be a positive duration while --repeated-failure-limit is set", o.repeatedFailureWindow))
	}
	if _, err := o.tls.ServerConfig(o.gates); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// releaseGroupMembers lets go of every Pod the controller holds, for a
// rollback (jobsetcontroller.ReleaseGroupMembers).
func releaseGroupMembers(ctx context.Context, cfg *rest.Config) error {
	s, err := scheme.New()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return err
	}
	released, err := jobsetcontroller.ReleaseGroupMembers(ctx, c)
	fmt.Printf("released %d Pods from %s\n", released, jobset.GroupMemberFinalizer)
	return err
}

// The metrics endpoint asks the API server who each scraper is (a
// TokenReview) and whether it may get the non-resource URL /metrics (a
// SubjectAccessReview), as community JobSet's does (package metricsauth):
// a scraper's token must be bound to the ClusterRole jobset-metrics-reader.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// metricsServing serves the metrics over HTTPS, behind authentication and
// authorization.
func metricsServing(addr string, tlsOpts ...func(*tls.Config)) metricsserver.Options {
	return metricsserver.Options{BindAddress: addr, SecureServing: true, FilterProvider: metricsauth.Filter, TLSOpts: tlsOpts}
}

// leaseName is the leader election Lease.
const leaseName = "jobset-controller.jobset.x-k8s.io"

// startServers serves /healthz, /readyz and the metrics until ctx ends.
func startServers(ctx context.Context, cfg *rest.Config, o options, ready healthz.Checker) (*sync.WaitGroup, error) {
	var wg sync.WaitGroup
	if o.metricsAddr != "0" {
		httpClient, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return nil, err
		}
		tlsPolicy, err := o.tls.ServerConfig(o.gates)
		if err != nil {
			return nil, err
		}
		metrics, err := metricsserver.NewServer(metricsServing(o.metricsAddr, tlsPolicy), cfg, httpClient)
		if err != nil {
			return nil, fmt.Errorf("metrics server: %w", err)
		}
		wg.Go(func() {
			if err := metrics.Start(ctx); err != nil {
				ctrl.Log.Error(err, "metrics server")
			}
		})
	}
	if o.probeAddr != "0" {
		listener, err := net.Listen("tcp", o.probeAddr)
		if err != nil {
			return nil, fmt.Errorf("health probes: %w", err)
		}
		mux := http.NewServeMux()
		for path, check := range map[string]healthz.Checker{"/healthz": healthz.Ping, "/readyz": ready} {
			h := http.StripPrefix(path, &healthz.Handler{Checks: map[string]healthz.Checker{path[1:]: check}})
			mux.Handle(path, h)
			mux.Handle(path+"/", h)
		}
		server := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		wg.Go(func() { _ = server.Serve(listener) })
		context.AfterFunc(ctx, func() { _ = server.Close() })
	}
	return &wg, nil
}
