package crd_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/tools/testing/framework"
)

var (
	env       *framework.Environment
	k8sClient client.Client
)

func TestCRD(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "JobSet CRD on a real apiserver")
}

var _ = BeforeSuite(func() {
	var err error
	env, err = framework.Start()
	Expect(err).NotTo(HaveOccurred())
	k8sClient = env.Client
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
