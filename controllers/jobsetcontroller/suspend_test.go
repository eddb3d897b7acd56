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

	got := resumedJob(js, job, nil)
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

	if got := resumedJob(js, job, nil).Spec.Template.Annotations; got[jobset.EpochKey] != "" {
		t.Errorf("the resumed Job's Pod template carries epoch %q: its new Pods would look joined before their agents start", got[jobset.EpochKey])
	}
}

// The execution a resume starts replaces the count the suspended Job was
// made with, and one the JobSet's own template carries (a manifest copied
// from a running JobSet's Pod).
func TestResumedJobCarriesTheResumedExecution(t *testing.T) {
	js := wrappers.MakeJobSet("js", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
	js.Spec.ReplicatedJobs[0].Template.Spec.Template.Annotations = map[string]string{jobset.ExecutionAttemptsKey: "7"}
	at := desiredJobs(js)[0]
	at.executionAttempt = ptr.To[int32](1)
	job := constructJob(js, at)
	job.Spec.Suspend = ptr.To(true)

	got := resumedJob(js, job, ptr.To[int32](2))
	want := map[string]string{"Job": "2", "Pod template": "2"}
	if diff := cmp.Diff(want, map[string]string{
		"Job": got.Annotations[jobset.ExecutionAttemptsKey], "Pod template": got.Spec.Template.Annotations[jobset.ExecutionAttemptsKey],
	}); diff != "" {
		t.Errorf("execution attempt (-want +got):\n%s", diff)
	}
	if job.Annotations[jobset.ExecutionAttemptsKey] != "1" {
		t.Error("resumedJob modified its input")
	}
}
