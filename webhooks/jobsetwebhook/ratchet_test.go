package jobsetwebhook

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

func TestUnchangedAt(t *testing.T) {
	base := func() *jobset.JobSet {
		return inPlace().Annotations(map[string]string{"example.com/a.b": "1"}).Obj()
	}
	cases := map[string]struct {
		path   string
		change func(*jobset.JobSet)
		want   bool
	}{
		"a field the update leaves alone": {
			path:   "spec.replicatedJobs[1].template.spec.backoffLimit",
			change: func(js *jobset.JobSet) { js.Spec.Suspend = ptr.To(true) },
			want:   true,
		},
		"a field the update changes": {
			path:   "spec.replicatedJobs[1].template.spec.backoffLimit",
			change: func(js *jobset.JobSet) { *js.Spec.ReplicatedJobs[1].Template.Spec.BackoffLimit = 6 },
		},
		"a parent of a changed field": {
			path:   "spec.replicatedJobs[1]",
			change: func(js *jobset.JobSet) { *js.Spec.ReplicatedJobs[1].Template.Spec.BackoffLimit = 6 },
		},
		"a map key with dots and a slash": {
			path:   "metadata.annotations[example.com/a.b]",
			change: func(js *jobset.JobSet) { js.Annotations["example.com/a.b"] = "2" },
		},
		"a key absent from both": {
			path:   "metadata.annotations[missing]",
			change: func(js *jobset.JobSet) { js.Annotations["other"] = "x" },
			want:   true,
		},
		"a key added": {
			path:   "metadata.annotations[missing]",
			change: func(js *jobset.JobSet) { js.Annotations["missing"] = "" },
		},
		"an index out of range in both": {
			path:   "spec.replicatedJobs[7].name",
			change: func(*jobset.JobSet) {},
			want:   true,
		},
		"a nil pointer in both": {
			path:   "spec.coordinator.jobIndex",
			change: func(*jobset.JobSet) {},
			want:   true,
		},
		"a quantity written differently is the same value": {
			path: "spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.requests[cpu]",
			change: func(js *jobset.JobSet) {
				js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Resources.Requests["cpu"] = resource.MustParse("1000m")
			},
			want: true,
		},
		"a path that does not fit the type counts as changed": {
			path:   "spec.noSuchField",
			change: func(*jobset.JobSet) {},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old := base()
			old.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"cpu": resource.MustParse("1")}
			js := old.DeepCopy()
			tc.change(js)
			if got := unchangedAt(tc.path, js, old); got != tc.want {
				t.Errorf("unchangedAt(%q) = %v, want %v", tc.path, got, tc.want)
			}
		})
	}
}
