package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// staticClass is the StorageClass name of the PersistentVolumes the spec
// provides by hand (the local cluster has no provisioner).
const staticClass = "e2e-static"

var _ = Describe("Shared volumes", func() {
	var ns string
	BeforeEach(func(ctx context.Context) { ns = testNamespace(ctx) })

	It("mounts the volumeClaimPolicies claims in every Pod, and on deletion the garbage collector takes the Delete claim and leaves the Retain one", func(ctx context.Context) {
		js := wrappers.MakeJobSet("shared", ns).
			VolumeClaimPolicy("", "dataset").
			VolumeClaimPolicy(jobset.RetentionPolicyRetain, "checkpoints").
			ReplicatedJob(workerReplicatedJob("workers").Pods(2).MountVolumes("dataset", "checkpoints").Obj()).Obj()
		for i := range js.Spec.VolumeClaimPolicies {
			for j := range js.Spec.VolumeClaimPolicies[i].Templates {
				template := &js.Spec.VolumeClaimPolicies[i].Templates[j]
				template.Spec.StorageClassName = ptr.To(staticClass)
				provideVolume(ctx, ns, jobset.VolumeClaimName(template.Name, js.Name))
			}
		}
		Expect(k8sClient.Create(ctx, js)).To(Succeed())

		By("both Pods run with both claims bound and mounted")
		waitForSyncedWorkers(ctx, js, 2)
		for _, name := range []string{"dataset-shared", "checkpoints-shared"} {
			var claim corev1.PersistentVolumeClaim
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &claim)).To(Succeed())
			Expect(claim.Status.Phase).To(Equal(corev1.ClaimBound), "claim %s", name)
		}

		By("deleting the JobSet")
		Expect(k8sClient.Delete(ctx, js, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
		Eventually(func() bool {
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "dataset-shared"}, &corev1.PersistentVolumeClaim{})
			return apierrors.IsNotFound(err)
		}).Should(BeTrue(), "whenDeleted Delete: the claim goes with the JobSet")
		var kept corev1.PersistentVolumeClaim
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "checkpoints-shared"}, &kept)).To(Succeed())
		Expect(kept.DeletionTimestamp).To(BeNil(), "whenDeleted Retain: the claim stays")
	})
})

// provideVolume creates a hostPath PersistentVolume bound in advance to the
// claim ns/claim, and deletes it after the spec.
func provideVolume(ctx context.Context, ns, claim string) {
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + claim},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              staticClass,
			ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: claim},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
				// Under the local cluster's state directory, which its
				// teardown removes.
				Path: "/tmp/jobset-cluster/volumes/" + ns + "/" + claim,
				Type: ptr.To(corev1.HostPathDirectoryOrCreate),
			}},
		},
	}
	Expect(k8sClient.Create(ctx, pv)).To(Succeed())
	DeferCleanup(func(ctx context.Context) {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, pv))).To(Succeed())
	})
}
