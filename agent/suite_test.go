package agent_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fastjobset/jobset/agent"
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
