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

// deadlineOutcome is what a test reads of decide's actions about the
// active deadline: the startTime written, the terminal condition's reason,
// the restart counts, when the reconcile comes back, and how many Jobs it
// deletes.
type deadlineOutcome struct {
	StartTime       *metav1.Time
	Terminal        string
	Restarts        int32
	InPlaceRestarts int32
	RequeueAfter    time.Duration
	Deleted         int
}

func deadlineOutcomeOf(a actions) deadlineOutcome {
	out := deadlineOutcome{RequeueAfter: a.requeueAfter, Deleted: len(a.deleteJobs)}
	if a.status != nil {
		st := a.status.js.Status
		out.StartTime, out.Restarts, out.InPlaceRestarts = st.StartTime, st.Restarts, st.InPlaceRestarts
		for _, t := range []jobset.JobSetConditionType{jobset.JobSetCompleted, jobset.JobSetFailed} {
			if c := meta.FindStatusCondition(st.Conditions, string(t)); c != nil && c.Status == metav1.ConditionTrue {
				out.Terminal = string(t) + "/" + c.Reason
			}
		}
	}
	return out
}

// TestDecideActiveDeadline runs the reconciler's decision under the
// JobSetActiveDeadlineSeconds gate: when the execution started, when it is
// over, what comes first, and when the reconcile looks again.
func TestDecideActiveDeadline(t *testing.T) {
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	on := features.Gates{}.With(features.JobSetActiveDeadlineSeconds, true)
	off := features.Gates{}
	at := func(ago time.Duration) *metav1.Time { return ptr.To(metav1.NewTime(now.Add(-ago))) }
	const deadline = 10 * time.Minute
	// workers: 2 Jobs, a 10-minute deadline, 3 restarts allowed, the
	// execution started start ago (nil: not recorded), recorded suspended
	// or not.
	workers := func(start *metav1.Time, suspend, suspendedRecorded bool) *jobset.JobSet {
		js := wrappers.MakeJobSet("js", "ns").MaxRestarts(3).EnableDNSHostnames(false).Suspend(suspend).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Obj()).Obj()
		js.UID = "uid-1"
		js.Spec.ActiveDeadlineSeconds = ptr.To(int64(deadline.Seconds()))
		js.Status.StartTime = start
		status := metav1.ConditionFalse
		if suspendedRecorded {
			status = metav1.ConditionTrue
		}
		js.Status.Conditions = []metav1.Condition{{Type: string(jobset.JobSetSuspended), Status: status,
			Reason: jobset.ReasonSuspended, Message: jobset.MessageSuspended, LastTransitionTime: *at(time.Hour)}}
		return js
	}
	jobsOf := func(js *jobset.JobSet, mutate ...func(*batchv1.Job)) []batchv1.Job {
		return constructedJobs(js, ptr.Deref(js.Spec.Suspend, false), nil, mutate...)
	}
	failed := jobFailed
	complete := func(j *batchv1.Job) {
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	}
	// inPlace: an in-place group of 2 Jobs x 1 Pod, synced at epoch 1.
	inPlace := func(start *metav1.Time) *jobset.JobSet {
		js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).EnableDNSHostnames(false).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).InPlaceReady().Obj()).Obj()
		js.UID = "uid-1"
		js.Spec.ActiveDeadlineSeconds = ptr.To(int64(deadline.Seconds()))
		js.Status.SyncedEpoch, js.Status.DeprecatedEpoch, js.Status.StartTime = ptr.To[int32](1), ptr.To[int32](0), start
		return js
	}
	// firstFailed: the Jobs' Pods, members at epoch 1, the first Failed.
	firstFailed := func(jobs []batchv1.Job) []corev1.Pod { return membersAtOne(jobs, podFailed) }
	withoutDeadline := func(js *jobset.JobSet) *jobset.JobSet { js.Spec.ActiveDeadlineSeconds = nil; return js }
	finishedByDeadline := func() *jobset.JobSet {
		js := workers(at(deadline), false, false)
		js.Status.TerminalState = string(jobset.JobSetFailed)
		js.Status.Conditions = append(js.Status.Conditions, metav1.Condition{Type: string(jobset.JobSetFailed), Status: metav1.ConditionTrue,
			Reason: jobset.ReasonDeadlineExceeded, LastTransitionTime: metav1.NewTime(now)})
		return js
	}

	type world struct {
		js    *jobset.JobSet
		jobs  []batchv1.Job
		pods  func([]batchv1.Job) []corev1.Pod
		gates features.Gates
	}
	for name, tc := range map[string]struct {
		world world
		want  deadlineOutcome
	}{
		"a new JobSet: its execution starts now, and the reconcile comes back at the deadline": {
			world: world{js: workers(nil, false, false), gates: on},
			want:  deadlineOutcome{StartTime: at(0), RequeueAfter: deadline},
		},
		"running: the stored start, and back when the rest of the deadline is over": {
			world: world{js: workers(at(4*time.Minute), false, false), jobs: jobsOf(workers(nil, false, false)), gates: on},
			want:  deadlineOutcome{StartTime: at(4 * time.Minute), RequeueAfter: 6 * time.Minute},
		},
		"the deadline is over: Failed with DeadlineExceeded": {
			world: world{js: workers(at(deadline), false, false), jobs: jobsOf(workers(nil, false, false)), gates: on},
			want:  deadlineOutcome{StartTime: at(deadline), Terminal: "Failed/DeadlineExceeded"},
		},
		"failed by its deadline: its active Jobs are deleted": {
			world: world{js: finishedByDeadline(), jobs: jobsOf(workers(nil, false, false)), gates: on},
			want:  deadlineOutcome{Deleted: 2},
		},
		"the deadline is over and the success policy met: Completed, the success policy comes first": {
			world: world{js: workers(at(deadline), false, false), jobs: jobsOf(workers(nil, false, false), complete, complete), gates: on},
			want:  deadlineOutcome{StartTime: at(deadline), Terminal: "Completed/AllJobsCompleted"},
		},
		"the deadline is over and a Job failed with restarts left: Failed, the deadline comes before the failure policy": {
			world: world{js: workers(at(deadline), false, false), jobs: jobsOf(workers(nil, false, false), failed), gates: on},
			want:  deadlineOutcome{StartTime: at(deadline), Terminal: "Failed/DeadlineExceeded"},
		},
		"a Job failed within the deadline: a full restart starts a new execution now": {
			world: world{js: workers(at(9*time.Minute), false, false), jobs: jobsOf(workers(nil, false, false), failed), gates: on},
			want:  deadlineOutcome{StartTime: at(0), Restarts: 1, RequeueAfter: deadline},
		},
		"being suspended: the start is cleared, nothing bounds it, though its deadline is over": {
			world: world{js: workers(at(time.Hour), true, false), jobs: jobsOf(workers(nil, false, false)), gates: on},
			want:  deadlineOutcome{},
		},
		"being suspended as a Job fails: the full restart starts no time until the resume": {
			world: world{js: workers(at(time.Minute), true, false), jobs: jobsOf(workers(nil, false, false), failed), gates: on},
			want:  deadlineOutcome{Restarts: 1},
		},
		"resumed: the execution starts now, whatever start is stored": {
			world: world{js: workers(at(time.Hour), false, true), jobs: jobsOf(workers(nil, true, true)), gates: on},
			want:  deadlineOutcome{StartTime: at(0), RequeueAfter: deadline},
		},
		"a Job restarted alone (RestartJob): the execution goes on": {
			world: world{
				js: func() *jobset.JobSet {
					js := workers(at(4*time.Minute), false, false)
					js.Spec.FailurePolicy.Rules = []jobset.FailurePolicyRule{{Name: "one", Action: jobset.RestartJob}}
					return js
				}(),
				jobs:  jobsOf(workers(nil, false, false), nil, failed),
				gates: on.With(features.RestartJob, true)},
			want: deadlineOutcome{StartTime: at(4 * time.Minute), RequeueAfter: 6 * time.Minute},
		},
		"an in-place group restart: the execution goes on": {
			world: world{js: inPlace(at(7 * time.Minute)), jobs: jobsOf(inPlace(nil)), pods: firstFailed, gates: on},
			want:  deadlineOutcome{StartTime: at(7 * time.Minute), InPlaceRestarts: 1, RequeueAfter: 3 * time.Minute},
		},
		"in place, the deadline over: Failed rather than restarted in place": {
			world: world{js: inPlace(at(deadline)), jobs: jobsOf(inPlace(nil)), pods: firstFailed, gates: on},
			want:  deadlineOutcome{StartTime: at(deadline), Terminal: "Failed/DeadlineExceeded"},
		},
		"no activeDeadlineSeconds: the start is recorded, nothing bounds it": {
			world: world{js: withoutDeadline(workers(nil, false, false)), gates: on},
			want:  deadlineOutcome{StartTime: at(0)},
		},
		"gate off, a new JobSet: no start recorded": {
			world: world{js: workers(nil, false, false), gates: off},
			want:  deadlineOutcome{},
		},
		"gate off, a start stored while it was on and the deadline over: neither read nor written": {
			world: world{js: workers(at(time.Hour), false, false), jobs: jobsOf(workers(nil, false, false), failed), gates: off},
			want:  deadlineOutcome{StartTime: at(time.Hour), Restarts: 1},
		},
	} {
		t.Run(name, func(t *testing.T) {
			w := tc.world
			o := &observed{js: w.js, children: classifyJobs(w.js, w.jobs, w.gates.Enabled(features.RestartJob)), now: now, gates: w.gates}
			if w.pods != nil {
				o.pods = w.pods(w.jobs)
			}
			if diff := cmp.Diff(tc.want, deadlineOutcomeOf(decide(o, DefaultGatherStallThreshold))); diff != "" {
				t.Errorf("decide (-want +got):\n%s", diff)
			}
		})
	}
}
