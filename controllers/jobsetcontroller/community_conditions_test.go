package jobsetcontroller

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// TestCommunityConditionWording pins the reason and message of each
// condition community JobSet v0.12.0 defines, as its controller writes
// them (pkg/constants/constants.go; pkg/controllers/failure_policy.go and
// jobset_controller.go append " (first failed job: <name>)"). The strings
// are written out here on purpose: our constants must not be their source.
func TestCommunityConditionWording(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	workerFailed := wrappers.MakeJob("js-workers-0", "ns", "workers").
		Failed("BackoffLimitExceeded", "Job has reached the specified backoff limit", t0).Obj()
	driverFailedLater := wrappers.MakeJob("js-driver-0", "ns", "driver").
		Failed("PodFailurePolicy", "exit code 42", t0.Add(time.Second)).Obj()
	base := func() *wrappers.JobSetWrapper {
		return wrappers.MakeJobSet("js", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj())
	}
	type wording struct{ Type, Status, Reason, Message string }
	cases := map[string]struct {
		js     *jobset.JobSet
		failed []*batchv1.Job
		done   []*batchv1.Job
		want   []wording
	}{
		"completed": {
			js:   base().Obj(),
			done: []*batchv1.Job{wrappers.MakeJob("js-workers-0", "ns", "workers").Obj()},
			want: []wording{{"Completed", "True", "AllJobsCompleted", "jobset completed successfully"}},
		},
		"failed, no failure policy: the first failed Job is named": {
			js:     base().Obj(),
			failed: []*batchv1.Job{driverFailedLater, workerFailed},
			want: []wording{{"Failed", "True", "FailedJobs",
				"jobset failed due to one or more job failures (first failed job: js-workers-0)"}},
		},
		"failed by a FailJobSet rule": {
			js: base().FailurePolicyRule(jobset.FailurePolicyRule{
				Name: "fatal", Action: jobset.FailJobSet, OnJobFailureReasons: []string{"PodFailurePolicy"}}).Obj(),
			failed: []*batchv1.Job{driverFailedLater},
			want: []wording{{"Failed", "True", "FailJobSetFailurePolicyAction",
				"applying FailJobSet failure policy action (first failed job: js-driver-0)"}},
		},
		"failed, maxRestarts spent": {
			js:     base().MaxRestarts(1).RestartsStatus(1, 1).Obj(),
			failed: []*batchv1.Job{workerFailed},
			want: []wording{{"Failed", "True", "ReachedMaxRestarts",
				"jobset failed due to reaching max number of restarts (first failed job: js-workers-0)"}},
		},
		"restarted, no rule matched: the default failure policy": {
			js:     base().MaxRestarts(1).Obj(),
			failed: []*batchv1.Job{workerFailed},
			want: []wording{
				{"Restarting", "True", "RecreatingJobs", ""},
				{"RestartingJobSet", "True", "DefaultFailurePolicy",
					"applying RestartJobSet failure policy action (first failed job: js-workers-0)"},
			},
		},
		"restarted by a RestartJobSetAndIgnoreMaxRestarts rule: FailurePolicy_<rule>": {
			js: base().FailurePolicyRule(jobset.FailurePolicyRule{
				Name: "preempted", Action: jobset.RestartJobSetAndIgnoreMaxRestarts}).Obj(),
			failed: []*batchv1.Job{workerFailed},
			want: []wording{
				{"Restarting", "True", "RecreatingJobs", ""},
				{"RestartingJobSet", "True", "FailurePolicy_preempted",
					"applying RestartJobSetAndIgnoreMaxRestarts failure policy action (first failed job: js-workers-0)"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := nextReconcile(t, tc.js)
			u.apply(policyDecision(tc.js, childJobs{failed: tc.failed, successful: tc.done}, false))
			var got []wording
			for _, c := range u.js.Status.Conditions {
				w := wording{c.Type, string(c.Status), c.Reason, c.Message}
				if c.Type == "Restarting" {
					w.Message = "" // ours, not community's: its message is free
				}
				got = append(got, w)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRestartingJobSetTurnsFalse: community's RestartingJobSet turns False,
// once it exists, for the first of: failed, completed, suspended, every
// Job ready; it never appears False by itself.
func TestRestartingJobSetTurnsFalse(t *testing.T) {
	restarting := metav1.Condition{Type: "RestartingJobSet", Status: metav1.ConditionTrue, Reason: "DefaultFailurePolicy",
		Message: "applying RestartJobSet failure policy action (first failed job: js-workers-0)", LastTransitionTime: earlier}
	withStatus := func(ready, succeeded int32, conditions ...metav1.Condition) func(*jobset.JobSet) {
		return func(js *jobset.JobSet) {
			js.Status.Conditions = conditions
			js.Status.ReplicatedJobsStatus = []jobset.ReplicatedJobStatus{{Name: "workers", Ready: ready, Succeeded: succeeded}}
		}
	}
	twoReplicas := func(js *jobset.JobSet) { js.Spec.ReplicatedJobs[0].Replicas = 2 }
	cases := map[string]struct {
		mutate     []func(*jobset.JobSet)
		d          decision
		wantReason string // "" : no RestartingJobSet condition, or still True
		wantMsg    string
	}{
		"never restarted, every Job ready: no condition": {
			mutate: []func(*jobset.JobSet){twoReplicas, withStatus(2, 0)},
		},
		"restarting, one Job of two ready: still True": {
			mutate: []func(*jobset.JobSet){twoReplicas, withStatus(1, 0, restarting)},
		},
		"restarting, every Job ready or succeeded: JobsReady": {
			mutate:     []func(*jobset.JobSet){twoReplicas, withStatus(1, 1, restarting)},
			wantReason: "JobsReady", wantMsg: "all jobs are ready",
		},
		"restarting, then failed": {
			mutate:     []func(*jobset.JobSet){twoReplicas, withStatus(0, 0, restarting)},
			d:          failDecision(jobset.ReasonFailedJobs, "detail"),
			wantReason: "JobSetFailed", wantMsg: "jobset failed",
		},
		"restarting, then completed": {
			mutate:     []func(*jobset.JobSet){twoReplicas, withStatus(0, 2, restarting)},
			d:          decision{kind: completeJobSet, reason: jobset.ReasonAllJobsCompleted, message: "detail"},
			wantReason: "JobSetCompleted", wantMsg: "jobset completed successfully",
		},
		"restarting, then suspended": {
			mutate: []func(*jobset.JobSet){twoReplicas, withStatus(2, 0, restarting),
				func(js *jobset.JobSet) { js.Spec.Suspend = new(bool); *js.Spec.Suspend = true }},
			wantReason: "JobSetSuspended", wantMsg: "jobset is suspended",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			js := statusTestJobSet(func(js *jobset.JobSet) {
				for _, m := range tc.mutate {
					m(js)
				}
			})
			had := meta.FindStatusCondition(js.Status.Conditions, "RestartingJobSet")
			u := nextReconcile(t, js)
			u.apply(tc.d)
			c := meta.FindStatusCondition(u.js.Status.Conditions, "RestartingJobSet")
			switch {
			case tc.wantReason == "" && had == nil:
				if c != nil {
					t.Errorf("RestartingJobSet appeared: %+v", *c)
				}
			case tc.wantReason == "":
				if c == nil || c.Status != metav1.ConditionTrue {
					t.Errorf("RestartingJobSet = %+v, want still True", c)
				}
			default:
				if c == nil || c.Status != metav1.ConditionFalse || c.Reason != tc.wantReason || c.Message != tc.wantMsg {
					t.Errorf("RestartingJobSet = %+v, want False %s %q", c, tc.wantReason, tc.wantMsg)
				}
			}
		})
	}
}
