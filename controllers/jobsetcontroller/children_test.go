package jobsetcontroller

import (
	"slices"
	"testing"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// An epoch copied into a Pod template (from a live Pod,
// say) would make every new Pod born "at" that epoch, before its agent
// joined. Only the agent writes it; the child Job's Pod template never
// carries it, whatever the JobSet's template says.
func TestConstructJobDropsTheTemplatesEpoch(t *testing.T) {
	js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").InPlaceReady().Obj()).Obj()
	js.Spec.ReplicatedJobs[0].Template.Spec.Template.Annotations = map[string]string{jobset.EpochKey: "1", "team": "a"}

	job := constructJob(js, desiredJobs(js)[0])
	got := job.Spec.Template.Annotations
	if v, ok := got[jobset.EpochKey]; ok {
		t.Errorf("the Job's Pod template carries %s=%q: its Pods would be born at that epoch", jobset.EpochKey, v)
	}
	if got["team"] != "a" || got[jobset.JobSetNameKey] != "js" {
		t.Errorf("the other annotations must stay: %v", got)
	}
	if _, ok := js.Spec.ReplicatedJobs[0].Template.Spec.Template.Annotations[jobset.EpochKey]; !ok {
		t.Error("constructJob must not change the JobSet's own template")
	}
}

// The Job controller copies its Pod template's finalizers to every Pod it
// creates, whoever then runs the JobSet: a Job's template that carried the
// group-member finalizer would hold every Pod it creates after a rollback to
// a controller that never releases it. The controller holds its Pods itself
// (adoptions).
func TestConstructJobLeavesTheGroupMemberFinalizerOut(t *testing.T) {
	js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").InPlaceReady().Obj()).Obj()
	for _, at := range desiredJobs(js) {
		if got := constructJob(js, at).Spec.Template.Finalizers; slices.Contains(got, jobset.GroupMemberFinalizer) {
			t.Errorf("%s: Pod template finalizers %v carry %s", at.replicatedJob.Name, got, jobset.GroupMemberFinalizer)
		}
	}
}
