package jobsetcontroller

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// ttlRemaining says what spec.ttlSecondsAfterFinished asks of a finished
// JobSet at now: nothing (ok false: no TTL, or not finished), deletion
// (remaining <= 0), or a look again after remaining. The TTL counts from
// the transition of the Completed or Failed condition.
func ttlRemaining(js *jobset.JobSet, now time.Time) (remaining time.Duration, ok bool) {
	if js.Spec.TTLSecondsAfterFinished == nil {
		return 0, false
	}
	var finishedAt time.Time
	for _, t := range []jobset.JobSetConditionType{jobset.JobSetCompleted, jobset.JobSetFailed} {
		if c := meta.FindStatusCondition(js.Status.Conditions, string(t)); c != nil && c.Status == metav1.ConditionTrue {
			finishedAt = c.LastTransitionTime.Time
		}
	}
	if finishedAt.IsZero() {
		return 0, false
	}
	ttl := time.Duration(*js.Spec.TTLSecondsAfterFinished) * time.Second
	return finishedAt.Add(ttl).Sub(now), true
}
