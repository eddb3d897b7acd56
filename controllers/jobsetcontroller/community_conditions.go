package jobsetcontroller

import (
	"slices"

	batchv1 "k8s.io/api/batch/v1"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// The conditions community JobSet defines carry its reasons and messages
// word for word, because clients read them (Kueue copies the Completed and
// Failed messages into its Workloads, Kubeflow Trainer into its TrainJobs).
// A decision's own message, with our detail, goes into the event and the
// log; the condition gets the community wording worked out here.

// withCommunityWording sets the condition wording of a decision of the
// failure policy: the first failed Job's name, and for a restart the rule
// that matched.
func withCommunityWording(js *jobset.JobSet, failed []*batchv1.Job, d decision) decision {
	if len(failed) == 0 || (d.kind != failJobSet && d.kind != restartJobSet) {
		return d
	}
	first := firstFailedJob(failed)
	if d.kind == failJobSet {
		d.conditionMessage = jobset.WithFirstFailedJob(failedMessage(d.reason), first.Name)
		return d
	}
	var rule *jobset.FailurePolicyRule
	if js.Spec.FailurePolicy != nil {
		rule = firstMatchingRule(js.Spec.FailurePolicy.Rules, first)
	}
	d.conditionReason, d.conditionMessage = jobset.ReasonDefaultFailurePolicy, jobset.MessageRestartJobSet
	if rule != nil {
		d.conditionReason = jobset.ReasonFailurePolicyRulePrefix + rule.Name
		if rule.Action == jobset.RestartJobSetAndIgnoreMaxRestarts {
			d.conditionMessage = jobset.MessageRestartJobSetAndIgnoreMaxRestarts
		}
	}
	d.conditionMessage = jobset.WithFirstFailedJob(d.conditionMessage, first.Name)
	return d
}

// firstFailedJob is the Job that failed first, the one the failure policy
// looks at.
func firstFailedJob(failed []*batchv1.Job) *batchv1.Job {
	return slices.MinFunc(failed, func(a, b *batchv1.Job) int {
		return failureTime(a).Compare(failureTime(b).Time)
	})
}

// failedMessage is the Failed condition's message for a reason, without
// the failed Job (the in-place restart budget names none, as in community
// JobSet, whose in-place check looks at Pods).
func failedMessage(reason string) string {
	switch reason {
	case jobset.ReasonFailedJobs:
		return jobset.MessageFailedJobs
	case jobset.ReasonFailJobSetAction:
		return jobset.MessageFailJobSetAction
	case jobset.ReasonReachedMaxRestarts:
		return jobset.MessageReachedMaxRestarts
	}
	return ""
}

// terminalMessage is the message of the Completed or Failed condition a
// decision sets.
func (d decision) terminalMessage() string {
	switch {
	case d.conditionMessage != "":
		return d.conditionMessage
	case d.kind == completeJobSet:
		return jobset.MessageAllJobsCompleted
	case failedMessage(d.reason) != "":
		return failedMessage(d.reason)
	}
	return d.message
}

// allJobsReady: the ready and succeeded Jobs of the status's
// replicatedJobsStatus add up to every replica.
func allJobsReady(js *jobset.JobSet) bool {
	var want, ready int32
	for _, rj := range js.Spec.ReplicatedJobs {
		want += rj.Replicas
	}
	for _, s := range js.Status.ReplicatedJobsStatus {
		ready += s.Ready + s.Succeeded
	}
	return ready == want
}
