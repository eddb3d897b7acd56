package jobsetcontroller

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

func TestFailurePolicyDecision(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	workerFailed := wrappers.MakeJob("js-workers-0", "ns", "workers").
		Failed("BackoffLimitExceeded", "Job has reached the specified backoff limit", t0).Obj()
	driverFailedLater := wrappers.MakeJob("js-driver-0", "ns", "driver").
		Failed("PodFailurePolicy", "Container main for pod ns/js-driver-0-0 failed with exit code 42", t0.Add(time.Second)).Obj()
	driverFailedFirst := wrappers.MakeJob("js-driver-0", "ns", "driver").
		Failed("PodFailurePolicy", "Container main for pod ns/js-driver-0-0 failed with exit code 42", t0.Add(-time.Second)).Obj()

	base := func() *wrappers.JobSetWrapper { return wrappers.MakeJobSet("js", "ns") }
	failOnPodFailurePolicy := jobset.FailurePolicyRule{Name: "fatal", Action: jobset.FailJobSet, OnJobFailureReasons: []string{"PodFailurePolicy"}}

	cases := map[string]struct {
		js              *jobset.JobSet
		failed          []*batchv1.Job
		wantKind        decisionKind
		wantReason      string
		wantCountsToMax bool
	}{
		"no failed Job: keep running": {
			js:       base().MaxRestarts(1).Obj(),
			wantKind: keepRunning,
		},
		"no failure policy: any failure fails the JobSet": {
			js:         base().Obj(),
			failed:     []*batchv1.Job{workerFailed},
			wantKind:   failJobSet,
			wantReason: jobset.ReasonFailedJobs,
		},
		"no rule matches: RestartJobSet within maxRestarts": {
			js:              base().MaxRestarts(2).FailurePolicyRule(failOnPodFailurePolicy).Obj(),
			failed:          []*batchv1.Job{workerFailed},
			wantKind:        restartJobSet,
			wantReason:      ReasonRestarting,
			wantCountsToMax: true,
		},
		"RestartJobSet with maxRestarts spent fails with ReachedMaxRestarts": {
			js:         base().MaxRestarts(2).RestartsStatus(3, 2).Obj(),
			failed:     []*batchv1.Job{workerFailed},
			wantKind:   failJobSet,
			wantReason: jobset.ReasonReachedMaxRestarts,
		},
		// The Job failed while the group restart that its
		// Pods' failure started was under way; it was counted then.
		"a Job failure during an in-place group restart escalates it: counted once, even with the budget spent": {
			js: func() *jobset.JobSet {
				js := base().MaxRestarts(1).RestartStrategy(jobset.InPlaceRestart).Obj()
				js.Status.SyncedEpoch, js.Status.DeprecatedEpoch, js.Status.InPlaceRestarts = ptr.To[int32](2), ptr.To[int32](2), 1
				return js
			}(),
			failed:     []*batchv1.Job{workerFailed},
			wantKind:   restartJobSet,
			wantReason: ReasonRestarting,
		},
		"maxRestarts 0 fails on the first failure": {
			js:         base().MaxRestarts(0).Obj(),
			failed:     []*batchv1.Job{workerFailed},
			wantKind:   failJobSet,
			wantReason: jobset.ReasonReachedMaxRestarts,
		},
		"FailJobSet on PodFailurePolicy fails at once, whatever the budget": {
			js:         base().MaxRestarts(5).FailurePolicyRule(failOnPodFailurePolicy).Obj(),
			failed:     []*batchv1.Job{driverFailedLater},
			wantKind:   failJobSet,
			wantReason: jobset.ReasonFailJobSetAction,
		},
		"a Job the Job controller has decided to fail (FailureTarget) counts as failed": {
			js: base().MaxRestarts(5).FailurePolicyRule(failOnPodFailurePolicy).Obj(),
			failed: []*batchv1.Job{wrappers.MakeJob("js-driver-0", "ns", "driver").
				FailureTarget("PodFailurePolicy", "Container main for pod ns/js-driver-0-0 failed with exit code 42", t0).Obj()},
			wantKind:   failJobSet,
			wantReason: jobset.ReasonFailJobSetAction,
		},
		"RestartJobSetAndIgnoreMaxRestarts restarts past the budget, uncounted": {
			js: base().MaxRestarts(0).FailurePolicyRule(jobset.FailurePolicyRule{
				Name: "ignore", Action: jobset.RestartJobSetAndIgnoreMaxRestarts}).Obj(),
			failed:     []*batchv1.Job{workerFailed},
			wantKind:   restartJobSet,
			wantReason: ReasonRestarting,
		},
		"the first Job to fail decides": {
			js:         base().MaxRestarts(5).FailurePolicyRule(failOnPodFailurePolicy).Obj(),
			failed:     []*batchv1.Job{workerFailed, driverFailedFirst},
			wantKind:   failJobSet,
			wantReason: jobset.ReasonFailJobSetAction,
		},
		"a later failure does not decide": {
			js:              base().MaxRestarts(5).FailurePolicyRule(failOnPodFailurePolicy).Obj(),
			failed:          []*batchv1.Job{workerFailed, driverFailedLater},
			wantKind:        restartJobSet,
			wantReason:      ReasonRestarting,
			wantCountsToMax: true,
		},
		"targetReplicatedJobs limits a rule": {
			js: base().MaxRestarts(5).FailurePolicyRule(jobset.FailurePolicyRule{
				Name: "driver-only", Action: jobset.FailJobSet, TargetReplicatedJobs: []string{"driver"}}).Obj(),
			failed:          []*batchv1.Job{workerFailed},
			wantKind:        restartJobSet,
			wantReason:      ReasonRestarting,
			wantCountsToMax: true,
		},
		"onJobFailureMessagePatterns must match the message": {
			js: base().MaxRestarts(5).FailurePolicyRule(jobset.FailurePolicyRule{
				Name: "exit-42", Action: jobset.FailJobSet, OnJobFailureMessagePatterns: []string{`exit code 42$`}}).Obj(),
			failed:     []*batchv1.Job{driverFailedLater},
			wantKind:   failJobSet,
			wantReason: jobset.ReasonFailJobSetAction,
		},
		"a message pattern that does not match skips the rule": {
			js: base().MaxRestarts(5).FailurePolicyRule(jobset.FailurePolicyRule{
				Name: "exit-7", Action: jobset.FailJobSet, OnJobFailureMessagePatterns: []string{`exit code 7$`}}).Obj(),
			failed:          []*batchv1.Job{driverFailedLater},
			wantKind:        restartJobSet,
			wantReason:      ReasonRestarting,
			wantCountsToMax: true,
		},
		"rules are evaluated in order": {
			js: base().MaxRestarts(0).
				FailurePolicyRule(jobset.FailurePolicyRule{Name: "first", Action: jobset.RestartJobSetAndIgnoreMaxRestarts, OnJobFailureReasons: []string{"PodFailurePolicy"}}).
				FailurePolicyRule(failOnPodFailurePolicy).Obj(),
			failed:     []*batchv1.Job{driverFailedLater},
			wantKind:   restartJobSet,
			wantReason: ReasonRestarting,
		},
		"every requirement of a rule must hold": {
			js: base().MaxRestarts(5).FailurePolicyRule(jobset.FailurePolicyRule{
				Name: "both", Action: jobset.FailJobSet, OnJobFailureReasons: []string{"PodFailurePolicy"},
				TargetReplicatedJobs: []string{"workers"}}).Obj(),
			failed:          []*batchv1.Job{driverFailedLater},
			wantKind:        restartJobSet,
			wantReason:      ReasonRestarting,
			wantCountsToMax: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := failurePolicyDecision(tc.js, tc.failed, false)
			if got.kind != tc.wantKind || got.reason != tc.wantReason || got.countsTowardMax != tc.wantCountsToMax {
				t.Errorf("got kind=%d reason=%q countsTowardMax=%v (%s), want kind=%d reason=%q countsTowardMax=%v",
					got.kind, got.reason, got.countsTowardMax, got.message, tc.wantKind, tc.wantReason, tc.wantCountsToMax)
			}
			if got.kind != keepRunning && got.message == "" {
				t.Error("a decision must explain itself in its message")
			}
		})
	}
}

func TestJobsFailingCountAsFailed(t *testing.T) {
	js := wrappers.MakeJobSet("js", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(3).Obj()).Obj()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	jobs := []batchv1.Job{
		*wrappers.MakeJob("js-workers-0", "ns", "workers").Obj(),
		*wrappers.MakeJob("js-workers-1", "ns", "workers").FailureTarget("PodFailurePolicy", "exit code 42", t0).Obj(),
		*wrappers.MakeJob("js-workers-2", "ns", "workers").Failed("BackoffLimitExceeded", "backoff", t0).Obj(),
	}
	c := classifyJobs(js, jobs, false)
	if len(c.active) != 1 || len(c.failed) != 2 {
		t.Errorf("active %d, failed %d; want 1 active and 2 failed (FailureTarget and Failed)", len(c.active), len(c.failed))
	}
}
