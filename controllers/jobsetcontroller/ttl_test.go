package jobsetcontroller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

func TestTTLRemaining(t *testing.T) {
	finishedAt := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	finished := func(ttl *int32, condition jobset.JobSetConditionType) *jobset.JobSet {
		js := wrappers.MakeJobSet("js", "ns").Obj()
		js.Spec.TTLSecondsAfterFinished = ttl
		if condition != "" {
			js.Status.Conditions = []metav1.Condition{{Type: string(condition), Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(finishedAt)}}
		}
		return js
	}
	cases := map[string]struct {
		js            *jobset.JobSet
		now           time.Time
		wantOK        bool
		wantRemaining time.Duration
	}{
		"no TTL":                      {js: finished(nil, jobset.JobSetCompleted), now: finishedAt.Add(time.Hour)},
		"not finished":                {js: finished(ptr.To[int32](60), ""), now: finishedAt},
		"completed, TTL running":      {js: finished(ptr.To[int32](60), jobset.JobSetCompleted), now: finishedAt.Add(20 * time.Second), wantOK: true, wantRemaining: 40 * time.Second},
		"failed, TTL over":            {js: finished(ptr.To[int32](60), jobset.JobSetFailed), now: finishedAt.Add(61 * time.Second), wantOK: true, wantRemaining: -time.Second},
		"TTL 0: delete once finished": {js: finished(ptr.To[int32](0), jobset.JobSetCompleted), now: finishedAt, wantOK: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			remaining, ok := ttlRemaining(tc.js, tc.now)
			if ok != tc.wantOK || remaining != tc.wantRemaining {
				t.Errorf("ttlRemaining = %s, %v; want %s, %v", remaining, ok, tc.wantRemaining, tc.wantOK)
			}
		})
	}
}
