package inplace

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestEndsJob(t *testing.T) {
	terminated := func(container string, code int32) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{Name: container, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}},
		}}}
	}
	exitCodes := func(action batchv1.PodFailurePolicyAction, container *string, op batchv1.PodFailurePolicyOnExitCodesOperator, codes ...int32) batchv1.PodFailurePolicyRule {
		return batchv1.PodFailurePolicyRule{Action: action, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{ContainerName: container, Operator: op, Values: codes}}
	}
	failOn42 := &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		exitCodes(batchv1.PodFailurePolicyActionFailJob, ptr.To("worker"), batchv1.PodFailurePolicyOnExitCodesOpIn, 42),
	}}
	cases := map[string]struct {
		pod    *corev1.Pod
		policy *batchv1.PodFailurePolicy
		want   bool
	}{
		"no policy":                        {pod: terminated("worker", 42)},
		"the fatal code":                   {pod: terminated("worker", 42), policy: failOn42, want: true},
		"another code":                     {pod: terminated("worker", 43), policy: failOn42},
		"the code, from another container": {pod: terminated("jobset-agent", 42), policy: failOn42},
		"still running":                    {pod: &corev1.Pod{}, policy: failOn42},
		"exit 0 never matches, even NotIn": {
			pod: terminated("worker", 0),
			policy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				exitCodes(batchv1.PodFailurePolicyActionFailJob, nil, batchv1.PodFailurePolicyOnExitCodesOpNotIn, 1),
			}},
		},
		"the first matching rule decides: Ignore before FailJob": {
			pod: terminated("worker", 42),
			policy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				exitCodes(batchv1.PodFailurePolicyActionIgnore, nil, batchv1.PodFailurePolicyOnExitCodesOpIn, 42),
				exitCodes(batchv1.PodFailurePolicyActionFailJob, nil, batchv1.PodFailurePolicyOnExitCodesOpIn, 42),
			}},
		},
		"FailIndex ends the index, and so the group's run": {
			pod: terminated("worker", 42),
			policy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				exitCodes(batchv1.PodFailurePolicyActionFailIndex, nil, batchv1.PodFailurePolicyOnExitCodesOpIn, 42),
			}},
			want: true,
		},
		"a Pod condition": {
			pod: &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}}},
			policy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:          batchv1.PodFailurePolicyActionFailJob,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
			}}},
			want: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := EndsJob(tc.pod, tc.policy); got != tc.want {
				t.Errorf("EndsJob = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFailureSignal(t *testing.T) {
	synced := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	before, after := metav1.NewTime(synced.Add(-time.Second)), metav1.NewTime(synced.Add(time.Second))
	withContainer := func(cs corev1.ContainerStatus) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{cs}}}
	}
	restarting := func(at metav1.Time) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: PodConditionAllContainersRestarting, Status: corev1.ConditionTrue, LastTransitionTime: at},
		}}}
	}
	exited := func(code int32, reason string, at metav1.Time) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "worker", LastTerminationState: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, FinishedAt: at}}}
	}
	cases := map[string]struct {
		pod      *corev1.Pod
		syncedAt time.Time
		want     bool
	}{
		"a running Pod":                             {pod: &corev1.Pod{}, syncedAt: synced},
		"restarting since the sync":                 {pod: restarting(after), syncedAt: synced, want: true},
		"the restart that led to the sync, late":    {pod: restarting(before), syncedAt: synced},
		"restarting, set in the second of the sync": {pod: restarting(metav1.NewTime(synced)), syncedAt: synced},
		"the worker exited in the second of the sync": {
			pod: withContainer(corev1.ContainerStatus{Name: "worker", State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.NewTime(synced)}}}),
			syncedAt: synced, want: true,
		},
		"the worker just exited 1": {
			pod: withContainer(corev1.ContainerStatus{Name: "worker", State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: after}}}),
			syncedAt: synced, want: true,
		},
		"the worker restarted after exiting 1 since the sync":  {pod: withContainer(exited(1, "Error", after)), syncedAt: synced, want: true},
		"the worker restarted after exiting 1 before the sync": {pod: withContainer(exited(1, "Error", before)), syncedAt: synced},
		"killed for a restart: no time, no sign":               {pod: withContainer(exited(137, ReasonRestartingAllContainers, metav1.Time{})), syncedAt: synced},
		"waiting to restart: no time, no sign": {
			pod: withContainer(corev1.ContainerStatus{Name: "jobset-agent", State: corev1.ContainerState{
				Waiting: &corev1.ContainerStateWaiting{Reason: ReasonRestartingAllContainers}}}),
			syncedAt: synced,
		},
		"sync time unknown: any dated sign": {pod: withContainer(exited(1, "Error", before)), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := FailureSignal(tc.pod, tc.syncedAt); (got != "") != tc.want {
				t.Errorf("FailureSignal = %q, want a sign: %v", got, tc.want)
			}
		})
	}
}
