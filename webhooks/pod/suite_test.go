package pod_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/placementcontroller"
	"github.com/fastjobset/jobset/tools/testing/framework"
	podwebhook "github.com/fastjobset/jobset/webhooks/pod"
)

var (
	env         *framework.Environment
	k8sClient   client.Client
	stopManager func()
)

func TestExclusivePlacement(t *testing.T) {
	RegisterFailHandler(Fail)
	framework.SetGomegaDefaults()
	RunSpecs(t, "Exclusive placement: Pod webhooks over TLS and the placement reconciler on a real apiserver")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	env, err = framework.Start(framework.WithWebhooks())
	Expect(err).NotTo(HaveOccurred())
	k8sClient = env.Client
	// As deployed: the webhook binary serves the Pod webhooks, the
	// controller binary runs the reconciler; both cache JobSet Pods only.
	cacheOptions := cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}: {Label: jobset.ChildrenSelector()},
	}}
	stopManager, err = env.StartManager(cacheOptions, func(mgr ctrl.Manager) error {
		if err := podwebhook.SetupWithManager(mgr); err != nil {
			return err
		}
		return placementcontroller.NewReconciler(mgr.GetClient(), mgr.GetEventRecorder("jobset-controller")).SetupWithManager(mgr)
	})
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
