package jobsetcontroller

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

func TestOneJobRestartDecision(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	workerFailed := wrappers.MakeJob("js-workers-1", "ns", "workers").Index(1).
		Failed("BackoffLimitExceeded", "backoff", t0).Obj()
	nodeFailed := wrappers.MakeJob("js-node-0", "ns", "node").Index(0).Failed("BackoffLimitExceeded", "backoff", t0).Obj()
	initializerFailed := wrappers.MakeJob("js-initializer-0", "ns", "initializer").Index(0).Failed("BackoffLimitExceeded", "backoff", t0).Obj()
	rule := func(action jobset.FailurePolicyAction) jobset.FailurePolicyRule {
		return jobset.FailurePolicyRule{Name: "one", Action: action}
	}
	workers := func(maxRestarts int32, action jobset.FailurePolicyAction) *wrappers.JobSetWrapper {
		return wrappers.MakeJobSet("js", "ns").MaxRestarts(maxRestarts).FailurePolicyRule(rule(action)).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(3).Obj())
	}
	// node is the in-place group; initializer runs outside it.
	inPlace := func(action jobset.FailurePolicyAction) *jobset.JobSet {
		return wrappers.MakeJobSet("js", "ns").MaxRestarts(3).RestartStrategy(jobset.InPlaceRestart).FailurePolicyRule(rule(action)).
			ReplicatedJob(wrappers.MakeReplicatedJob("initializer").Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("node").Replicas(2).InPlaceReady().Obj()).Obj()
	}
	withCounted := func(js *jobset.JobSet, counted ...int32) *jobset.JobSet {
		js.Status.ReplicatedJobsStatus = []jobset.ReplicatedJobStatus{{Name: "workers", JobRestarts: counted, JobRestartsCountTowardsMax: counted}}
		return js
	}

	for name, tc := range map[string]struct {
		js        *jobset.JobSet
		failed    *batchv1.Job
		gateOff   bool
		want      decision
		wantInMsg string
	}{
		"RestartJob recreates the failed Job, counted": {
			js: workers(2, jobset.RestartJob).Obj(), failed: workerFailed,
			want: decision{kind: restartOneJob, reason: jobset.ReasonRestartJobAction, replicatedJob: "workers", jobIndex: 1, countsTowardMax: true},
		},
		"RestartJobAndIgnoreMaxRestarts recreates it uncounted, with no budget at all": {
			js: workers(0, jobset.RestartJobAndIgnoreMaxRestarts).Obj(), failed: workerFailed,
			want: decision{kind: restartOneJob, reason: jobset.ReasonRestartJobAndIgnoreMaxRestartsAction, replicatedJob: "workers", jobIndex: 1},
		},
		"RestartJob with the budget spent by restarts of one Job fails the JobSet": {
			js: withCounted(workers(2, jobset.RestartJob).Obj(), 1, 0, 1), failed: workerFailed,
			want:      decision{kind: failJobSet, reason: jobset.ReasonReachedMaxRestarts},
			wantInMsg: "(0 full, 2 of one Job, 0 in place)",
		},
		"restarts of one Job count toward a RestartJobSet's budget too": {
			js: withCounted(wrappers.MakeJobSet("js", "ns").MaxRestarts(1).
				ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(3).Obj()).Obj(), 0, 1, 0),
			failed: workerFailed,
			want:   decision{kind: failJobSet, reason: jobset.ReasonReachedMaxRestarts},
		},
		"with the gate off in the controller, a full restart instead": {
			js: workers(2, jobset.RestartJob).Obj(), failed: workerFailed, gateOff: true,
			want:      decision{kind: restartJobSet, reason: ReasonRestarting, countsTowardMax: true},
			wantInMsg: "the RestartJob feature gate is off in the controller",
		},
		"InPlaceRestart: a Job outside the in-place group is recreated alone": {
			js: inPlace(jobset.RestartJob), failed: initializerFailed,
			want: decision{kind: restartOneJob, reason: jobset.ReasonRestartJobAction, replicatedJob: "initializer", countsTowardMax: true},
		},
		"InPlaceRestart: a Job of the in-place group gets a full restart instead, never one alone": {
			js: inPlace(jobset.RestartJobAndIgnoreMaxRestarts), failed: nodeFailed,
			want:      decision{kind: restartJobSet, reason: ReasonRestarting},
			wantInMsg: "replicatedJob node is in the in-place group",
		},
		"a Job whose index is not one of its replicatedJob's: a full restart instead": {
			js:        workers(2, jobset.RestartJob).Obj(),
			failed:    wrappers.MakeJob("js-workers-7", "ns", "workers").Index(7).Failed("BackoffLimitExceeded", "backoff", t0).Obj(),
			want:      decision{kind: restartJobSet, reason: ReasonRestarting, countsTowardMax: true},
			wantInMsg: "not an index of replicatedJob workers",
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := failurePolicyDecision(tc.js, []*batchv1.Job{tc.failed}, !tc.gateOff)
			msg := got.message
			got.message = ""
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(decision{})); diff != "" {
				t.Errorf("decision (-want +got):\n%s\nmessage: %s", diff, msg)
			}
			if msg == "" || (tc.wantInMsg != "" && !strings.Contains(msg, tc.wantInMsg)) {
				t.Errorf("message %q, want one with %q", msg, tc.wantInMsg)
			}
		})
	}
}

// A Job created for an earlier generation of its index is replaced, under
// the gate only; a Job without the label (created before the gate was on)
// stays.
func TestClassifyJobsByGeneration(t *testing.T) {
	js := wrappers.MakeJobSet("js", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(3).Obj()).Obj()
	js.Status.ReplicatedJobsStatus = []jobset.ReplicatedJobStatus{{Name: "workers", JobRestarts: []int32{0, 2, 0}}}
	jobs := []batchv1.Job{
		*wrappers.MakeJob("js-workers-0", "ns", "workers").Index(0).JobRestartAttempt(0).Obj(),
		*wrappers.MakeJob("js-workers-1", "ns", "workers").Index(1).JobRestartAttempt(1).Obj(),
		*wrappers.MakeJob("js-workers-2", "ns", "workers").Index(2).Obj(),
	}
	names := func(jobs []*batchv1.Job) []string {
		var out []string
		for _, j := range jobs {
			out = append(out, j.Name)
		}
		return out
	}
	on := classifyJobs(js, jobs, true)
	if diff := cmp.Diff([]string{"js-workers-1"}, names(on.previous)); diff != "" {
		t.Errorf("gate on, previous (-want +got):\n%s", diff)
	}
	if off := classifyJobs(js, jobs, false); len(off.previous) != 0 {
		t.Errorf("gate off: previous %v, want none", names(off.previous))
	}
}

// The status counts a restart of one Job at its index, sized to the
// replicas, and keeps the counters from one reconcile's counts to the next.
func TestOneJobRestartCounters(t *testing.T) {
	js := wrappers.MakeJobSet("js", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(3).Obj()).Obj()
	js.Status.ReplicatedJobsStatus = replicatedJobsStatus(js, childJobs{})
	countOneJobRestart(js, "workers", 2, true)
	countOneJobRestart(js, "workers", 2, false)
	got := js.Status.ReplicatedJobsStatus[0]
	if diff := cmp.Diff([]int32{0, 0, 2}, got.JobRestarts); diff != "" {
		t.Errorf("jobRestarts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int32{0, 0, 1}, got.JobRestartsCountTowardsMax); diff != "" {
		t.Errorf("jobRestartsCountTowardsMax (-want +got):\n%s", diff)
	}
	again := replicatedJobsStatus(js, childJobs{})
	if diff := cmp.Diff(js.Status.ReplicatedJobsStatus, again); diff != "" {
		t.Errorf("the next reconcile's counts lost the counters (-was +now):\n%s", diff)
	}
	if inplace.RestartsUsed(js) != 1 {
		t.Errorf("restartsUsed %d, want 1 (the counted restart of one Job)", inplace.RestartsUsed(js))
	}
}

// Under the gate every new Job, and its Pods, carry the generation of
// their index.
func TestNewJobsCarryTheirGeneration(t *testing.T) {
	js := wrappers.MakeJobSet("js", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Obj()).Obj()
	js.Status.ReplicatedJobsStatus = []jobset.ReplicatedJobStatus{{Name: "workers", JobRestarts: []int32{0, 3}}}
	plan := planChildren(js, childJobs{}, js.Status.ReplicatedJobsStatus, true, nil)
	for i, want := range []string{"0", "3"} {
		job := plan.create[i]
		if job.Labels[jobset.JobRestartAttemptKey] != want || job.Annotations[jobset.JobRestartAttemptKey] != want ||
			job.Spec.Template.Labels[jobset.JobRestartAttemptKey] != want {
			t.Errorf("Job %s: label %q, annotation %q, Pod label %q; want %q", job.Name, job.Labels[jobset.JobRestartAttemptKey],
				job.Annotations[jobset.JobRestartAttemptKey], job.Spec.Template.Labels[jobset.JobRestartAttemptKey], want)
		}
	}
	if _, ok := planChildren(js, childJobs{}, js.Status.ReplicatedJobsStatus, false, nil).create[0].Labels[jobset.JobRestartAttemptKey]; ok {
		t.Errorf("a Job created with the gate off carries %s", jobset.JobRestartAttemptKey)
	}
}
