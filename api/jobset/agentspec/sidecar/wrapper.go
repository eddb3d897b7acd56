package sidecar

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// The worker wrapper (agent/wrapper) lets the agent stop its worker's
// whole process tree itself and confirm that nothing of it is left,
// instead of relying on the kubelet alone. Injection puts it in place when
// it can tell which container is the worker and what that container runs:
// the Pod has one container, and that container names its command (an
// image's entrypoint is not in the Pod spec, so the webhook cannot wrap
// it). Elsewhere the Pod restarts its containers through the kubelet
// only, as without the wrapper.

// WorkerToWrap is the index of the container injection wraps in pod, or
// -1 and why it wraps none, as a sentence that names the fix.
func WorkerToWrap(pod corev1.PodSpec) (int, string) {
	switch {
	case len(pod.Containers) != 1:
		return -1, fmt.Sprintf("the Pod has %d containers and the worker wrapper stops one: run helpers as sidecars (init containers with restartPolicy: Always) so that the worker is the only container", len(pod.Containers))
	case len(pod.Containers[0].Command) == 0:
		return -1, fmt.Sprintf("container %q sets no command, so the webhook cannot tell what its image runs: set command (the image's entrypoint) and keep args as they are", pod.Containers[0].Name)
	}
	return 0, ""
}

// Wrapped reports whether pod's worker already runs under the wrapper
// that injection installs.
func Wrapped(pod corev1.PodSpec) bool {
	return slices.ContainsFunc(pod.InitContainers, func(c corev1.Container) bool { return c.Name == agentspec.WrapperInstallerName }) ||
		slices.ContainsFunc(pod.Containers, func(c corev1.Container) bool {
			return len(c.Command) > 0 && c.Command[0] == agentspec.WrapperBinary
		})
}

// InjectWrapper runs the worker of a Pod whose agent is in place under the
// worker wrapper, and tells the agent where the wrapper listens:
//
//   - an init container of the agent's image, ahead of the agent, copies
//     the wrapper into the emptyDir WrapperVolume (the agent's startup
//     probe, the barrier, holds back every init container after it);
//   - the worker's command becomes the wrapper, its control socket, and
//     the worker's own command; its args stay args, so the wrapper gets
//     the command followed by the args, as the container would have run
//     them;
//   - the worker mounts the volume, where the wrapper makes its socket
//     and the worker reports its progress (agentspec.EnvProgressFile),
//     and the agent mounts it read-only with the socket's path in
//     agentspec.EnvWrapperControl.
//
// It returns false and changes nothing when the Pod has no agent, is
// wrapped already, or WorkerToWrap wraps no container. The installer
// runs as the agent does (SecurityContext: the restricted Pod Security
// Standard, no capability), with the agent's resources, so that the Pod's
// QoS class and effective requests stay what they were.
func InjectWrapper(pod *corev1.PodSpec, o Options) bool {
	agent := Index(*pod)
	worker, _ := WorkerToWrap(*pod)
	if agent < 0 || worker < 0 || Wrapped(*pod) {
		return false
	}
	installer := corev1.Container{
		Name:            agentspec.WrapperInstallerName,
		Image:           o.Image,
		Command:         []string{agentspec.WrapperImagePath, "-install=" + agentspec.WrapperBinary},
		Resources:       *pod.InitContainers[agent].Resources.DeepCopy(),
		SecurityContext: SecurityContext(),
		VolumeMounts:    []corev1.VolumeMount{{Name: agentspec.WrapperVolumeName, MountPath: agentspec.WrapperMountPath}},
	}
	a := &pod.InitContainers[agent]
	a.Env = append(a.Env, corev1.EnvVar{Name: agentspec.EnvWrapperControl, Value: agentspec.WrapperControl})
	a.VolumeMounts = append(a.VolumeMounts, corev1.VolumeMount{Name: agentspec.WrapperVolumeName, MountPath: agentspec.WrapperMountPath, ReadOnly: true})
	pod.InitContainers = slices.Insert(pod.InitContainers, agent, installer)

	w := &pod.Containers[worker]
	w.Command = append([]string{agentspec.WrapperBinary, "-control=" + agentspec.WrapperControl, "--"}, w.Command...)
	w.VolumeMounts = append(w.VolumeMounts, corev1.VolumeMount{Name: agentspec.WrapperVolumeName, MountPath: agentspec.WrapperMountPath})
	w.Env = append(w.Env, corev1.EnvVar{Name: agentspec.EnvProgressFile, Value: agentspec.ProgressFile})
	if !slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == agentspec.WrapperVolumeName }) {
		pod.Volumes = append(pod.Volumes, WrapperVolume())
	}
	return true
}

// WrapperVolume holds the wrapper's binary and its control socket; its
// limit leaves room for the binary twice, as an install writes the new
// copy beside the old one before it renames it.
func WrapperVolume() corev1.Volume {
	return corev1.Volume{Name: agentspec.WrapperVolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
		SizeLimit: ptr.To(resource.MustParse("32Mi"))}}}
}
