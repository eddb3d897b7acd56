package command_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fastjobset/jobset/tools/testing/framework"
)

var env *framework.Environment

func TestCommand(t *testing.T) {
	RegisterFailHandler(Fail)
	framework.SetGomegaDefaults()
	RunSpecs(t, "kubectl jobset against a real apiserver")
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
