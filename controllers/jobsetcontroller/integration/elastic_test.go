package integration

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// The suite's controller runs with the ElasticJobSet feature gate on (and
// no webhook: the specs change the spec as the webhook admits it).
var _ = Describe("ElasticJobSet", func() {
	It("scales the running Jobs to a replicatedJob's new parallelism and completions, keeping them", func() {
		js := create(wrappers.MakeJobSet("elastic", ns).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(2).Obj()).Obj())
		jobs := eventuallyJobs(ctx, js, "0", "elastic-workers-0", "elastic-workers-1")

		Eventually(func() error {
			fresh := fetch(ctx, js)
			spec := &fresh.Spec.ReplicatedJobs[0].Template.Spec
			spec.Parallelism, spec.Completions = ptr.To[int32](4), ptr.To[int32](4)
			return k8sClient.Update(ctx, fresh)
		}).Should(Succeed())

		Eventually(func(g Gomega) {
			now := childJobs(ctx, js)
			g.Expect(now).To(HaveLen(2))
			for i, job := range now {
				g.Expect(job.UID).To(Equal(jobs[i].UID), "Job %s was replaced, not scaled", job.Name)
				g.Expect(job.Spec.Parallelism).To(HaveValue(BeEquivalentTo(4)), job.Name)
				g.Expect(job.Spec.Completions).To(HaveValue(BeEquivalentTo(4)), job.Name)
			}
		}).Should(Succeed())
		Expect(fetch(ctx, js).Status.Restarts).To(BeZero())
	})
})
