package jobsetcontroller

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/features"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

func TestExecutionAttempt(t *testing.T) {
	suspendedCondition := func(status metav1.ConditionStatus) []metav1.Condition {
		return []metav1.Condition{{Type: string(jobset.JobSetSuspended), Status: status}}
	}
	for name, tc := range map[string]struct {
		suspend     bool
		conditions  []metav1.Condition
		stored      *int32
		restarts    int32
		wantAttempt int32
		wantStarted bool
	}{
		"a new JobSet: its first execution":                      {wantAttempt: 0, wantStarted: true},
		"created suspended: not started":                         {suspend: true, wantAttempt: 0},
		"created suspended, suspended recorded: not started":     {suspend: true, conditions: suspendedCondition(metav1.ConditionTrue), wantAttempt: 0},
		"resumed for the first time: its first execution":        {conditions: suspendedCondition(metav1.ConditionTrue), wantAttempt: 0, wantStarted: true},
		"running since before the count was kept: from restarts": {restarts: 2, wantAttempt: 2, wantStarted: true},
		"resumed, counted before the count was kept: restarts":   {restarts: 2, conditions: suspendedCondition(metav1.ConditionTrue), wantAttempt: 2, wantStarted: true},
		"running: as stored":                                     {stored: ptr.To[int32](3), restarts: 1, wantAttempt: 3, wantStarted: true},
		"resumed: one more":                                      {stored: ptr.To[int32](3), conditions: suspendedCondition(metav1.ConditionTrue), wantAttempt: 4, wantStarted: true},
		"the resume recorded: as stored":                         {stored: ptr.To[int32](4), conditions: suspendedCondition(metav1.ConditionFalse), wantAttempt: 4, wantStarted: true},
		"suspended: as stored":                                   {suspend: true, stored: ptr.To[int32](3), conditions: suspendedCondition(metav1.ConditionTrue), wantAttempt: 3, wantStarted: true},
		"being suspended: as stored":                             {suspend: true, stored: ptr.To[int32](3), wantAttempt: 3, wantStarted: true},
	} {
		t.Run(name, func(t *testing.T) {
			js := wrappers.MakeJobSet("js", "ns").Suspend(tc.suspend).ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
			js.Status.Conditions, js.Status.ExecutionAttempts, js.Status.Restarts = tc.conditions, tc.stored, tc.restarts
			attempt, started := executionAttempt(js)
			if attempt != tc.wantAttempt || started != tc.wantStarted {
				t.Errorf("executionAttempt = %d, started %t; want %d, started %t", attempt, started, tc.wantAttempt, tc.wantStarted)
			}
		})
	}
}

// executions is what a test reads of decide's actions about executions:
// the count written, the restart counts written with it, and the
// execution-attempt annotation of each Job created or resumed (of the
// active Jobs given), as "<Job's>/<Pod template's>" ("-" where absent).
type executions struct {
	Stored          *int32
	Restarts        int32
	InPlaceRestarts int32
	Suspended       metav1.ConditionStatus
	Created         map[string]string
	Resumed         map[string]string
}

func executionsOf(js *jobset.JobSet, active []*batchv1.Job, a actions) executions {
	var e executions
	if a.status != nil {
		st := a.status.js.Status
		e.Stored, e.Restarts, e.InPlaceRestarts = st.ExecutionAttempts, st.Restarts, st.InPlaceRestarts
		if c := meta.FindStatusCondition(st.Conditions, string(jobset.JobSetSuspended)); c != nil {
			e.Suspended = c.Status
		}
	}
	stamps := func(job *batchv1.Job) string {
		of := func(annotations map[string]string) string {
			if v, ok := annotations[jobset.ExecutionAttemptsKey]; ok {
				return v
			}
			return "-"
		}
		return of(job.Annotations) + "/" + of(job.Spec.Template.Annotations)
	}
	if plan := a.converge; plan != nil {
		for _, job := range plan.create {
			e.Created = withLabel(e.Created, job.Name, stamps(job))
		}
		_, resume := suspendPlan(js, active)
		for _, job := range resume {
			e.Resumed = withLabel(e.Resumed, job.Name, stamps(resumedJob(js, job, plan.executionAttempt)))
		}
	}
	return e
}

// TestDecideCountsExecutions runs the reconciler's decision under the
// ExecutionAttemptsTracking gate: what it counts, in which status write,
// and what the Jobs it creates and resumes carry.
func TestDecideCountsExecutions(t *testing.T) {
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	on := features.Gates{}.With(features.ExecutionAttemptsTracking, true)
	off := features.Gates{}
	workers := func() *wrappers.JobSetWrapper {
		return wrappers.MakeJobSet("js", "ns").MaxRestarts(3).EnableDNSHostnames(false).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Obj())
	}
	// withStatus sets the stored count and restarts, and records the
	// JobSet suspended (the Suspended condition True) or not.
	withStatus := func(js *jobset.JobSet, stored *int32, restarts int32, suspendedRecorded bool) *jobset.JobSet {
		js.UID = "uid-1"
		js.Status.ExecutionAttempts, js.Status.Restarts = stored, restarts
		status := metav1.ConditionFalse
		if suspendedRecorded {
			status = metav1.ConditionTrue
		}
		js.Status.Conditions = append(js.Status.Conditions, metav1.Condition{Type: string(jobset.JobSetSuspended), Status: status,
			Reason: jobset.ReasonSuspended, Message: jobset.MessageSuspended, LastTransitionTime: metav1.NewTime(now.Add(-time.Minute))})
		return js
	}
	jobsOf, failed := constructedJobs, jobFailed
	restartJobRule := jobset.FailurePolicyRule{Name: "one", Action: jobset.RestartJob}
	// inPlace: an in-place group of 2 Jobs x 1 Pod, synced at epoch 1.
	inPlace := func() *jobset.JobSet {
		js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).EnableDNSHostnames(false).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).InPlaceReady().Obj()).Obj()
		js.Status.SyncedEpoch, js.Status.DeprecatedEpoch = ptr.To[int32](1), ptr.To[int32](0)
		return withStatus(js, ptr.To[int32](2), 0, false)
	}
	membersOf := membersAtOne

	type world struct {
		js    *jobset.JobSet
		jobs  []batchv1.Job
		pods  func([]batchv1.Job) []corev1.Pod
		gates features.Gates
	}
	for name, tc := range map[string]struct {
		world world
		want  executions
	}{
		"a new JobSet: its first execution, 0, stored and on every Job created": {
			world: world{js: withStatus(workers().Obj(), nil, 0, false), gates: on},
			want: executions{Stored: ptr.To[int32](0), Suspended: metav1.ConditionFalse,
				Created: map[string]string{"js-workers-0": "0/0", "js-workers-1": "0/0"}},
		},
		"created suspended: nothing stored until it runs; its suspended Jobs carry 0": {
			world: world{js: withStatus(workers().Suspend(true).Obj(), nil, 0, false), gates: on},
			want: executions{Suspended: metav1.ConditionTrue,
				Created: map[string]string{"js-workers-0": "0/0", "js-workers-1": "0/0"}},
		},
		"resumed for the first time: its first execution, 0": {
			world: world{js: withStatus(workers().Obj(), nil, 0, true), gates: on,
				jobs: jobsOf(workers().Obj(), true, ptr.To[int32](0))},
			want: executions{Stored: ptr.To[int32](0), Suspended: metav1.ConditionFalse,
				Resumed: map[string]string{"js-workers-0": "0/0", "js-workers-1": "0/0"}},
		},
		"resumed: one more, stored with the Suspended condition turning False, on every Job resumed": {
			world: world{js: withStatus(workers().Obj(), ptr.To[int32](1), 0, true), gates: on,
				jobs: jobsOf(workers().Obj(), true, ptr.To[int32](1))},
			want: executions{Stored: ptr.To[int32](2), Suspended: metav1.ConditionFalse,
				Resumed: map[string]string{"js-workers-0": "2/2", "js-workers-1": "2/2"}},
		},
		"the resume stored: decided again, not counted again": {
			world: world{js: withStatus(workers().Obj(), ptr.To[int32](2), 0, false), gates: on,
				jobs: jobsOf(workers().Obj(), false, ptr.To[int32](2))},
			want: executions{Stored: ptr.To[int32](2), Suspended: metav1.ConditionFalse},
		},
		"suspended: as stored, nothing resumed": {
			world: world{js: withStatus(workers().Suspend(true).Obj(), ptr.To[int32](2), 0, true), gates: on,
				jobs: jobsOf(workers().Obj(), true, ptr.To[int32](2))},
			want: executions{Stored: ptr.To[int32](2), Suspended: metav1.ConditionTrue},
		},
		"a Job failed: a full restart, one more, in the status write that counts the restart": {
			world: world{js: withStatus(workers().Obj(), ptr.To[int32](2), 0, false), gates: on,
				jobs: jobsOf(workers().Obj(), false, ptr.To[int32](2), failed)},
			want: executions{Stored: ptr.To[int32](3), Restarts: 1, Suspended: metav1.ConditionFalse},
		},
		"resumed and a Job failed: both counted": {
			world: world{js: withStatus(workers().Obj(), ptr.To[int32](2), 0, true), gates: on,
				jobs: jobsOf(workers().Obj(), true, ptr.To[int32](2), failed)},
			want: executions{Stored: ptr.To[int32](4), Restarts: 1, Suspended: metav1.ConditionFalse},
		},
		"the Jobs of a full restart: created with the count the restart stored": {
			world: world{js: withStatus(workers().Obj(), ptr.To[int32](3), 1, false), gates: on, jobs: []batchv1.Job{}},
			want: executions{Stored: ptr.To[int32](3), Restarts: 1, Suspended: metav1.ConditionFalse,
				Created: map[string]string{"js-workers-0": "3/3", "js-workers-1": "3/3"}},
		},
		"a Job failed, the JobSet running since before the count was kept: restarts, then one more": {
			world: world{js: withStatus(workers().Obj(), nil, 2, false), gates: on,
				jobs: jobsOf(withStatus(workers().Obj(), nil, 2, false), false, nil, failed)},
			want: executions{Stored: ptr.To[int32](3), Restarts: 3, Suspended: metav1.ConditionFalse},
		},
		"a Job restarted alone (RestartJob): no new execution": {
			world: world{js: withStatus(workers().FailurePolicyRule(restartJobRule).Obj(), ptr.To[int32](2), 0, false),
				gates: on.With(features.RestartJob, true),
				jobs:  jobsOf(workers().Obj(), false, ptr.To[int32](2), nil, failed)},
			want: executions{Stored: ptr.To[int32](2), Suspended: metav1.ConditionFalse},
		},
		"an in-place group restart: no new execution": {
			world: world{js: inPlace(), gates: on, jobs: jobsOf(inPlace(), false, ptr.To[int32](2)),
				pods: func(jobs []batchv1.Job) []corev1.Pod { return membersOf(jobs, podFailed) }},
			want: executions{Stored: ptr.To[int32](2), InPlaceRestarts: 1, Suspended: metav1.ConditionFalse},
		},
		"gate off, a new JobSet: nothing stored, nothing stamped": {
			world: world{js: withStatus(workers().Obj(), nil, 0, false), gates: off},
			want: executions{Suspended: metav1.ConditionFalse,
				Created: map[string]string{"js-workers-0": "-/-", "js-workers-1": "-/-"}},
		},
		"gate off, a count stored while it was on: neither read nor written, by a restart or a resume": {
			world: world{js: withStatus(workers().Obj(), ptr.To[int32](2), 0, true), gates: off,
				jobs: jobsOf(workers().Obj(), true, nil, failed)},
			want: executions{Stored: ptr.To[int32](2), Restarts: 1, Suspended: metav1.ConditionFalse},
		},
		"gate off, resumed: the Jobs resumed carry no count": {
			world: world{js: withStatus(workers().Obj(), ptr.To[int32](2), 0, true), gates: off,
				jobs: jobsOf(workers().Obj(), true, nil)},
			want: executions{Stored: ptr.To[int32](2), Suspended: metav1.ConditionFalse,
				Resumed: map[string]string{"js-workers-0": "-/-", "js-workers-1": "-/-"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			w := tc.world
			o := &observed{js: w.js, children: classifyJobs(w.js, w.jobs, w.gates.Enabled(features.RestartJob)), now: now, gates: w.gates}
			if w.pods != nil {
				o.pods = w.pods(w.jobs)
			}
			if diff := cmp.Diff(tc.want, executionsOf(w.js, o.children.active, decide(o, DefaultGatherStallThreshold))); diff != "" {
				t.Errorf("decide (-want +got):\n%s", diff)
			}
		})
	}
}
