package jobsetwebhook

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/api/version"
)

// SecurityWarnings lists what admission lets through in an InPlaceRestart
// JobSet's Pods with an agent but warns about (docs/security.md): workers
// that hold the agent's token, an agent that has none, and an agent whose
// resources change the Pod's QoS class.
func SecurityWarnings(js *jobset.JobSet) []string {
	if jobset.RestartStrategyOf(js) != jobset.InPlaceRestart {
		return nil
	}
	var warnings []string
	for i, rj := range js.Spec.ReplicatedJobs {
		pod := rj.Template.Spec.Template.Spec
		a := sidecar.Index(pod)
		if a < 0 {
			continue
		}
		path := field.NewPath("spec", "replicatedJobs").Index(i).Child("template", "spec", "template", "spec")
		warnings = append(warnings, tokenWarnings(pod, a, path)...)
		if w := qosWarning(pod, a, path.Child("initContainers").Index(a)); w != "" {
			warnings = append(warnings, w)
		}
	}
	return warnings
}

// tokenWarnings: an identity the epoch-only policy does not cover; the
// Pod's automatic token mount, which gives the agent's token to every
// container; without it, an agent without a mount of its own.
func tokenWarnings(pod corev1.PodSpec, a int, path *field.Path) []string {
	sa := pod.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	var warnings []string
	if sa != agentspec.ServiceAccountName {
		warnings = append(warnings, fmt.Sprintf("%s: the Pod runs as ServiceAccount %q, so its agent patches Pods with that identity, which the epoch-only admission policy does not cover (it is for ServiceAccounts named %q): its token could write any epoch of any Pod its Role lets it patch; use %q (the release's agent/agent-rbac.yaml: %s; see %s)",
			path.Child("serviceAccountName"), sa, agentspec.ServiceAccountName, agentspec.ServiceAccountName,
			version.Docs("user-guide.md#rbac-and-the-admission-policy"), version.Docs("security.md")))
		if fencesOnNodeLease(pod.InitContainers[a]) {
			warnings = append(warnings, fmt.Sprintf("%s: the agent fences on its node's Lease (%s=true) and starts no worker until ServiceAccount %q may watch leases in %s, which the controller grants to ServiceAccounts named %q alone; give it that watch there (a Role and RoleBinding), or set %s=false on the agent (see %s)",
				path.Child("serviceAccountName"), agentspec.EnvFenceNodeLease, sa, agentspec.NodeLeaseNamespace, agentspec.ServiceAccountName,
				agentspec.EnvFenceNodeLease, version.Docs("user-guide.md#when-a-node-is-lost")))
		}
	}
	agent := pod.InitContainers[a]
	mounted := slices.ContainsFunc(agent.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == agentspec.TokenMountPath })
	automount := pod.AutomountServiceAccountToken
	switch {
	case automount == nil || *automount:
		state := "true"
		if automount == nil {
			state = "unset (true by default)"
		}
		return append(warnings, fmt.Sprintf("%s: automountServiceAccountToken is %s, so every container of the Pod, the workers too, holds the token of ServiceAccount %q with which the agent writes the Pod's epoch: worker code could restart or stall this group's in-place restarts; set it to false and give the agent alone its token through a projected volume mounted at %s (agent injection does this unless the template sets the field, as this one does; see %s and %s)",
			path.Child("automountServiceAccountToken"), state, sa, agentspec.TokenMountPath, version.Docs("user-guide.md#by-injection"), version.Docs("security.md")))
	case !mounted:
		return append(warnings, fmt.Sprintf("%s: the agent has no volume mounted at %s and the Pod's automountServiceAccountToken is false, so the agent has no token and cannot join any epoch; mount a projected volume with a serviceAccountToken, the ConfigMap %s (ca.crt) and the namespace there (see %s)",
			path.Child("initContainers").Index(a).Child("volumeMounts"), agentspec.TokenMountPath, agentspec.RootCAConfigMap, version.Docs("user-guide.md#by-hand")))
	}
	return warnings
}

// qosWarning: an agent whose resources make the Pod fall from Guaranteed
// (static CPU pinning, NUMA alignment, last to be evicted) or rise from
// BestEffort.
func qosWarning(pod corev1.PodSpec, a int, path *field.Path) string {
	without := pod
	without.InitContainers = slices.Delete(slices.Clone(pod.InitContainers), a, a+1)
	before, after := sidecar.QOSClass(without), sidecar.QOSClass(pod)
	if before == after {
		return ""
	}
	fix := "give it no requests or limits"
	if before == corev1.PodQOSGuaranteed {
		r := sidecar.Resources(sidecar.Options{})
		fix = fmt.Sprintf("give it requests equal to limits for cpu and memory, for example resources: {requests: %s, limits: %s}",
			describeResources(r.Requests), describeResources(r.Limits))
	}
	return fmt.Sprintf("%s: the agent's resources make the Pod's QoS class %s instead of %s, which its other containers give it; %s",
		path.Child("resources"), after, before, fix)
}

func describeResources(list corev1.ResourceList) string {
	cpu, memory := list[corev1.ResourceCPU], list[corev1.ResourceMemory]
	return fmt.Sprintf("{cpu: %s, memory: %s}", cpu.String(), memory.String())
}

// fencesOnNodeLease: the agent's environment turns the Lease fence on.
func fencesOnNodeLease(agent corev1.Container) bool {
	return slices.ContainsFunc(agent.Env, func(e corev1.EnvVar) bool {
		return e.Name == agentspec.EnvFenceNodeLease && e.Value == "true"
	})
}
