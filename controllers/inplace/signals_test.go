package inplace

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
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
