// Command jobset-controller runs the JobSet controller.
package main

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/fastjobset/jobset/api/scheme"
	"github.com/fastjobset/jobset/controllers/jobsetcontroller"
	"github.com/fastjobset/jobset/controllers/placement"
)

// Leader election takes a Lease and records its transitions as events.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=events,verbs=create;patch

// options are the command-line flags.
type options struct {
	metricsAddr, probeAddr string
	leaderElect            bool
	leaderElectionNS       string
	qps                    float64
	burst, concurrency     int
}

func main() {
	var o options
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", ":8443", "Address of the Prometheus metrics endpoint (\"0\" disables it).")
	flag.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz endpoints.")
	flag.BoolVar(&o.leaderElect, "leader-elect", false, "Elect a leader, so that only one replica reconciles at a time.")
	flag.StringVar(&o.leaderElectionNS, "leader-election-namespace", "", "Namespace of the leader election Lease (default: the Pod's namespace).")
	flag.Float64Var(&o.qps, "kube-api-qps", 500, "Sustained queries per second to the API server.")
	flag.IntVar(&o.burst, "kube-api-burst", 500, "Burst of queries to the API server.")
	flag.IntVar(&o.concurrency, "concurrency", 10, "JobSets reconciled in parallel.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "jobset-controller:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	s, err := scheme.New()
	if err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(o.qps), o.burst

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  s,
		Cache:                   jobsetcontroller.CacheOptions(),
		Metrics:                 metricsserver.Options{BindAddress: o.metricsAddr, SecureServing: o.metricsAddr != "0"},
		HealthProbeBindAddress:  o.probeAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        "jobset-controller.jobset.x-k8s.io",
		LeaderElectionNamespace: o.leaderElectionNS,
	})
	if err != nil {
		return fmt.Errorf("building the manager: %w", err)
	}
	ctx := ctrl.SetupSignalHandler()
	if err := jobsetcontroller.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("registering field indexes: %w", err)
	}
	reconciler := jobsetcontroller.NewReconciler(mgr.GetClient(), mgr.GetEventRecorder("jobset-controller"))
	if err := reconciler.SetupWithManager(mgr, o.concurrency); err != nil {
		return fmt.Errorf("setting up the JobSet reconciler: %w", err)
	}
	placementReconciler := placement.NewReconciler(mgr.GetClient(), mgr.GetEventRecorder("jobset-controller"))
	if err := placementReconciler.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the exclusive placement reconciler: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
