package jobsetcontroller

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

func TestStalledGather(t *testing.T) {
	start := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	threshold := 5 * time.Minute
	// restarting: a group restart from epoch 3 that started at start.
	restarting := func() *jobset.JobSet {
		js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		js.Status.SyncedEpoch, js.Status.DeprecatedEpoch = ptr.To[int32](3), ptr.To[int32](3)
		js.Status.Conditions = []metav1.Condition{{Type: string(jobset.JobSetInPlaceRestarting), Status: metav1.ConditionTrue,
			Reason: jobset.ReasonInPlaceRestartStarted, LastTransitionTime: metav1.NewTime(start)}}
		return js
	}
	synced := func() *jobset.JobSet {
		js := restarting()
		js.Status.Conditions[0].Status = metav1.ConditionFalse
		return js
	}
	firstRun := func() *jobset.JobSet {
		js := restarting()
		js.Status.SyncedEpoch, js.Status.DeprecatedEpoch, js.Status.Conditions = nil, nil, nil
		js.CreationTimestamp = metav1.NewTime(start)
		return js
	}
	agentPod := func(name, epoch string, agent corev1.ContainerStatus) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{}},
			Spec:       corev1.PodSpec{InitContainers: []corev1.Container{sidecar.Container(sidecar.Options{Image: "agent"})}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, InitContainerStatuses: []corev1.ContainerStatus{agent}},
		}
		if epoch != "" {
			p.Annotations[jobset.EpochKey] = epoch
		}
		return p
	}
	running := corev1.ContainerStatus{Name: agentspec.ContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	configError := running
	configError.RestartCount = 7
	configError.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: agentspec.ExitConfigError}}
	imagePull := corev1.ContainerStatus{Name: agentspec.ContainerName, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
		Reason: "ImagePullBackOff", Message: "Back-off pulling image \"agent\""}}}
	unscheduled := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "w-3"}, Status: corev1.PodStatus{Phase: corev1.PodPending,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."}}}}

	// A Job deleted by hand: its old Pod still stops while its new one
	// joined.
	groupRestarting := func() *jobset.JobSet {
		js := restarting()
		js.Spec.ReplicatedJobs[0] = wrappers.MakeReplicatedJob("workers").InPlaceReady().Obj()
		return js
	}
	stopping := agentPod("w-1-old", "3", running)
	stopping.Labels = map[string]string{jobset.ReplicatedJobNameKey: "workers"}
	stopping.DeletionTimestamp = &metav1.Time{Time: start}

	communityAgentPod := agentPod("w-0", "", running)
	communityAgentPod.Spec.InitContainers[0].Image = "registry.example.com/jobset/in-place-restart-agent:v0.12.0"

	unheldMember := agentPod("w-0", "4", running)
	unheldMember.Labels = map[string]string{jobset.ReplicatedJobNameKey: "workers"}

	cases := []struct {
		name      string
		js        *jobset.JobSet
		pods      []*corev1.Pod
		expected  int32
		now       time.Time
		want      []string // substrings of the report; nil: no report
		lookAgain time.Duration
	}{
		{"in sync: nothing gathers", synced(), []*corev1.Pod{agentPod("w-0", "3", running)}, 1, start.Add(time.Hour), nil, 0},
		{"a gather under the threshold: look again when it is reached", restarting(),
			[]*corev1.Pod{agentPod("w-0", "", configError)}, 1, start.Add(time.Minute), nil, 4 * time.Minute},
		{"every Pod joined: the sync is the controller's next step", restarting(),
			[]*corev1.Pod{agentPod("w-0", "4", running)}, 1, start.Add(time.Hour), nil, 0},
		{"an agent with a configuration error", restarting(),
			[]*corev1.Pod{agentPod("w-0", "4", running), agentPod("w-1", "", configError)}, 2, start.Add(6 * time.Minute),
			[]string{"gathering at epoch 4 for 6m0s", "1 of 2 have not joined", "w-1 (its agent exits with code 2, a configuration error, and has restarted 7 times"}, 0},
		{"an agent that cannot write its Pod (RBAC)", restarting(),
			[]*corev1.Pod{agentPod("w-0", "3", running)}, 1, start.Add(6 * time.Minute),
			[]string{"w-0 (its agent runs but has not written its Pod's epoch: a 403"}, 0},
		{"community JobSet's agent, in a JobSet admitted before ours replaced community's", restarting(),
			[]*corev1.Pod{communityAgentPod}, 1, start.Add(6 * time.Minute),
			[]string{"w-0 (its agent is community JobSet's in-place restart agent (its image is in-place-restart-agent)", `recreate the JobSet with this controller's agent (annotation jobset.sigs.k8s.io/inject-agent: "true")`}, 0},
		{"an agent image that cannot be pulled", restarting(),
			[]*corev1.Pod{agentPod("w-0", "", imagePull)}, 1, start.Add(6 * time.Minute),
			[]string{"its agent is waiting: ImagePullBackOff: Back-off pulling image"}, 0},
		{"a Pod of the group still stopping", groupRestarting(),
			[]*corev1.Pod{agentPod("w-0", "4", running), agentPod("w-1", "4", running), stopping}, 2, start.Add(6 * time.Minute),
			[]string{"1 are being deleted or were marked Failed and have not stopped, and the group syncs only once they have", "w-1-old"}, 0},
		{"a Pod the controller could not hold", groupRestarting(),
			[]*corev1.Pod{unheldMember}, 1, start.Add(6 * time.Minute),
			[]string{"1 do not carry the finalizer jobset.sigs.k8s.io/group-member", "can it patch Pods?", "w-0"}, 0},
		{"an unschedulable Pod and a Pod not created", firstRun(), []*corev1.Pod{unscheduled}, 3, start.Add(6 * time.Minute),
			[]string{"gathering at epoch 1", "w-3 (not scheduled: 0/1 nodes are available", "2 expected Pods do not exist"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			report, lookAgain := stalledGather(tc.js, inplace.DefaultGroup(tc.js), tc.pods, tc.expected, tc.now, threshold)
			if tc.want == nil && report != "" {
				t.Errorf("report %q, want none", report)
			}
			for _, w := range tc.want {
				if !strings.Contains(report, w) {
					t.Errorf("report %q lacks %q", report, w)
				}
			}
			if lookAgain != tc.lookAgain {
				t.Errorf("look again in %s, want %s", lookAgain, tc.lookAgain)
			}
		})
	}
}

func TestStalledGatherMessageIsBounded(t *testing.T) {
	js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
	var pods []*corev1.Pod
	for i := range 5000 {
		pods = append(pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("w", 200) + strings.Repeat("x", i%7)},
			Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: strings.Repeat("no node ", 1000)}}}})
	}
	report, _ := stalledGather(js, inplace.DefaultGroup(js), pods, 5000, time.Now().Add(time.Hour), time.Minute)
	if len(report) > 8<<10 || !strings.Contains(report, "and 4990 more") {
		t.Errorf("report of %d bytes, want a bounded one that counts the rest: %.300s", len(report), report)
	}
}
