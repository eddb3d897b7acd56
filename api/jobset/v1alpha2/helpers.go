package v1alpha2

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// RestartStrategyOf returns the JobSet's restart strategy, Recreate when
// unset (the schema's default).
func RestartStrategyOf(js *JobSet) JobSetRestartStrategy {
	if js.Spec.FailurePolicy == nil || js.Spec.FailurePolicy.RestartStrategy == "" {
		return Recreate
	}
	return js.Spec.FailurePolicy.RestartStrategy
}

// ChildrenSelector selects what the controller creates for JobSets (Jobs,
// their Pods, Services): objects labelled with a JobSet name. Caches
// restricted to it grow with JobSet workloads, not with the cluster.
func ChildrenSelector() labels.Selector {
	owned, err := labels.NewRequirement(JobSetNameKey, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant key: cannot fail
	}
	return labels.NewSelector().Add(*owned)
}

// VolumeClaimName is the name of the shared claim made from the
// volumeClaimPolicies template named template: <template>-<jobset>. It is
// also the name Pods mount it under.
func VolumeClaimName(template, jobSetName string) string {
	return template + "-" + jobSetName
}

// RetainsVolumeClaims reports whether the claims of policy outlive the
// JobSet (whenDeleted Retain); by default they are deleted with it.
func RetainsVolumeClaims(policy VolumeClaimPolicy) bool {
	return policy.RetentionPolicy != nil && policy.RetentionPolicy.WhenDeleted != nil &&
		*policy.RetentionPolicy.WhenDeleted == RetentionPolicyRetain
}

// MountsVolume reports whether a container or init container of pod mounts
// the volume named volume.
func MountsVolume(pod *corev1.PodSpec, volume string) bool {
	mounts := func(c corev1.Container) bool {
		return slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == volume })
	}
	return slices.ContainsFunc(pod.Containers, mounts) || slices.ContainsFunc(pod.InitContainers, mounts)
}

// ControllerMark returns the condition with which the controller marked the
// Pod Failed, for its Job to replace it and the Pod webhook to keep the
// replacement off its node: PodConditionReplacedOffNode (it failed in place
// again and again there), or DisruptionTarget with reason
// PodReasonNodeLost (its node was lost); nil when it carries neither.
//
// The mark, not the phase, takes the Pod out of its group for good. A
// kubelet that did not see the mark may write its own phase back over it
// (its status manager merges the phase it computed over a terminal one it
// did not set), but keeps the conditions it does not own: DisruptionTarget
// it replaces only with its own, as it ends the Pod itself.
func ControllerMark(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Status == corev1.ConditionTrue &&
			(c.Type == PodConditionReplacedOffNode || (c.Type == corev1.DisruptionTarget && c.Reason == PodReasonNodeLost)) {
			return c
		}
	}
	return nil
}

// NodeToKeepOff returns the node a Pod the controller marked
// (ControllerMark) keeps its successors off: its own, unless it was
// replaced only with its Job (PodReasonReplacedWithItsJob), which blames no
// node of its own. "" for a Pod not marked, or never scheduled.
func NodeToKeepOff(pod *corev1.Pod) string {
	mark := ControllerMark(pod)
	if mark == nil || (mark.Type == PodConditionReplacedOffNode && mark.Reason == PodReasonReplacedWithItsJob) {
		return ""
	}
	return pod.Spec.NodeName
}
