package jobsetcontroller

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// constructedJobs are the JobSet's Jobs as the controller makes them for
// an attempt, suspended or not, stamped with the execution attempt
// (nil: none), each changed by the mutate at its index.
func constructedJobs(js *jobset.JobSet, suspended bool, attempt *int32, mutate ...func(*batchv1.Job)) []batchv1.Job {
	var jobs []batchv1.Job
	for i, at := range desiredJobs(js) {
		at.executionAttempt = attempt
		job := constructJob(js, at)
		job.UID = types.UID(job.Name)
		job.Spec.Suspend = ptr.To(suspended)
		if i < len(mutate) && mutate[i] != nil {
			mutate[i](job)
		}
		jobs = append(jobs, *job)
	}
	return jobs
}

// jobFailed marks a Job failed, as the Job controller does past its
// backoff limit.
func jobFailed(j *batchv1.Job) {
	j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}
}

// membersAtOne are the Jobs' Pods, one each, running on node-a as members
// of an in-place group at epoch 1, each changed by the mutate at its index.
func membersAtOne(jobs []batchv1.Job, mutate ...func(*corev1.Pod)) []corev1.Pod {
	var pods []corev1.Pod
	for i, job := range jobs {
		pod := corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: job.Name + "-0", UID: "pod-" + job.UID,
				Labels:      withLabel(job.Spec.Template.Labels, batchv1.JobNameLabel, job.Name),
				Annotations: withLabel(job.Spec.Template.Annotations, jobset.EpochKey, "1"),
				Finalizers:  []string{jobset.GroupMemberFinalizer}},
			Spec:   corev1.PodSpec{NodeName: "node-a", InitContainers: job.Spec.Template.Spec.InitContainers},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		}
		pod.Annotations[batchv1.JobCompletionIndexAnnotation] = "0"
		if i < len(mutate) && mutate[i] != nil {
			mutate[i](&pod)
		}
		pods = append(pods, pod)
	}
	return pods
}

// podFailed marks a Pod failed.
func podFailed(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }
