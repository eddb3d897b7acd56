package jobsetwebhook_test

import (
	"context"
	"sync"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/features"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/webhooks/jobsetwebhook"
)

var (
	env         *framework.Environment
	k8sClient   client.Client
	warnings    = &warningRecorder{}
	stopManager func()
)

// warningRecorder keeps the admission warnings the apiserver relays.
type warningRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (w *warningRecorder) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := w.seen
	w.seen = nil
	return seen
}

func TestAdmission(t *testing.T) {
	RegisterFailHandler(Fail)
	framework.SetGomegaDefaults()
	RunSpecs(t, "JobSet admission webhooks, served over TLS to a real apiserver")
}

var _ = BeforeSuite(func() {
	var err error
	env, err = framework.Start(framework.WithWebhooks())
	Expect(err).NotTo(HaveOccurred())
	stopManager, err = env.StartManager(ctrl.Options{}.Cache, func(mgr ctrl.Manager) error {
		// The alpha RestartJob, ElasticJobSet and JobSetActiveDeadlineSeconds
		// gates on, as a cluster that uses them runs them; the validation
		// tests cover them off.
		return jobsetwebhook.SetupWithManager(mgr, sidecar.Options{Image: "jobset-agent:test", RestartExitCode: 88},
			features.Gates{}.With(features.RestartJob, true).With(features.ElasticJobSet, true).
				With(features.JobSetActiveDeadlineSeconds, true))
	})
	Expect(err).NotTo(HaveOccurred())
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandlerWithContext = warnings
	k8sClient, err = client.New(cfg, client.Options{Scheme: env.Scheme})
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if stopManager != nil {
		stopManager()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
