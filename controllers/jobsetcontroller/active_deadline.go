package jobsetcontroller

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// Under the JobSetActiveDeadlineSeconds feature gate, spec.activeDeadlineSeconds
// bounds how long a JobSet's execution may stay active, as batch/v1 Jobs'
// field of the name does, counted from status.startTime. The time counts
// the execution, not the Pods: an in-place group restart and the restart
// of one Job keep it running, a full restart (every Job recreated) starts
// it again, and a suspension stops it (startTime is cleared, and set again
// at the resume).
//
// A JobSet whose success policy is met is never failed by its deadline;
// an expired one fails rather than restarting by its failure policy.

// executionStart is when the execution this reconcile runs started, before
// any full restart it decides: nil while the JobSet is suspended, now when
// it starts running (its first run, a resume), else what is stored. now
// is to the second, as the status stores it, so that a stored startTime
// equals the one decided again from it.
func executionStart(js *jobset.JobSet, now time.Time) *metav1.Time {
	switch {
	case ptr.Deref(js.Spec.Suspend, false):
		return nil
	case js.Status.StartTime == nil || resuming(js):
		return ptr.To(metav1.NewTime(now).Rfc3339Copy())
	}
	return js.Status.StartTime
}

// deadlineLeft is how long the execution started at start may stay active;
// ok is false when nothing bounds it (no deadline, or not running).
func deadlineLeft(js *jobset.JobSet, start *metav1.Time, now time.Time) (left time.Duration, ok bool) {
	limit := js.Spec.ActiveDeadlineSeconds
	if limit == nil || start == nil {
		return 0, false
	}
	return start.Add(time.Duration(*limit) * time.Second).Sub(now), true
}

// pastDeadline: the execution started at start has been active for the
// whole of its deadline, and the success policy, which comes first, is
// not met.
func pastDeadline(js *jobset.JobSet, start *metav1.Time, now time.Time, children childJobs) bool {
	left, ok := deadlineLeft(js, start, now)
	return ok && left <= 0 && !successPolicyMet(js, children.successful)
}

// deadlineDecision fails the JobSet for its active deadline; its active
// Jobs are deleted once the failure is stored, as those of any failed
// JobSet.
func deadlineDecision(js *jobset.JobSet) decision {
	return failDecision(jobset.ReasonDeadlineExceeded, "the JobSet was active longer than its activeDeadlineSeconds (%ds)",
		ptr.Deref(js.Spec.ActiveDeadlineSeconds, 0))
}

// startAfter is the startTime to store once the decision is applied: a full
// restart starts a new execution, unless the JobSet is suspended (start
// nil), whose new Jobs start only at the resume.
func startAfter(start *metav1.Time, d decision, now time.Time) *metav1.Time {
	if d.kind == restartJobSet && start != nil {
		return ptr.To(metav1.NewTime(now).Rfc3339Copy())
	}
	return start
}
