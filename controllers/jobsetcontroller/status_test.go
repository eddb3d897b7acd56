package jobsetcontroller

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/api/scheme"
	"github.com/fastjobset/jobset/controllers/internal/metrics"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// The status tables build a JobSet as an earlier reconcile left it, at the
// fake clock's start (earlier), then step the clock and update the status
// as the next reconcile does (now): a condition that moves carries now, one
// that keeps its status keeps earlier.
var (
	earlier = metav1.NewTime(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	now     = metav1.NewTime(earlier.Add(time.Minute))
)

// generation is the JobSet's metadata.generation in every table; conditions
// written earlier observed an older one.
const generation = 3

// statusTestJobSet returns a JobSet at generation 3 with conditions written
// earlier at generation 1.
func statusTestJobSet(mutate func(*jobset.JobSet), conditions ...metav1.Condition) *jobset.JobSet {
	js := wrappers.MakeJobSet("js", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
	js.Generation = generation
	js.Status.Conditions = conditions
	if mutate != nil {
		mutate(js)
	}
	return js
}

func condition(t jobset.JobSetConditionType, status metav1.ConditionStatus, reason, message string, observed int64, at metav1.Time) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: status, Reason: reason, Message: message, ObservedGeneration: observed, LastTransitionTime: at}
}

// nextReconcile steps a fake clock from earlier to now and starts the
// status update of a reconcile at that time, as Reconcile does with its
// clock.
func nextReconcile(t *testing.T, js *jobset.JobSet) *statusUpdate {
	t.Helper()
	clock := testingclock.NewFakeClock(earlier.Time)
	clock.Step(now.Sub(earlier.Time))
	return newStatusUpdate(js, metav1.NewTime(clock.Now()))
}

// checkStep runs one step of a reconcile's status update on js and compares
// the conditions and queued events; the steps record no metrics (the
// decisions they follow do).
func checkStep(t *testing.T, js *jobset.JobSet, step func(*statusUpdate), wantConditions []metav1.Condition, wantEvents []event) {
	t.Helper()
	before := js.DeepCopy()
	u := nextReconcile(t, js)
	step(u)
	if diff := cmp.Diff(wantConditions, u.js.Status.Conditions); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantEvents, u.events, cmp.AllowUnexported(event{})); diff != "" {
		t.Errorf("queued events (-want +got):\n%s", diff)
	}
	if len(u.recorded) != 0 {
		t.Errorf("queued %d metrics", len(u.recorded))
	}
	checkOriginalUntouched(t, before, js)
}

// checkOriginalUntouched: the update works on a copy, so that the JobSet
// read stays the base of the status patch.
func checkOriginalUntouched(t *testing.T, before, after *jobset.JobSet) {
	t.Helper()
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("the JobSet the update was made from changed (-before +after):\n%s", diff)
	}
}

// counters reads the counters apply records, for the JobSet and failure
// reason given.
func counters(ns, name, failReason string) map[string]float64 {
	return map[string]float64{
		"completed":        testutil.ToFloat64(metrics.JobSetsCompleted.WithLabelValues(name, ns)),
		"failed":           testutil.ToFloat64(metrics.JobSetsFailed.WithLabelValues(name, ns)),
		"failed by reason": testutil.ToFloat64(metrics.JobSetsFailedByReason.WithLabelValues(ns, failReason)),
		"restarts":         testutil.ToFloat64(metrics.JobSetRestarts.WithLabelValues(ns)),
	}
}

func TestStatusUpdateApply(t *testing.T) {
	restarted := func(js *jobset.JobSet) { js.Status.Restarts, js.Status.RestartsCountTowardsMax = 2, 1 }
	cases := map[string]struct {
		js         *jobset.JobSet
		d          decision
		wantStatus jobset.JobSetStatus
		wantEvents []event
		// wantCounted is how much each counter moves once the status is
		// written.
		wantCounted map[string]float64
	}{
		"keep running: nothing changes, nothing is emitted": {
			js:         statusTestJobSet(restarted),
			d:          decision{kind: keepRunning},
			wantStatus: jobset.JobSetStatus{Restarts: 2, RestartsCountTowardsMax: 1},
		},
		"complete: Completed condition, terminal state, a Normal event, counted": {
			js: statusTestJobSet(nil),
			d:  decision{kind: completeJobSet, reason: jobset.ReasonAllJobsCompleted, message: "the success policy is met"},
			wantStatus: jobset.JobSetStatus{
				Conditions: []metav1.Condition{
					condition(jobset.JobSetCompleted, metav1.ConditionTrue, jobset.ReasonAllJobsCompleted, "jobset completed successfully", generation, now),
				},
				TerminalState: string(jobset.JobSetCompleted),
			},
			wantEvents:  []event{{corev1.EventTypeNormal, jobset.ReasonAllJobsCompleted, "Complete", "the success policy is met"}},
			wantCounted: map[string]float64{"completed": 1},
		},
		"fail: Failed condition, terminal state, a Warning event, counted by reason": {
			js: statusTestJobSet(restarted),
			d:  failDecision(jobset.ReasonReachedMaxRestarts, "reached maxRestarts %d", 2),
			wantStatus: jobset.JobSetStatus{
				Conditions: []metav1.Condition{
					condition(jobset.JobSetFailed, metav1.ConditionTrue, jobset.ReasonReachedMaxRestarts, "jobset failed due to reaching max number of restarts", generation, now),
				},
				Restarts: 2, RestartsCountTowardsMax: 1,
				TerminalState: string(jobset.JobSetFailed),
			},
			wantEvents:  []event{{corev1.EventTypeWarning, jobset.ReasonReachedMaxRestarts, "Fail", "reached maxRestarts 2"}},
			wantCounted: map[string]float64{"failed": 1, "failed by reason": 1},
		},
		"restart counting toward maxRestarts: both counters move": {
			js: statusTestJobSet(restarted),
			d:  restartDecision(true, "Job %s failed", "js-workers-0"),
			wantStatus: jobset.JobSetStatus{
				Conditions: []metav1.Condition{
					condition(jobset.JobSetRestarting, metav1.ConditionTrue, jobset.ReasonRecreatingJobs, "restart attempt 3: Job js-workers-0 failed", generation, now),
					condition(jobset.JobSetRestartingJobSet, metav1.ConditionTrue, "DefaultFailurePolicy", "applying RestartJobSet failure policy action", generation, now),
				},
				Restarts: 3, RestartsCountTowardsMax: 2,
			},
			wantEvents:  []event{{corev1.EventTypeWarning, ReasonRestarting, "Restart", "Job js-workers-0 failed"}},
			wantCounted: map[string]float64{"restarts": 1},
		},
		"restart not counting toward maxRestarts: only restarts moves": {
			js: statusTestJobSet(restarted),
			d:  restartDecision(false, "Job %s failed", "js-workers-0"),
			wantStatus: jobset.JobSetStatus{
				Conditions: []metav1.Condition{
					condition(jobset.JobSetRestarting, metav1.ConditionTrue, jobset.ReasonRecreatingJobs, "restart attempt 3: Job js-workers-0 failed", generation, now),
					condition(jobset.JobSetRestartingJobSet, metav1.ConditionTrue, "DefaultFailurePolicy", "applying RestartJobSet failure policy action", generation, now),
				},
				Restarts: 3, RestartsCountTowardsMax: 1,
			},
			wantEvents:  []event{{corev1.EventTypeWarning, ReasonRestarting, "Restart", "Job js-workers-0 failed"}},
			wantCounted: map[string]float64{"restarts": 1},
		},
		"restart while still restarting: the condition keeps its transition time, observes the generation": {
			js: statusTestJobSet(restarted,
				condition(jobset.JobSetRestarting, metav1.ConditionTrue, jobset.ReasonRecreatingJobs, "recreating the Jobs of restart attempt 2", 1, earlier)),
			d: restartDecision(true, "Job %s failed", "js-workers-1"),
			wantStatus: jobset.JobSetStatus{
				Conditions: []metav1.Condition{
					condition(jobset.JobSetRestarting, metav1.ConditionTrue, jobset.ReasonRecreatingJobs, "restart attempt 3: Job js-workers-1 failed", generation, earlier),
					condition(jobset.JobSetRestartingJobSet, metav1.ConditionTrue, "DefaultFailurePolicy", "applying RestartJobSet failure policy action", generation, now),
				},
				Restarts: 3, RestartsCountTowardsMax: 2,
			},
			wantEvents:  []event{{corev1.EventTypeWarning, ReasonRestarting, "Restart", "Job js-workers-1 failed"}},
			wantCounted: map[string]float64{"restarts": 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// A namespace of its own: the counters are process-wide.
			tc.js.Namespace = "apply-" + t.Name()
			before := tc.js.DeepCopy()
			start := counters(tc.js.Namespace, tc.js.Name, tc.d.reason)
			u := nextReconcile(t, tc.js)
			u.apply(tc.d)

			if diff := cmp.Diff(tc.wantStatus, u.js.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, u.events, cmp.AllowUnexported(event{})); diff != "" {
				t.Errorf("queued events (-want +got):\n%s", diff)
			}
			checkOriginalUntouched(t, before, tc.js)

			// Queued, not recorded: apply counts nothing until the write
			// runs the recorded functions.
			if diff := cmp.Diff(start, counters(tc.js.Namespace, tc.js.Name, tc.d.reason)); diff != "" {
				t.Fatalf("counters moved before the write (-before +after):\n%s", diff)
			}
			for _, record := range u.recorded {
				record()
			}
			moved := map[string]float64{}
			for k, v := range counters(tc.js.Namespace, tc.js.Name, tc.d.reason) {
				if delta := v - start[k]; delta != 0 {
					moved[k] = delta
				}
			}
			if len(tc.wantCounted) == 0 {
				tc.wantCounted = map[string]float64{}
			}
			if diff := cmp.Diff(tc.wantCounted, moved); diff != "" {
				t.Errorf("counters moved by the write (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusUpdateSetRestarting(t *testing.T) {
	restarting := condition(jobset.JobSetRestarting, metav1.ConditionTrue, jobset.ReasonRecreatingJobs, "restart attempt 2: Job js-workers-0 failed", 1, earlier)
	recreated := condition(jobset.JobSetRestarting, metav1.ConditionFalse, jobset.ReasonJobsRecreated, "every Job of restart attempt 1 exists", 1, earlier)
	atAttempt2 := func(js *jobset.JobSet) { js.Status.Restarts = 2 }
	cases := map[string]struct {
		js             *jobset.JobSet
		inProgress     bool
		wantConditions []metav1.Condition
	}{
		"never restarted: no condition": {
			js: statusTestJobSet(nil),
		},
		"recreating, first seen: True now": {
			js:         statusTestJobSet(atAttempt2),
			inProgress: true,
			wantConditions: []metav1.Condition{
				condition(jobset.JobSetRestarting, metav1.ConditionTrue, jobset.ReasonRecreatingJobs, "recreating the Jobs of restart attempt 2", generation, now),
			},
		},
		"still recreating: True since earlier, message and generation current": {
			js:         statusTestJobSet(atAttempt2, restarting),
			inProgress: true,
			wantConditions: []metav1.Condition{
				condition(jobset.JobSetRestarting, metav1.ConditionTrue, jobset.ReasonRecreatingJobs, "recreating the Jobs of restart attempt 2", generation, earlier),
			},
		},
		"every Job recreated: False now": {
			js: statusTestJobSet(atAttempt2, restarting),
			wantConditions: []metav1.Condition{
				condition(jobset.JobSetRestarting, metav1.ConditionFalse, jobset.ReasonJobsRecreated, "every Job of restart attempt 2 exists", generation, now),
			},
		},
		"already recreated: left as it was": {
			js:             statusTestJobSet(atAttempt2, recreated),
			wantConditions: []metav1.Condition{recreated},
		},
		"a new restart after an earlier one: True again now": {
			js:         statusTestJobSet(atAttempt2, recreated),
			inProgress: true,
			wantConditions: []metav1.Condition{
				condition(jobset.JobSetRestarting, metav1.ConditionTrue, jobset.ReasonRecreatingJobs, "recreating the Jobs of restart attempt 2", generation, now),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkStep(t, tc.js, func(u *statusUpdate) { u.setRestarting(tc.inProgress) }, tc.wantConditions, nil)
		})
	}
}

func TestStatusUpdateSetStartupPolicy(t *testing.T) {
	order := func(o jobset.StartupPolicyOptions) func(*jobset.JobSet) {
		return func(js *jobset.JobSet) { js.Spec.StartupPolicy = &jobset.StartupPolicy{StartupPolicyOrder: o} }
	}
	const (
		inProgressMsg = "in order startup policy is in progress"
		completedMsg  = "in order startup policy has completed"
	)
	inProgress := condition(jobset.JobSetStartupPolicyInProgress, metav1.ConditionTrue, jobset.ReasonStartupPolicyInProgress, inProgressMsg, 1, earlier)
	completed := condition(jobset.JobSetStartupPolicyCompleted, metav1.ConditionTrue, jobset.ReasonStartupPolicyCompleted, completedMsg, 1, earlier)
	doneInProgress := condition(jobset.JobSetStartupPolicyInProgress, metav1.ConditionFalse, jobset.ReasonStartupPolicyInProgress, inProgressMsg, 1, earlier)
	cases := map[string]struct {
		js             *jobset.JobSet
		pending        bool
		wantConditions []metav1.Condition
	}{
		"no startup policy: no condition": {
			js:      statusTestJobSet(nil),
			pending: true,
		},
		"AnyOrder: no condition": {
			js:      statusTestJobSet(order(jobset.AnyOrder)),
			pending: true,
		},
		"InOrder, replicatedJobs pending: in progress now": {
			js:      statusTestJobSet(order(jobset.InOrder)),
			pending: true,
			wantConditions: []metav1.Condition{
				condition(jobset.JobSetStartupPolicyInProgress, metav1.ConditionTrue, jobset.ReasonStartupPolicyInProgress, inProgressMsg, generation, now),
			},
		},
		"InOrder, still pending: in progress since earlier": {
			js:      statusTestJobSet(order(jobset.InOrder), inProgress),
			pending: true,
			wantConditions: []metav1.Condition{
				condition(jobset.JobSetStartupPolicyInProgress, metav1.ConditionTrue, jobset.ReasonStartupPolicyInProgress, inProgressMsg, generation, earlier),
			},
		},
		"InOrder, every replicatedJob started: no longer in progress, completed, both now": {
			js: statusTestJobSet(order(jobset.InOrder), inProgress),
			wantConditions: []metav1.Condition{
				condition(jobset.JobSetStartupPolicyInProgress, metav1.ConditionFalse, jobset.ReasonStartupPolicyInProgress, inProgressMsg, generation, now),
				condition(jobset.JobSetStartupPolicyCompleted, metav1.ConditionTrue, jobset.ReasonStartupPolicyCompleted, completedMsg, generation, now),
			},
		},
		"InOrder, completed, then pending again after a restart: not reopened": {
			js:             statusTestJobSet(order(jobset.InOrder), doneInProgress, completed),
			pending:        true,
			wantConditions: []metav1.Condition{doneInProgress, completed},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkStep(t, tc.js, func(u *statusUpdate) { u.setStartupPolicy(tc.pending) }, tc.wantConditions, nil)
		})
	}
}

func TestStatusUpdateSetSuspended(t *testing.T) {
	suspend := func(s bool) func(*jobset.JobSet) {
		return func(js *jobset.JobSet) { js.Spec.Suspend = ptr.To(s) }
	}
	suspended := condition(jobset.JobSetSuspended, metav1.ConditionTrue, jobset.ReasonSuspended, "jobset is suspended", 1, earlier)
	resumed := condition(jobset.JobSetSuspended, metav1.ConditionFalse, jobset.ReasonResumed, "jobset is resumed", 1, earlier)
	// Written earlier at the current generation: nothing about it moves.
	suspendedNow := condition(jobset.JobSetSuspended, metav1.ConditionTrue, jobset.ReasonSuspended, "jobset is suspended", generation, earlier)
	cases := map[string]struct {
		js             *jobset.JobSet
		wantConditions []metav1.Condition
		wantEvents     []event
	}{
		"never suspended: no condition, no event": {
			js: statusTestJobSet(nil),
		},
		"suspended: True now, with an event": {
			js: statusTestJobSet(suspend(true)),
			wantConditions: []metav1.Condition{
				condition(jobset.JobSetSuspended, metav1.ConditionTrue, jobset.ReasonSuspended, "jobset is suspended", generation, now),
			},
			wantEvents: []event{{corev1.EventTypeNormal, jobset.ReasonSuspended, "Suspend", "suspended every child Job"}},
		},
		"still suspended: left as it was, no second event": {
			js:             statusTestJobSet(suspend(true), suspendedNow),
			wantConditions: []metav1.Condition{suspendedNow},
		},
		"still suspended, spec changed since: observedGeneration moves, no second event": {
			js: statusTestJobSet(suspend(true), suspended),
			wantConditions: []metav1.Condition{
				condition(jobset.JobSetSuspended, metav1.ConditionTrue, jobset.ReasonSuspended, "jobset is suspended", generation, earlier),
			},
		},
		"resumed: False now, with an event": {
			js: statusTestJobSet(suspend(false), suspended),
			wantConditions: []metav1.Condition{
				condition(jobset.JobSetSuspended, metav1.ConditionFalse, jobset.ReasonResumed, "jobset is resumed", generation, now),
			},
			wantEvents: []event{{corev1.EventTypeNormal, jobset.ReasonResumed, "Resume", "resumed every child Job"}},
		},
		"resumed earlier: left as it was, no event": {
			js:             statusTestJobSet(nil, resumed),
			wantConditions: []metav1.Condition{resumed},
		},
		"suspended again after a resume: True now, with an event": {
			js: statusTestJobSet(suspend(true), resumed),
			wantConditions: []metav1.Condition{
				condition(jobset.JobSetSuspended, metav1.ConditionTrue, jobset.ReasonSuspended, "jobset is suspended", generation, now),
			},
			wantEvents: []event{{corev1.EventTypeNormal, jobset.ReasonSuspended, "Suspend", "suspended every child Job"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkStep(t, tc.js, (*statusUpdate).setSuspended, tc.wantConditions, tc.wantEvents)
		})
	}
}

// TestWriteStatus: the queued events and metrics describe a persisted
// status, so they go out only once the write succeeded, in the order they
// were queued.
func TestWriteStatus(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	completed := decision{kind: completeJobSet, reason: jobset.ReasonAllJobsCompleted, message: "the success policy is met"}
	cases := map[string]struct {
		// gone: the JobSet was deleted since the reconcile read it.
		gone bool
		// writtenSince: the JobSet was written since the reconcile read it.
		writtenSince bool
		// change moves the status of the reconcile's copy, or queues an
		// event without moving it.
		change func(*statusUpdate)

		wantErr     func(error) bool
		wantPatches int
		// wantStored is the status the apiserver holds afterwards.
		wantStored   jobset.JobSetStatus
		wantEvents   []string
		wantRecorded int
	}{
		"status changed: written, then the events and metrics in order": {
			change: func(u *statusUpdate) {
				u.js.Spec.Suspend = ptr.To(true)
				u.setSuspended()
				u.apply(completed)
			},
			wantPatches: 1,
			wantStored: jobset.JobSetStatus{
				Conditions: []metav1.Condition{
					condition(jobset.JobSetSuspended, metav1.ConditionTrue, jobset.ReasonSuspended, "jobset is suspended", generation, now),
					condition(jobset.JobSetCompleted, metav1.ConditionTrue, jobset.ReasonAllJobsCompleted, "jobset completed successfully", generation, now),
				},
				TerminalState: string(jobset.JobSetCompleted),
			},
			wantEvents: []string{
				"Normal SuspendedJobs suspended every child Job",
				"Normal AllJobsCompleted the success policy is met",
			},
			wantRecorded: 1,
		},
		"status unchanged: no write, and what was queued is dropped": {
			change: func(u *statusUpdate) {
				u.event(corev1.EventTypeNormal, "Queued", "Test", "queued without a status change")
				u.recorded = append(u.recorded, func() {})
			},
		},
		"the JobSet was written since it was read: conflict, no event, no metric": {
			writtenSince: true,
			change:       func(u *statusUpdate) { u.apply(completed) },
			wantErr:      apierrors.IsConflict,
			wantPatches:  1,
		},
		"the JobSet is gone: not found, no event, no metric": {
			gone:        true,
			change:      func(u *statusUpdate) { u.apply(failDecision(jobset.ReasonFailedJobs, "Job js-workers-0 failed")) },
			wantErr:     apierrors.IsNotFound,
			wantPatches: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			patches := 0
			c := fake.NewClientBuilder().WithScheme(s).
				WithObjects(statusTestJobSet(nil)).
				WithStatusSubresource(&jobset.JobSet{}).
				WithInterceptorFuncs(interceptor.Funcs{
					SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
						patches++
						return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
					},
				}).Build()
			read := &jobset.JobSet{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(statusTestJobSet(nil)), read); err != nil {
				t.Fatal(err)
			}
			if tc.writtenSince {
				stored := read.DeepCopy()
				stored.Annotations = map[string]string{"written": "since"}
				if err := c.Update(ctx, stored); err != nil {
					t.Fatal(err)
				}
			}
			if tc.gone {
				if err := c.Delete(ctx, read.DeepCopy()); err != nil {
					t.Fatal(err)
				}
			}
			recorder := events.NewFakeRecorder(10)
			r := NewReconciler(c, recorder)
			u := nextReconcile(t, read)
			tc.change(u)
			recorded := 0
			for i, record := range u.recorded {
				u.recorded[i] = func() { recorded++; record() }
			}

			err := r.writeStatus(ctx, u)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("writeStatus: %v", err)
			case tc.wantErr != nil && !tc.wantErr(err):
				t.Fatalf("writeStatus returned %v, want another error", err)
			}
			if patches != tc.wantPatches {
				t.Errorf("%d status patches sent, want %d", patches, tc.wantPatches)
			}
			// writeStatus emits synchronously: what it sent is in the
			// channel now.
			close(recorder.Events)
			var emitted []string
			for e := range recorder.Events {
				emitted = append(emitted, e)
			}
			if diff := cmp.Diff(tc.wantEvents, emitted); diff != "" {
				t.Errorf("emitted events (-want +got):\n%s", diff)
			}
			if recorded != tc.wantRecorded {
				t.Errorf("%d metrics recorded, want %d", recorded, tc.wantRecorded)
			}
			if tc.gone {
				return
			}
			got := &jobset.JobSet{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(read), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantStored, got.Status); diff != "" {
				t.Errorf("stored status (-want +got):\n%s", diff)
			}
		})
	}
}
