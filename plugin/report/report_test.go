package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

var base = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// inPlaceJobSet has one replicatedJob "w" of one Job of three Pods, and
// the epochs given.
func inPlaceJobSet(synced, deprecated int32, conditions ...metav1.Condition) *jobset.JobSet {
	js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).MaxRestarts(5).
		ReplicatedJob(wrappers.MakeReplicatedJob("w").Pods(3).InPlaceReady().Obj()).Obj()
	js.UID = "uid-1"
	js.Status.SyncedEpoch, js.Status.DeprecatedEpoch = ptr.To(synced), ptr.To(deprecated)
	js.Status.InPlaceRestarts = deprecated
	js.Status.Conditions = conditions
	return js
}

// member is a live, held, running Pod of the JobSet's group at epoch.
func member(js *jobset.JobSet, index, epoch string) corev1.Pod {
	pod := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "js-w-0-" + index, Namespace: "ns",
			Labels: map[string]string{jobset.JobSetNameKey: js.Name, jobset.JobSetUIDKey: string(js.UID), jobset.RestartsKey: "0",
				jobset.ReplicatedJobNameKey: "w", batchv1.JobNameLabel: "js-w-0"},
			Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: index, jobset.EpochKey: epoch},
			Finalizers:  []string{jobset.GroupMemberFinalizer},
		},
		Spec:   *js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.DeepCopy(),
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	pod.Spec.NodeName = "node-" + index
	agent := pod.Spec.InitContainers[0].Name
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: agent, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(base)}}}}
	return pod
}

func condition(t jobset.JobSetConditionType, status metav1.ConditionStatus, reason, message string, at time.Time) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(at)}
}

func TestReadStatusMembers(t *testing.T) {
	restarting := condition(jobset.JobSetInPlaceRestarting, metav1.ConditionTrue, jobset.ReasonInPlaceRestartStarted,
		inplace.RestartStartedNote(2, "Pod js-w-0-1 failed", 2), base)
	cases := map[string]struct {
		js           *jobset.JobSet
		pods         func(js *jobset.JobSet) []corev1.Pod
		wantStates   []string
		wantWhy      []string
		wantDecision string
		wantMissing  int32
	}{
		"in sync, every member joined": {
			js: inPlaceJobSet(2, 1),
			pods: func(js *jobset.JobSet) []corev1.Pod {
				return []corev1.Pod{member(js, "0", "2"), member(js, "1", "2"), member(js, "2", "2")}
			},
			wantStates:   []string{MemberJoined, MemberJoined, MemberJoined},
			wantWhy:      []string{"", "", ""},
			wantDecision: "nothing: the group runs",
		},
		"a restart in progress: one joined, one's agent crash-looping, one lost with its node, one Pod missing": {
			js: inPlaceJobSet(2, 2, restarting),
			pods: func(js *jobset.JobSet) []corev1.Pod {
				crashing := member(js, "1", "2")
				crashing.Status.InitContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
				lost := member(js, "2", "2")
				lost.Status.Phase = corev1.PodFailed
				lost.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: jobset.PodReasonNodeLost, Message: "its node's Lease expired"}}
				return []corev1.Pod{member(js, "0", "3"), crashing, lost}
			},
			wantStates:   []string{MemberJoined, MemberMissing, MemberLost},
			wantWhy:      []string{"", "its agent is waiting: CrashLoopBackOff", "node node-2 lost: its node's Lease expired; its containers may still run, and the group syncs only once they have stopped"},
			wantDecision: "wait for the group to gather at epoch 3: 2 Pods have not joined or have not stopped (js-w-0-1, js-w-0-2); 1 expected Pods do not exist (see the Jobs' events)",
			wantMissing:  1,
		},
		"every member joined: the controller syncs": {
			js: inPlaceJobSet(2, 2, restarting),
			pods: func(js *jobset.JobSet) []corev1.Pod {
				return []corev1.Pod{member(js, "0", "3"), member(js, "1", "3"), member(js, "2", "3")}
			},
			wantStates:   []string{MemberJoined, MemberJoined, MemberJoined},
			wantWhy:      []string{"", "", ""},
			wantDecision: "sync epoch 3: every live Pod joined it",
		},
		"a member being deleted and one not held yet": {
			js: inPlaceJobSet(2, 2, restarting),
			pods: func(js *jobset.JobSet) []corev1.Pod {
				deleting := member(js, "0", "3")
				deleting.DeletionTimestamp = ptr.To(metav1.NewTime(base))
				unheld := member(js, "1", "3")
				unheld.Finalizers = nil
				return []corev1.Pod{deleting, unheld, member(js, "2", "3")}
			},
			wantStates: []string{MemberTerminating, MemberJoined, MemberJoined},
			wantWhy: []string{"being deleted; its containers may still run, and the group syncs only once they have stopped",
				"not yet held by the finalizer jobset.sigs.k8s.io/group-member (no epoch syncs until it is)", ""},
			wantDecision: "wait for the group to gather at epoch 3: 1 Pods have not joined or have not stopped (js-w-0-0); 1 expected Pods do not exist (see the Jobs' events)",
			wantMissing:  1,
		},
		"in sync, a member restarted into the next epoch": {
			js: inPlaceJobSet(2, 1),
			pods: func(js *jobset.JobSet) []corev1.Pod {
				return []corev1.Pod{member(js, "0", "2"), member(js, "1", "3"), member(js, "2", "2")}
			},
			wantStates:   []string{MemberJoined, MemberMissing, MemberJoined},
			wantWhy:      []string{"", "it restarted and joined epoch 3: a group restart starts", ""},
			wantDecision: "start a group restart (epoch 2 and below restart in place): Pod js-w-0-1 joined epoch 3",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := mustReadStatus(t, tc.js, tc.pods(tc.js))
			var states, whys []string
			for _, m := range s.Members {
				states, whys = append(states, m.State), append(whys, m.Why)
			}
			if diff := cmp.Diff(tc.wantStates, states); diff != "" {
				t.Errorf("states (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWhy, whys); diff != "" {
				t.Errorf("why (-want +got):\n%s", diff)
			}
			if s.Decision != tc.wantDecision {
				t.Errorf("decision %q, want %q", s.Decision, tc.wantDecision)
			}
			if s.MissingPods != tc.wantMissing {
				t.Errorf("missing Pods %d, want %d", s.MissingPods, tc.wantMissing)
			}
		})
	}
}

// A restart of the worker's process moves no restartCount: the status
// shows each member's worker restarts as its agent last reported them.
func TestReadStatusWorkerRestarts(t *testing.T) {
	js := inPlaceJobSet(2, 1)
	reported := member(js, "0", "2")
	reported.Annotations[agentspec.WorkerRestartsAnnotation] = "process=3,pod=1,epoch=2,tier=process"
	s := mustReadStatus(t, js, []corev1.Pod{reported, member(js, "1", "2")})
	want := []*agentspec.WorkerRestarts{{Process: 3, Pod: 1, Epoch: 2, Tier: agentspec.TierProcess}, nil}
	var got []*agentspec.WorkerRestarts
	for _, m := range s.Members {
		got = append(got, m.WorkerRestarts)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("worker restarts (-want +got):\n%s", diff)
	}
	var out bytes.Buffer
	if err := WriteStatus(&out, s, base); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"WORKER RESTARTS", "3 process, 1 pod"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestReadStatusBudget(t *testing.T) {
	js := inPlaceJobSet(4, 4)
	js.Status.RestartsCountTowardsMax = 1
	js.Status.ReplicatedJobsStatus = []jobset.ReplicatedJobStatus{{Name: "w", JobRestartsCountTowardsMax: []int32{1}}}
	got := mustReadStatus(t, js, nil).Budget
	want := Budget{MaxRestarts: 5, Used: 6, FullRestarts: 1, OneJobRestarts: 1, InPlaceRestarts: 4, Left: 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("budget (-want +got):\n%s", diff)
	}
	if used := inplace.RestartsUsed(js); got.Used != used {
		t.Errorf("budget used %d, the controller counts %d", got.Used, used)
	}
}

func TestReadStatusOfARecreateJobSet(t *testing.T) {
	js := wrappers.MakeJobSet("js", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("w").Obj()).Obj()
	s := mustReadStatus(t, js, nil)
	if s.State != "not restarting in place (restartStrategy Recreate)" || s.Decision != "" || len(s.Members) != 0 {
		t.Errorf("got state %q, decision %q, members %v", s.State, s.Decision, s.Members)
	}
}

func event(js *jobset.JobSet, reason, note string, at time.Time) eventsv1.Event {
	return eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: reason + at.Format("150405"), Namespace: js.Namespace},
		EventTime:  metav1.NewMicroTime(at),
		Regarding:  corev1.ObjectReference{Kind: "JobSet", Name: js.Name, UID: js.UID},
		Reason:     reason,
		Note:       note,
	}
}

func TestReadTimeline(t *testing.T) {
	started := condition(jobset.JobSetInPlaceRestarting, metav1.ConditionTrue, jobset.ReasonInPlaceRestartStarted,
		inplace.RestartStartedNote(3, "Pod js-w-0-1: container worker restarted after exiting with code 1", 3), base.Add(time.Hour))
	js := inPlaceJobSet(3, 3, started)
	other := inPlaceJobSet(3, 3)
	other.UID = "uid-other"
	failing := member(js, "1", "3")
	failing.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", LastTerminationState: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.NewTime(base.Add(time.Hour - time.Second))}}}}
	joined := member(js, "0", "4")
	joined.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "jobset-agent", Operation: metav1.ManagedFieldsOperationUpdate,
		Time: ptr.To(metav1.NewTime(base.Add(time.Hour + 2*time.Second))), FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:` + jobset.EpochKey + `":{}}}}`)}}
	joined.Annotations[agentspec.WorkerRestartsAnnotation] = "process=2,pod=0,epoch=4,tier=process"
	events := []eventsv1.Event{
		// Out of order, the condition's restart also as an event, and an
		// event of another JobSet of the same name.
		event(js, jobset.ReasonInPlaceRestartStarted, started.Message, base.Add(time.Hour)),
		event(js, jobset.ReasonInPlaceRestartCompleted, inplace.WithTiers(inplace.RestartCompletedInNote(2, 4*time.Second, 3), inplace.Tiers{Process: 2, Pod: 1, Replaced: 1}), base.Add(34*time.Minute)),
		event(js, jobset.ReasonInPlaceRestartStarted, inplace.RestartStartedNote(2, "Pod js-w-0-2 failed", 2), base.Add(30*time.Minute)),
		event(js, jobset.ReasonInPlaceRestartStarted, inplace.RestartStartedNote(1, "Pod js-w-0-0 failed", 1), base),
		event(js, "NodeLost", "node node-2 lost", base.Add(time.Hour+time.Second)),
		event(other, jobset.ReasonInPlaceRestartStarted, inplace.RestartStartedNote(9, "Pod x failed", 9), base),
	}
	got := ReadTimeline(js, []corev1.Pod{joined, failing}, events, 2)
	type row struct {
		Restart           int32
		Phase, Pod, Clock string
		After             time.Duration
	}
	var rows []row
	for _, r := range got {
		for _, p := range r.Phases {
			rows = append(rows, row{r.Number, p.Phase, p.Pod, p.Clock, r.Since(p)})
		}
	}
	want := []row{
		{2, PhaseDeprecated, "", ClockController, 0},
		{2, PhaseSynced, "", ClockController, 4 * time.Minute},
		{3, PhaseFailure, "js-w-0-1", ClockNode, -time.Second},
		{3, PhaseDeprecated, "", ClockController, 0},
		{3, PhaseEvent, "", ClockController, time.Second},
		{3, PhaseJoined, "js-w-0-0", ClockAPIServer, 2 * time.Second},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	if len(got) != 2 || got[0].InProgress || !got[1].InProgress || got[0].Took != 4*time.Second || got[1].Deprecated != 3 {
		t.Errorf("restarts %+v", got)
	}
	if want := (inplace.Tiers{Process: 2, Pod: 1, Replaced: 1}); got[0].Back == nil || *got[0].Back != want || got[1].Back != nil {
		t.Errorf("how the members came back: %v and %v, want %v and none (in progress)", got[0].Back, got[1].Back, want)
	}

	var out bytes.Buffer
	if err := WriteTimeline(&out, got); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"container worker exited with code 1", "-1.000s", "+2.000s", "InProgress", "NodeLost: node node-2 lost",
		"2 by restarting the worker's process, 1 by restarting its containers, 1 replaced", "joined epoch 4 by restarting the worker's process"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("timeline table lacks %q:\n%s", want, out.String())
		}
	}
}

// mustReadStatus reads the default group's status.
func mustReadStatus(t *testing.T, js *jobset.JobSet, pods []corev1.Pod) Status {
	t.Helper()
	s, err := ReadStatus(js, "", pods, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestReadStatusOfAGroup: a JobSet that names groups is read one group
// at a time, by name; an unknown name, or none without a default group,
// is refused with the groups it has.
func TestReadStatusOfAGroup(t *testing.T) {
	js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
		ReplicatedJob(wrappers.MakeReplicatedJob("trunk").InPlaceReady().InPlaceGroup("trunk").Obj()).
		ReplicatedJob(wrappers.MakeReplicatedJob("head").InPlaceReady().InPlaceGroup("head").Obj()).Obj()
	js.Status.InPlaceGroups = []jobset.InPlaceGroupStatus{{Name: "head", SyncedEpoch: ptr.To[int32](3), DeprecatedEpoch: ptr.To[int32](3),
		Conditions: []metav1.Condition{{Type: string(jobset.JobSetInPlaceRestarting), Status: metav1.ConditionTrue, Reason: jobset.ReasonInPlaceRestartStarted, Message: `in-place group "head": ...`}}}}
	s, err := ReadStatus(js, "head", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Group != "head" || s.Synced != 3 || s.Deprecated != 3 || !slices.Equal(s.Groups, []string{"trunk", "head"}) {
		t.Errorf("group %q, epochs %d/%d, groups %v; want head, 3/3, [trunk head]", s.Group, s.Synced, s.Deprecated, s.Groups)
	}
	if len(s.Conditions) != 1 || s.Conditions[0].Reason != jobset.ReasonInPlaceRestartStarted {
		t.Errorf("conditions %+v, want the group's InPlaceRestarting", s.Conditions)
	}
	for _, name := range []string{"", "tail"} {
		if _, err := ReadStatus(js, name, nil, nil); err == nil || !strings.Contains(err.Error(), "its groups are trunk, head; name one with --group") {
			t.Errorf("group %q: %v, want an error naming the groups", name, err)
		}
	}
}
