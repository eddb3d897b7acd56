package agent_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/agent"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

var env *framework.Environment

func TestAgent(t *testing.T) {
	RegisterFailHandler(Fail)
	framework.SetGomegaDefaults()
	RunSpecs(t, "Agent against a real apiserver")
}

var _ = BeforeSuite(func() {
	var err error
	env, err = framework.Start()
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// runAgent runs a until its context is cancelled, with the code it returns
// sent on exited when there is room. The spec's cleanup cancels it and
// waits until Run returned, so that no agent still writes to a state
// directory the cleanup removes.
func runAgent(ctx context.Context, a *agent.Agent, exited chan<- int) context.CancelFunc {
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		code := a.Run(runCtx)
		select {
		case exited <- code:
		default:
		}
	}()
	DeferCleanup(func() {
		cancel()
		<-done
	})
	return cancel
}

// setEpochs writes the JobSet's synced and deprecated epochs, as the
// controller would.
func setEpochs(ctx context.Context, c client.Client, js *jobset.JobSet, synced, deprecated int32) {
	Eventually(func() error {
		fresh := &jobset.JobSet{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(js), fresh); err != nil {
			return err
		}
		patch := client.MergeFrom(fresh.DeepCopy())
		fresh.Status.SyncedEpoch, fresh.Status.DeprecatedEpoch = ptr.To(synced), ptr.To(deprecated)
		return c.Status().Patch(ctx, fresh, patch)
	}).Should(Succeed())
}
