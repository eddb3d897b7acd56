package jobsetcontroller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

func TestVolumeClaims(t *testing.T) {
	// claim is "name owned-by-the-JobSet".
	type claim struct {
		Name  string
		Owned bool
	}
	cases := map[string]struct {
		js   *jobset.JobSet
		want []claim
	}{
		"no policies": {js: wrappers.MakeJobSet("train", "ns").Obj()},
		"the default deletes the claims with the JobSet": {
			js:   wrappers.MakeJobSet("train", "ns").VolumeClaimPolicy("", "data", "cache").Obj(),
			want: []claim{{"data-train", true}, {"cache-train", true}},
		},
		"whenDeleted Delete and Retain": {
			js: wrappers.MakeJobSet("train", "ns").
				VolumeClaimPolicy(jobset.RetentionPolicyDelete, "data").
				VolumeClaimPolicy(jobset.RetentionPolicyRetain, "checkpoints").Obj(),
			want: []claim{{"data-train", true}, {"checkpoints-train", false}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []claim
			for _, c := range volumeClaims(tc.js) {
				if c.Namespace != "ns" || c.Labels[jobset.JobSetNameKey] != "train" {
					t.Errorf("claim %s: namespace %q, labels %v; want the JobSet's namespace and name label", c.Name, c.Namespace, c.Labels)
				}
				if c.Spec.Resources.Requests.Storage().String() != "1Gi" {
					t.Errorf("claim %s: spec not copied from its template: %+v", c.Name, c.Spec)
				}
				got = append(got, claim{c.Name, len(c.OwnerReferences) == 1 && c.OwnerReferences[0].Kind == "JobSet"})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("claims (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMountVolumeClaims(t *testing.T) {
	js := wrappers.MakeJobSet("train", "ns").
		VolumeClaimPolicy("", "data").VolumeClaimPolicy(jobset.RetentionPolicyRetain, "checkpoints").Obj()
	// volumes lists "volume -> claim".
	volumes := func(pod *corev1.PodSpec) []string {
		var out []string
		for _, v := range pod.Volumes {
			out = append(out, v.Name+" -> "+v.PersistentVolumeClaim.ClaimName)
		}
		return out
	}
	cases := map[string]struct {
		rj   jobset.ReplicatedJob
		want []string
	}{
		"mounts nothing":   {rj: wrappers.MakeReplicatedJob("evaluator").Obj()},
		"mounts one claim": {rj: wrappers.MakeReplicatedJob("init").MountVolumes("data").Obj(), want: []string{"data -> data-train"}},
		"mounts both, an init container one of them": {
			rj: func() jobset.ReplicatedJob {
				rj := wrappers.MakeReplicatedJob("workers").MountVolumes("data").Obj()
				pod := &rj.Template.Spec.Template.Spec
				pod.InitContainers = []corev1.Container{{Name: "restore", VolumeMounts: []corev1.VolumeMount{{Name: "checkpoints", MountPath: "/c"}}}}
				return rj
			}(),
			want: []string{"data -> data-train", "checkpoints -> checkpoints-train"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := tc.rj.Template.Spec.Template.Spec.DeepCopy()
			mountVolumeClaims(js, pod)
			if diff := cmp.Diff(tc.want, volumes(pod)); diff != "" {
				t.Errorf("volumes (-want +got):\n%s", diff)
			}
		})
	}
}
