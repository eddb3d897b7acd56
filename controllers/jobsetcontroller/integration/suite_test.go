package integration

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/fastjobset/jobset/api/features"
	"github.com/fastjobset/jobset/controllers/jobsetcontroller"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// gatherStallThreshold is the controller's --gather-stall-threshold here.
const gatherStallThreshold = 10 * time.Second

var (
	env         *framework.Environment
	k8sClient   client.Client
	stopManager func()

	// Every spec runs in a namespace of its own.
	ctx context.Context
	ns  string
)

var _ = BeforeEach(func() {
	ctx = context.Background()
	ns = newNamespace(ctx)
})

func TestJobSetController(t *testing.T) {
	RegisterFailHandler(Fail)
	framework.SetGomegaDefaults()
	RunSpecs(t, "JobSet controller on a real apiserver")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	env, err = framework.Start()
	Expect(err).NotTo(HaveOccurred())
	k8sClient = env.Client
	stopManager, err = startController()
	Expect(err).NotTo(HaveOccurred())
})

// suiteGates are the feature gates of the suite's controller: the alpha
// RestartJob, ElasticJobSet, ExecutionAttemptsTracking and
// JobSetActiveDeadlineSeconds on, as a cluster that uses them runs them;
// with them off, only RestartJob's label and the execution-attempt
// annotation on the Jobs, status.executionAttempts and status.startTime
// differ (no spec but the active deadline's sets activeDeadlineSeconds).
var suiteGates = features.Gates{}.With(features.RestartJob, true).With(features.ElasticJobSet, true).
	With(features.ExecutionAttemptsTracking, true).With(features.JobSetActiveDeadlineSeconds, true)

// startController runs the JobSet reconciler in a manager, as the binary
// does, with the suite's gates.
func startController() (stop func(), err error) {
	return startControllerWith(suiteGates)
}

// startControllerWith runs it with the given gates.
func startControllerWith(gates features.Gates) (stop func(), err error) {
	return env.StartManager(jobsetcontroller.CacheOptions(), func(mgr ctrl.Manager) error {
		if err := jobsetcontroller.SetupIndexes(context.Background(), mgr.GetFieldIndexer()); err != nil {
			return err
		}
		// Far above any spec's own gathers, short enough to wait for.
		return jobsetcontroller.NewReconciler(mgr.GetClient(), mgr.GetEventRecorder("jobset-controller"),
			jobsetcontroller.WithGatherStallThreshold(gatherStallThreshold), jobsetcontroller.WithNodeLoss(time.Second, nil),
			jobsetcontroller.WithFeatureGates(gates)).SetupWithManager(mgr, 4)
	})
}

// stopController stops the suite's controller for the rest of the spec, or
// until restartController. The controller is shared by every spec: whether
// the spec passes or fails in between, its cleanup starts a new one, so
// that a failure does not leave the later specs without a controller.
func stopController() {
	GinkgoHelper()
	stopManager()
	stopManager = nil
	DeferCleanup(func() {
		if stopManager == nil {
			restartController()
		}
	})
}

// restartController starts a new controller after stopController.
func restartController() {
	GinkgoHelper()
	var err error
	stopManager, err = startController()
	Expect(err).NotTo(HaveOccurred())
}

var _ = AfterSuite(func() {
	if stopManager != nil {
		stopManager()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
