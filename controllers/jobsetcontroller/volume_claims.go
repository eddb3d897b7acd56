package jobsetcontroller

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// volumeClaims returns the shared PersistentVolumeClaims js's
// volumeClaimPolicies declare, one per template, named <template>-<jobset>
// and labelled with the JobSet's name. Claims deleted with the JobSet
// (whenDeleted Delete, the default) are owned by it, so that the garbage
// collector deletes them after it; retained claims have no owner and stay,
// for a later JobSet of the same name to mount again.
func volumeClaims(js *jobset.JobSet) []*corev1.PersistentVolumeClaim {
	var claims []*corev1.PersistentVolumeClaim
	for _, policy := range js.Spec.VolumeClaimPolicies {
		for _, template := range policy.Templates {
			claim := &corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{
					Name:        jobset.VolumeClaimName(template.Name, js.Name),
					Namespace:   js.Namespace,
					Labels:      withAll(maps.Clone(template.Labels), map[string]string{jobset.JobSetNameKey: js.Name}),
					Annotations: maps.Clone(template.Annotations),
				},
				Spec: *template.Spec.DeepCopy(),
			}
			if !jobset.RetainsVolumeClaims(policy) {
				claim.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(js, jobset.GroupVersion.WithKind("JobSet"))}
			}
			claims = append(claims, claim)
		}
	}
	return claims
}

// mountVolumeClaims gives pod a volume for every shared claim that one of
// its containers mounts: the volume has the template's name (what the
// volumeMounts say) and points at the JobSet's claim. Pods of
// replicatedJobs that do not mount a claim do not get it, so they do not
// wait for it to bind.
func mountVolumeClaims(js *jobset.JobSet, pod *corev1.PodSpec) {
	for _, policy := range js.Spec.VolumeClaimPolicies {
		for _, template := range policy.Templates {
			if !jobset.MountsVolume(pod, template.Name) {
				continue
			}
			pod.Volumes = append(pod.Volumes, corev1.Volume{
				Name: template.Name,
				VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
					ClaimName: jobset.VolumeClaimName(template.Name, js.Name),
				}},
			})
		}
	}
}
