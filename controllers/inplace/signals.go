package inplace

import (
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// Kubelet names of the RestartAllContainers action (KEP-5532): the Pod
// condition set while it runs, and the reason containers show meanwhile and
// afterwards.
const (
	PodConditionAllContainersRestarting corev1.PodConditionType = "AllContainersRestarting"
	ReasonRestartingAllContainers                               = "RestartingAllContainers"
)

// FailureSignal returns a sign that the Pod's containers failed or began
// restarting since the group synced at syncedAt, or "".
//
// The exit code of the container that triggered an in-place restart is
// visible in one Pod status update only (about 100 ms) before the kubelet
// replaces it, so a coalesced reconcile can miss it; its last termination
// state lasts until the next restart. Every sign must be dated, and not
// before the sync (times have a one-second resolution): the kubelet
// reports a Pod's status up to a second late, so right after a group
// synced a member can still show the restart that brought it there, which
// must not start another one. Containers waiting with reason
// RestartingAllContainers, and those the kubelet killed for a restart,
// carry no time, so they are no sign; the container that triggered the
// restart is. The Pod condition AllContainersRestarting, set when the
// restart begins, counts only from the second after the sync. A zero
// syncedAt (sync time unknown) accepts every dated sign.
func FailureSignal(pod *corev1.Pod, syncedAt time.Time) string {
	since := func(t time.Time) bool { return !t.IsZero() && !t.Before(syncedAt) }
	for _, c := range pod.Status.Conditions {
		if c.Type == PodConditionAllContainersRestarting && c.Status == corev1.ConditionTrue && c.LastTransitionTime.After(syncedAt) {
			return "its containers are restarting (" + string(PodConditionAllContainersRestarting) + ")"
		}
	}
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, c := range statuses {
			if t := c.State.Terminated; t != nil && t.ExitCode != 0 && since(t.FinishedAt.Time) {
				return fmt.Sprintf("container %s terminated with exit code %d", c.Name, t.ExitCode)
			}
			if t := c.LastTerminationState.Terminated; t != nil && t.ExitCode != 0 && since(t.FinishedAt.Time) {
				return fmt.Sprintf("container %s restarted after exiting with code %d at %s", c.Name, t.ExitCode, t.FinishedAt.UTC().Format(time.RFC3339))
			}
		}
	}
	return ""
}

// EndsJob reports whether the Pod's failure ends its Job rather than its
// group: the first rule of the Job's podFailurePolicy that matches the Pod
// (as the Job controller matches them) fails the Job or the Pod's index.
// Such a failure must not start a group restart: the Job fails, and the
// JobSet's failure policy decides (for example FailJobSet at once).
//
// Rules are matched on containers that have terminated already, before the
// Pod is Failed, because the group restart would otherwise start first.
// Exit code 0 never matches, as in the Job controller.
func EndsJob(pod *corev1.Pod, policy *batchv1.PodFailurePolicy) bool {
	if policy == nil {
		return false
	}
	for _, rule := range policy.Rules {
		if !ruleMatches(pod, rule) {
			continue
		}
		return rule.Action == batchv1.PodFailurePolicyActionFailJob || rule.Action == batchv1.PodFailurePolicyActionFailIndex
	}
	return false
}

func ruleMatches(pod *corev1.Pod, rule batchv1.PodFailurePolicyRule) bool {
	if r := rule.OnExitCodes; r != nil {
		for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
			for _, c := range statuses {
				t := c.State.Terminated
				if t == nil || t.ExitCode == 0 || (r.ContainerName != nil && *r.ContainerName != c.Name) {
					continue
				}
				if slices.Contains(r.Values, t.ExitCode) == (r.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn) {
					return true
				}
			}
		}
		return false
	}
	for _, p := range rule.OnPodConditions {
		for _, c := range pod.Status.Conditions {
			if c.Type == p.Type && c.Status == p.Status {
				return true
			}
		}
	}
	return false
}
