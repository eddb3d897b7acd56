package jobsetcontroller

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// cachePod is the cache's transform of a Pod (cache.ByObject.Transform):
// the Pod as the controller keeps it, cachedPod.
func cachePod(obj any) (any, error) {
	if pod, ok := obj.(*corev1.Pod); ok {
		return cachedPod(pod), nil
	}
	return obj, nil
}

// cachedPod is what the manager's cache keeps of a Pod: what the
// reconcilers, the Pod event pacer and the node-loss logic read of it, and
// nothing else. A Pod as the API server serves it is mostly what no
// decision reads (its managedFields, its containers' specs, its volumes);
// at thousands of Pods that was most of the controller's memory.
//
// Kept, by who reads it:
//   - name, namespace, UID, resourceVersion, labels, annotations,
//     finalizers, and the creation and deletion times and grace: the
//     cache's indexes and selectors, the epoch protocol (inplace.ReadPod,
//     members.go), the placement controller, the UID preconditions of
//     deletes;
//   - the managedFields entries that date the agent's join and the
//     kubelet's status posts, cut down to those paths
//     (inplace.ManagedFieldsRead: inplace.FailureSignal);
//   - spec.nodeName, spec.nodeSelector and the required node affinity
//     (node loss, placement, keepoff.Nodes);
//   - every container's name; of the init containers, the restart policy
//     and rules (sidecar.Index finds the agent by them), and of an agent
//     its image and env (community's agent, the fence settings:
//     agentFence);
//   - status.phase, the conditions, and the containers' statuses' names,
//     states, last terminations and restart counts (inplace.FailureSignal,
//     Stopping, WhyNotJoined, EndsJob, the controller's marks).
//
// The controller writes no Pod from the cache: its Pod writes are patches
// it builds from nothing (the finalizer, the failure mark, the failures in
// place) and deletes guarded by UID, so nothing cut here can be written
// back. The fresh reads (readFresh) are whole Pods: the decisions read
// both alike. Applying cachedPod again changes nothing, as a cache's
// transform must.
func cachedPod(pod *corev1.Pod) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: pod.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:                       pod.Name,
			Namespace:                  pod.Namespace,
			UID:                        pod.UID,
			ResourceVersion:            pod.ResourceVersion,
			CreationTimestamp:          pod.CreationTimestamp,
			DeletionTimestamp:          pod.DeletionTimestamp,
			DeletionGracePeriodSeconds: pod.DeletionGracePeriodSeconds,
			Labels:                     pod.Labels,
			Annotations:                pod.Annotations,
			Finalizers:                 pod.Finalizers,
			ManagedFields:              inplace.ManagedFieldsRead(pod.ManagedFields),
		},
		Spec: corev1.PodSpec{
			NodeName:       pod.Spec.NodeName,
			NodeSelector:   pod.Spec.NodeSelector,
			Affinity:       requiredNodeAffinity(pod.Spec.Affinity),
			InitContainers: cachedContainers(pod.Spec.InitContainers, true),
			Containers:     cachedContainers(pod.Spec.Containers, false),
		},
		Status: corev1.PodStatus{
			Phase:                 pod.Status.Phase,
			Conditions:            pod.Status.Conditions,
			InitContainerStatuses: cachedStatuses(pod.Status.InitContainerStatuses),
			ContainerStatuses:     cachedStatuses(pod.Status.ContainerStatuses),
		},
	}
}

// requiredNodeAffinity keeps the node affinity the scheduler must meet,
// where keepoff reads the nodes a replacement is kept off.
func requiredNodeAffinity(a *corev1.Affinity) *corev1.Affinity {
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution}}
}

// cachedContainers keeps each container's name; of init containers, what
// tells the agent (sidecar.Index) and, of an agent, its image and env.
func cachedContainers(containers []corev1.Container, init bool) []corev1.Container {
	if containers == nil {
		return nil
	}
	out := make([]corev1.Container, len(containers))
	for i, c := range containers {
		out[i].Name = c.Name
		if !init {
			continue
		}
		out[i].RestartPolicy, out[i].RestartPolicyRules = c.RestartPolicy, c.RestartPolicyRules
		if ptr.Deref(c.RestartPolicy, "") == corev1.ContainerRestartPolicyAlways && sidecar.HasRestartAllRule(c) {
			out[i].Image, out[i].Env = c.Image, c.Env
		}
	}
	return out
}

// cachedStatuses keeps each container's name, state, last termination and
// restart count; of a termination, its exit code and times only (its
// message alone may be 4 KiB).
func cachedStatuses(statuses []corev1.ContainerStatus) []corev1.ContainerStatus {
	if statuses == nil {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(statuses))
	for i, s := range statuses {
		out[i] = corev1.ContainerStatus{Name: s.Name, RestartCount: s.RestartCount,
			State: cachedState(s.State), LastTerminationState: cachedState(s.LastTerminationState)}
	}
	return out
}

func cachedState(s corev1.ContainerState) corev1.ContainerState {
	if t := s.Terminated; t != nil {
		s.Terminated = &corev1.ContainerStateTerminated{ExitCode: t.ExitCode, StartedAt: t.StartedAt, FinishedAt: t.FinishedAt}
	}
	return s
}
