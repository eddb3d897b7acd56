package jobsetcontroller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

func TestResumedJobMergesSchedulingDirectives(t *testing.T) {
	js := wrappers.MakeJobSet("js", "ns").Suspend(false).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").PodLabels(map[string]string{"kueue.x-k8s.io/podset": "workers"}).Obj()).Obj()
	tmpl := &js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
	tmpl.NodeSelector = map[string]string{"cloud.google.com/gke-nodepool": "pool-a"}
	tmpl.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}

	job := constructJob(wrappers.MakeJobSet("js", "ns").Suspend(true).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj(), desiredJobs(js)[0])
	job.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}

	got := resumedJob(js, job)
	if ptr.Deref(got.Spec.Suspend, true) {
		t.Error("the resumed Job is still suspended")
	}
	if got.Spec.Template.Labels["kueue.x-k8s.io/podset"] != "workers" || got.Spec.Template.Labels[jobset.JobSetNameKey] != "js" {
		t.Errorf("labels not merged: %v", got.Spec.Template.Labels)
	}
	if diff := cmp.Diff(tmpl.NodeSelector, got.Spec.Template.Spec.NodeSelector); diff != "" {
		t.Errorf("nodeSelector (-want +got):\n%s", diff)
	}
	if len(got.Spec.Template.Spec.Tolerations) != 1 {
		t.Errorf("tolerations duplicated or lost: %v", got.Spec.Template.Spec.Tolerations)
	}
	if ptr.Deref(job.Spec.Suspend, false) != true {
		t.Error("resumedJob modified its input")
	}
}

func TestResumedJobNeverCarriesAnEpoch(t *testing.T) {
	js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
	js.Spec.ReplicatedJobs[0].Template.Spec.Template.Annotations = map[string]string{jobset.EpochKey: "1"}
	job := constructJob(js, desiredJobs(js)[0])
	job.Spec.Suspend = ptr.To(true)

	if got := resumedJob(js, job).Spec.Template.Annotations; got[jobset.EpochKey] != "" {
		t.Errorf("the resumed Job's Pod template carries epoch %q: its new Pods would look joined before their agents start", got[jobset.EpochKey])
	}
}
