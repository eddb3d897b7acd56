package crd_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

var _ = Describe("JobSet CRD", func() {
	ctx := context.Background()
	var ns string
	BeforeEach(func() { ns = framework.TestNamespace(ctx, k8sClient, "crd") })

	inPlaceJobSet := func(name string) *jobset.JobSet {
		return wrappers.MakeJobSet(name, ns).
			RestartStrategy(jobset.InPlaceRestart).
			MaxRestarts(3).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(2).
				PodLabels(map[string]string{"app": "trainer"}).Obj()).
			Obj()
	}

	It("is installed with the epoch fields and the three restart strategies", func() {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: "jobsets.jobset.x-k8s.io"}, crd)).To(Succeed())
		Expect(crd.Spec.Versions).To(HaveLen(1))
		version := crd.Spec.Versions[0]
		Expect(version.Name).To(Equal("v1alpha2"))
		Expect(version.Subresources.Status).NotTo(BeNil())

		status := version.Schema.OpenAPIV3Schema.Properties["status"]
		for _, field := range []string{"syncedEpoch", "deprecatedEpoch"} {
			Expect(status.Properties).To(HaveKey(field))
			Expect(status.Properties[field].Minimum).To(HaveValue(BeEquivalentTo(0)), field)
		}
		strategy := version.Schema.OpenAPIV3Schema.Properties["spec"].Properties["failurePolicy"].Properties["restartStrategy"]
		var values []string
		for _, v := range strategy.Enum {
			values = append(values, string(v.Raw))
		}
		Expect(values).To(ConsistOf(`"Recreate"`, `"BlockingRecreate"`, `"InPlaceRestart"`))

		var columns []string
		for _, c := range version.AdditionalPrinterColumns {
			columns = append(columns, c.Name)
		}
		Expect(columns).To(ContainElements("Restarts", "SyncedEpoch", "Completed", "Suspended", "Age"))
	})

	It("round-trips an InPlaceRestart JobSet with its defaults applied", func() {
		js := inPlaceJobSet("round-trip")
		Expect(k8sClient.Create(ctx, js)).To(Succeed())

		got := &jobset.JobSet{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), got)).To(Succeed())
		Expect(got.Spec.FailurePolicy.RestartStrategy).To(Equal(jobset.InPlaceRestart))
		Expect(got.Spec.FailurePolicy.MaxRestarts).To(BeEquivalentTo(3))
		Expect(got.Spec.ReplicatedJobs).To(HaveLen(1))
		rj := got.Spec.ReplicatedJobs[0]
		Expect(rj.GroupName).To(Equal("default"), "groupName defaults to default")
		Expect(rj.Replicas).To(BeEquivalentTo(2))
		Expect(rj.Template.Spec.Template.Labels).To(HaveKeyWithValue("app", "trainer"),
			"Pod template metadata must survive schema pruning")
		Expect(got.Status.SyncedEpoch).To(BeNil())
		Expect(got.Status.DeprecatedEpoch).To(BeNil())
	})

	It("defaults the restart strategy to Recreate", func() {
		js := wrappers.MakeJobSet("default-strategy", ns).MaxRestarts(1).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		Expect(js.Spec.FailurePolicy.RestartStrategy).To(Equal(jobset.Recreate))
	})

	It("writes syncedEpoch and deprecatedEpoch through the status subresource only", func() {
		js := inPlaceJobSet("epochs")
		Expect(k8sClient.Create(ctx, js)).To(Succeed())

		patch := client.MergeFrom(js.DeepCopy())
		js.Status.SyncedEpoch = ptr.To[int32](2)
		js.Status.DeprecatedEpoch = ptr.To[int32](1)
		Expect(k8sClient.Status().Patch(ctx, js, patch)).To(Succeed())

		got := &jobset.JobSet{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), got)).To(Succeed())
		Expect(got.Status.SyncedEpoch).To(HaveValue(BeEquivalentTo(2)))
		Expect(got.Status.DeprecatedEpoch).To(HaveValue(BeEquivalentTo(1)))

		By("ignoring status in a write to the main resource")
		mainPatch := client.MergeFrom(got.DeepCopy())
		got.Status.SyncedEpoch = ptr.To[int32](7)
		got.Labels = map[string]string{"touched": "yes"}
		Expect(k8sClient.Patch(ctx, got, mainPatch)).To(Succeed())
		Expect(got.Status.SyncedEpoch).To(HaveValue(BeEquivalentTo(2)))
		Expect(got.Labels).To(HaveKeyWithValue("touched", "yes"))
	})

	It("rejects an unknown restart strategy, naming the field and the allowed values", func() {
		js := inPlaceJobSet("bad-strategy")
		js.Spec.FailurePolicy.RestartStrategy = "RestartEverythingNow"
		err := k8sClient.Create(ctx, js)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(And(
			ContainSubstring("spec.failurePolicy.restartStrategy"),
			ContainSubstring("Unsupported value"),
			ContainSubstring(`"InPlaceRestart"`),
		))
	})

	It("rejects a negative epoch, naming the field", func() {
		js := inPlaceJobSet("negative-epoch")
		Expect(k8sClient.Create(ctx, js)).To(Succeed())

		patch := client.MergeFrom(js.DeepCopy())
		js.Status.SyncedEpoch = ptr.To[int32](-1)
		err := k8sClient.Status().Patch(ctx, js, patch)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(And(
			ContainSubstring("status.syncedEpoch"),
			ContainSubstring("greater than or equal to 0"),
		))
	})

	It("keeps epochs monotonic and deprecatedEpoch <= syncedEpoch", func() {
		js := inPlaceJobSet("monotonic")
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		setEpochs := func(synced, deprecated int32) error {
			patch := client.MergeFrom(js.DeepCopy())
			js.Status.SyncedEpoch = ptr.To(synced)
			js.Status.DeprecatedEpoch = ptr.To(deprecated)
			return k8sClient.Status().Patch(ctx, js, patch)
		}
		Expect(setEpochs(3, 2)).To(Succeed())

		err := setEpochs(2, 2)
		Expect(err).To(MatchError(ContainSubstring("status.syncedEpoch must not decrease")))
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), js)).To(Succeed())

		err = setEpochs(3, 1)
		Expect(err).To(MatchError(ContainSubstring("status.deprecatedEpoch must not decrease")))
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), js)).To(Succeed())

		err = setEpochs(3, 4)
		Expect(err).To(MatchError(ContainSubstring("status.deprecatedEpoch must not exceed status.syncedEpoch")))
	})

	It("keeps the failure policy immutable", func() {
		js := inPlaceJobSet("immutable")
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		patch := client.MergeFrom(js.DeepCopy())
		js.Spec.FailurePolicy.MaxRestarts = 10
		Expect(k8sClient.Patch(ctx, js, patch)).To(MatchError(ContainSubstring("failurePolicy is immutable")))
	})
})
