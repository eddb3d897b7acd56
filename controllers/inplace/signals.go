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

// FailureSignal returns a lasting sign that the Pod's containers failed or
// are being restarted since the group synced at syncedAt, or "".
//
// The exit code of the container that triggered an in-place restart is
// visible in one Pod status update only (about 100 ms) before the kubelet
// replaces it, so a coalesced reconcile can miss it; the signals below last
// until the Pod has restarted, or, for the last one, until the next sync.
// A container that exited 0 is done, not failed. A zero syncedAt (sync time
// unknown) disables the restarted-since-sync signal.
func FailureSignal(pod *corev1.Pod, syncedAt time.Time) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == PodConditionAllContainersRestarting && c.Status == corev1.ConditionTrue {
			return "its containers are restarting (" + string(PodConditionAllContainersRestarting) + ")"
		}
	}
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, c := range statuses {
			if w := c.State.Waiting; w != nil && w.Reason == ReasonRestartingAllContainers {
				return fmt.Sprintf("container %s is waiting (%s)", c.Name, w.Reason)
			}
			if t := c.State.Terminated; t != nil && t.ExitCode != 0 {
				return fmt.Sprintf("container %s terminated with exit code %d", c.Name, t.ExitCode)
			}
			if t := c.LastTerminationState.Terminated; t != nil && !syncedAt.IsZero() &&
				t.FinishedAt.After(syncedAt) && (t.ExitCode != 0 || t.Reason == ReasonRestartingAllContainers) {
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
