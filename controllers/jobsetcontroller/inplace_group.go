package jobsetcontroller

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// The in-place group is the set of replicatedJobs whose Pods run the agent.
// Others (an initializer the group waits for to Complete, a launcher that
// waits for the group to be Ready; the webhook admits only shapes that
// cannot deadlock) are ordinary Jobs: the epoch protocol neither expects
// nor counts their Pods, and their failures go to the failure policy.

// inPlaceGroup returns the replicatedJobs of the in-place group and their
// names.
func inPlaceGroup(js *jobset.JobSet) ([]jobset.ReplicatedJob, sets.Set[string]) {
	var members []jobset.ReplicatedJob
	names := sets.New[string]()
	for _, rj := range js.Spec.ReplicatedJobs {
		if sidecar.Index(rj.Template.Spec.Template.Spec) >= 0 {
			members = append(members, rj)
			names.Insert(rj.Name)
		}
	}
	return members, names
}

// groupChildren keeps the Pods and Jobs of the in-place group's
// replicatedJobs.
func groupChildren(js *jobset.JobSet, pods []*corev1.Pod, jobs []*batchv1.Job) ([]*corev1.Pod, []*batchv1.Job) {
	_, names := inPlaceGroup(js)
	groupPods := make([]*corev1.Pod, 0, len(pods))
	for _, pod := range pods {
		if names.Has(pod.Labels[jobset.ReplicatedJobNameKey]) {
			groupPods = append(groupPods, pod)
		}
	}
	var groupJobs []*batchv1.Job
	for _, job := range jobs {
		if names.Has(job.Labels[jobset.ReplicatedJobNameKey]) {
			groupJobs = append(groupJobs, job)
		}
	}
	return groupPods, groupJobs
}
