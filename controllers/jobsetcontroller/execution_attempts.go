package jobsetcontroller

import (
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// Under the ExecutionAttemptsTracking feature gate, status.executionAttempts
// counts a JobSet's executions: 0 for the first, one more for each full
// restart and each resume from suspension. Every Job carries the count of
// the execution it runs in (ExecutionAttemptsKey, on the Job and its Pod
// template), so a log line tells which execution wrote it.
//
// The count is decided before any child is written, since the Jobs a
// reconcile creates or resumes carry it, and it is stored in the status
// write that records what it counts: a full restart's (status.restarts one
// more) or a resume's (the Suspended condition turned False). Jobs written
// before a status write that then fails carry the count that the retry,
// deciding again from the same stored status, stores.
//
// An in-place group restart is no new execution: its Pods run on under the
// same Jobs, and a Pod its Job replaces is made from the same template,
// with the same count. Neither is the restart of one Job (RestartJob), nor
// a change of scale (ElasticJobSet).

// executionAttempt is the execution a JobSet runs in once this reconcile's
// resume, if any, is done, before any full restart it decides; started is
// false while the JobSet never ran (created suspended, not resumed yet),
// when nothing is stored. A JobSet that ran before its count was kept (a
// controller upgraded, the gate turned on) starts from status.restarts, so
// that the count is never below it.
func executionAttempt(js *jobset.JobSet) (attempt int32, started bool) {
	stored := js.Status.ExecutionAttempts
	switch {
	case stored == nil:
		return js.Status.Restarts, !ptr.Deref(js.Spec.Suspend, false)
	case resuming(js):
		return *stored + 1, true
	}
	return *stored, true
}

// resuming: spec.suspend was cleared since the status recorded the JobSet
// suspended; this reconcile resumes its Jobs and turns the Suspended
// condition False (setSuspended), once.
func resuming(js *jobset.JobSet) bool {
	return !ptr.Deref(js.Spec.Suspend, false) && meta.IsStatusConditionTrue(js.Status.Conditions, string(jobset.JobSetSuspended))
}

// countExecutions stores the execution count: the attempt the children
// converge on, one more when the decision restarts the JobSet fully.
func (u *statusUpdate) countExecutions(attempt int32, started bool, d decision) {
	if d.kind == restartJobSet {
		attempt, started = attempt+1, true
	}
	if started {
		u.js.Status.ExecutionAttempts = ptr.To(attempt)
	}
}

// stampExecutionAttempt writes the execution attempt on the Job and its Pod
// template (nil: the gate is off, nothing is written).
func stampExecutionAttempt(job *batchv1.Job, attempt *int32) {
	if attempt == nil {
		return
	}
	value := strconv.Itoa(int(*attempt))
	job.Annotations = withAll(job.Annotations, map[string]string{jobset.ExecutionAttemptsKey: value})
	pod := &job.Spec.Template
	pod.Annotations = withAll(pod.Annotations, map[string]string{jobset.ExecutionAttemptsKey: value})
}
