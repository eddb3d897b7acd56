package differential

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// stored is a JobSet as the API server returns it after a RestartJob
// restart of index 1, with its UID.
func stored(uid types.UID, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
		"metadata": map[string]any{"name": "js", "namespace": "ns", "uid": string(uid)},
		"status":   status,
	}}
	return u
}

func restartedStatus() map[string]any {
	return map[string]any{
		"restarts":                int64(0),
		"restartsCountTowardsMax": int64(0),
		"conditions": []any{
			map[string]any{"type": "Restarting", "status": "False", "reason": "Restarted", "message": "one wording", "lastTransitionTime": "2026-11-29T23:00:00Z"},
		},
		"replicatedJobsStatus": []any{
			map[string]any{"name": "workers", "ready": int64(2), "active": int64(2), "jobRestarts": []any{int64(0), int64(1)}, "jobRestartsCountTowardsMax": []any{int64(0), int64(1)}},
		},
	}
}

func TestStatus(t *testing.T) {
	got := Status(stored("uid-1", restartedStatus()))
	want := Fields{
		"status.restarts":                                                 "0",
		"status.restartsCountTowardsMax":                                  "0",
		"status.conditions[Restarting].type":                              "Restarting",
		"status.conditions[Restarting].status":                            "False",
		"status.conditions[Restarting].reason":                            "Restarted",
		"status.conditions[Restarting].lastTransitionTime":                ATime,
		"status.replicatedJobsStatus[workers].name":                       "workers",
		"status.replicatedJobsStatus[workers].ready":                      "2",
		"status.replicatedJobsStatus[workers].active":                     "2",
		"status.replicatedJobsStatus[workers].jobRestarts":                "[0,1]",
		"status.replicatedJobsStatus[workers].jobRestartsCountTowardsMax": "[0,1]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Status (-want +got):\n%s", diff)
	}
}

func TestDiff(t *testing.T) {
	community := Status(stored("uid-1", restartedStatus()))
	cases := map[string]struct {
		ours   func(map[string]any)
		ignore []string
		want   []string
	}{
		"the same outcome, other UIDs, times and messages": {
			ours: func(s map[string]any) {
				c := s["conditions"].([]any)[0].(map[string]any)
				c["message"], c["lastTransitionTime"] = "another wording", "2026-11-29T23:59:00Z"
			},
		},
		"another index restarted": {
			ours: func(s map[string]any) {
				rj := s["replicatedJobsStatus"].([]any)[0].(map[string]any)
				rj["jobRestarts"] = []any{int64(1), int64(0)}
			},
			want: []string{`status.replicatedJobsStatus[workers].jobRestarts: community "[0,1]", ours "[1,0]"`},
		},
		"restarts omitted when 0, and a field community lacks": {
			ours: func(s map[string]any) {
				delete(s, "restarts")
				s["inPlaceRestarts"] = int64(0)
			},
			want: []string{
				`status.inPlaceRestarts: community (absent), ours "0"`,
				`status.restarts: community "0", ours (absent)`,
			},
		},
		"a condition's reason and status": {
			ours: func(s map[string]any) {
				c := s["conditions"].([]any)[0].(map[string]any)
				c["reason"], c["status"] = "RestartJobAction", "True"
			},
			want: []string{
				`status.conditions[Restarting].reason: community "Restarted", ours "RestartJobAction"`,
				`status.conditions[Restarting].status: community "False", ours "True"`,
			},
		},
		"a difference the spec expects, ignored by pattern": {
			ours: func(s map[string]any) {
				s["inPlaceRestarts"] = int64(0)
				c := s["conditions"].([]any)[0].(map[string]any)
				c["observedGeneration"] = int64(1)
			},
			ignore: []string{"status.inPlaceRestarts", "status.conditions[*].observedGeneration"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := restartedStatus()
			tc.ours(s)
			got := Diff(community, Status(stored("uid-2", s)), tc.ignore...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Diff (-want +got):\n%s", diff)
			}
		})
	}
}

func job(name, uid, index, jobRestartAttempt string) batchv1.Job {
	return batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid),
			Labels: map[string]string{
				"jobset.sigs.k8s.io/jobset-uid":          "js-uid",
				"jobset.sigs.k8s.io/job-index":           index,
				"jobset.sigs.k8s.io/job-restart-attempt": jobRestartAttempt,
				"batch.kubernetes.io/controller-uid":     uid,
				"app.kubernetes.io/managed-by-somebody":  "x",
			},
			Annotations: map[string]string{"jobset.sigs.k8s.io/job-restart-attempt": jobRestartAttempt}},
		Spec:   batchv1.JobSpec{Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1)},
		Status: batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](1)},
	}
}

func TestJobs(t *testing.T) {
	before := map[string]types.UID{"js-workers-0": "a", "js-workers-1": "b"}
	deleted := job("js-workers-1", "b", "1", "0")
	deleted.DeletionTimestamp = &metav1.Time{}
	got := Jobs("js-uid", []batchv1.Job{job("js-workers-0", "a", "0", "0"), job("js-workers-1", "c", "1", "1"), deleted}, before)
	want := Fields{
		"job[js-workers-0].recreated":                                          "false",
		"job[js-workers-0].parallelism":                                        "1",
		"job[js-workers-0].completions":                                        "1",
		"job[js-workers-0].status.active":                                      "1",
		"job[js-workers-0].status.ready":                                       "1",
		"job[js-workers-0].status.failed":                                      "0",
		"job[js-workers-0].label[jobset.sigs.k8s.io/jobset-uid]":               TheJobSetUID,
		"job[js-workers-0].label[jobset.sigs.k8s.io/job-index]":                "0",
		"job[js-workers-0].label[jobset.sigs.k8s.io/job-restart-attempt]":      "0",
		"job[js-workers-0].annotation[jobset.sigs.k8s.io/job-restart-attempt]": "0",
		"job[js-workers-1].recreated":                                          "true",
		"job[js-workers-1].parallelism":                                        "1",
		"job[js-workers-1].completions":                                        "1",
		"job[js-workers-1].status.active":                                      "1",
		"job[js-workers-1].status.ready":                                       "1",
		"job[js-workers-1].status.failed":                                      "0",
		"job[js-workers-1].label[jobset.sigs.k8s.io/jobset-uid]":               TheJobSetUID,
		"job[js-workers-1].label[jobset.sigs.k8s.io/job-index]":                "1",
		"job[js-workers-1].label[jobset.sigs.k8s.io/job-restart-attempt]":      "1",
		"job[js-workers-1].annotation[jobset.sigs.k8s.io/job-restart-attempt]": "1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Jobs (-want +got):\n%s", diff)
	}
	// A Job that kept its UID where the other side recreated it is a
	// difference.
	kept := Jobs("js-uid", []batchv1.Job{job("js-workers-1", "b", "1", "1")}, before)
	if d := Diff(Fields{"job[js-workers-1].recreated": "true"}, kept, "*label*", "*annotation*", "*parallelism", "*completions", "*.status.*"); !cmp.Equal(d, []string{`job[js-workers-1].recreated: community "true", ours "false"`}) {
		t.Errorf("Diff of a kept Job: %q", d)
	}
}

func pod(name, job, index string, labels map[string]string) corev1.Pod {
	l := map[string]string{batchv1.JobNameLabel: job, batchv1.JobCompletionIndexAnnotation: index}
	for k, v := range labels {
		l[k] = v
	}
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l, Annotations: map[string]string{"jobset.sigs.k8s.io/execution-attempt": "1"}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
}

func TestPods(t *testing.T) {
	got, err := Pods("js-uid", []corev1.Pod{pod("js-workers-0-0-abcde", "js-workers-0", "0", map[string]string{"jobset.sigs.k8s.io/restart-attempt": "0"})})
	if err != nil {
		t.Fatal(err)
	}
	want := Fields{
		"pod[js-workers-0/0].phase":                                            "Running",
		"pod[js-workers-0/0].label[jobset.sigs.k8s.io/restart-attempt]":        "0",
		"pod[js-workers-0/0].annotation[jobset.sigs.k8s.io/execution-attempt]": "1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Pods (-want +got):\n%s", diff)
	}
	// The same Pod under the other side with another name: no difference
	// but the label's value.
	other, err := Pods("js-uid-2", []corev1.Pod{pod("js-workers-0-0-fghij", "js-workers-0", "0", map[string]string{"jobset.sigs.k8s.io/restart-attempt": "1"})})
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(got, other); !cmp.Equal(d, []string{`pod[js-workers-0/0].label[jobset.sigs.k8s.io/restart-attempt]: community "0", ours "1"`}) {
		t.Errorf("Diff: %q", d)
	}
	if _, err := Pods("js-uid", []corev1.Pod{pod("a", "js-workers-0", "0", nil), pod("b", "js-workers-0", "0", nil)}); err == nil {
		t.Error("two Pods of one index: no error")
	}
}

func TestEvents(t *testing.T) {
	event := func(uid types.UID, reason string) corev1.Event {
		return corev1.Event{InvolvedObject: corev1.ObjectReference{UID: uid}, Reason: reason, Type: corev1.EventTypeWarning}
	}
	got := Events("js-uid", []corev1.Event{event("js-uid", "RestartJobFailurePolicyAction"), event("js-uid", "RestartJobFailurePolicyAction"), event("other", "Other")})
	if want := (Fields{"event[RestartJobFailurePolicyAction].type": "Warning"}); !cmp.Equal(want, got) {
		t.Errorf("Events: %v, want %v", got, want)
	}
}
