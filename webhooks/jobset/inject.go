package jobset

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/agent"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// AgentContainerName names the injected sidecar.
const AgentContainerName = "jobset-agent"

// AgentOptions are the webhook's settings for the injected agent.
type AgentOptions struct {
	// Image of the agent sidecar.
	Image string
	// RestartExitCode is the exit code that restarts the Pod in place.
	RestartExitCode int32
}

// wantsAgent: the JobSet opted in to injection.
func wantsAgent(js *jobset.JobSet) bool {
	return jobset.RestartStrategyOf(js) == jobset.InPlaceRestart && js.Annotations[jobset.InjectAgentKey] == "true"
}

// InjectAgent adds to every Pod template that has no agent yet the agent
// sidecar exactly as docs/user-guide.md shows it, and a
// RestartAllContainers rule for non-zero exits to every container without
// restart rules of its own.
func InjectAgent(js *jobset.JobSet, o AgentOptions) {
	for i := range js.Spec.ReplicatedJobs {
		pod := &js.Spec.ReplicatedJobs[i].Template.Spec.Template.Spec
		if agentIndex(*pod) >= 0 {
			continue
		}
		pod.InitContainers = append(pod.InitContainers, agentContainer(o))
		for j := range pod.Containers {
			c := &pod.Containers[j]
			if len(c.RestartPolicyRules) > 0 {
				continue
			}
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyNever)
			c.RestartPolicyRules = []corev1.ContainerRestartRule{{
				Action:    corev1.ContainerRestartRuleActionRestartAllContainers,
				ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpNotIn, Values: []int32{0}},
			}}
		}
	}
}

func agentContainer(o AgentOptions) corev1.Container {
	fieldRef := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
	}
	env := []corev1.EnvVar{
		{Name: agent.EnvNamespace, ValueFrom: fieldRef("metadata.namespace")},
		{Name: agent.EnvPodName, ValueFrom: fieldRef("metadata.name")},
		{Name: agent.EnvJobSetName, ValueFrom: fieldRef("metadata.annotations['" + jobset.JobSetNameKey + "']")},
	}
	if o.RestartExitCode != agent.DefaultRestartExitCode {
		env = append(env, corev1.EnvVar{Name: agent.EnvRestartExitCode, Value: strconv.Itoa(int(o.RestartExitCode))})
	}
	return corev1.Container{
		Name:          AgentContainerName,
		Image:         o.Image,
		RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
		RestartPolicyRules: []corev1.ContainerRestartRule{{
			Action: corev1.ContainerRestartRuleActionRestartAllContainers,
			// The restart code and crashes alike: a crashed agent must not
			// leave its worker running behind the group (Kubernetes 1.37
			// has no rule action that fails the Pod instead).
			ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpNotIn, Values: []int32{0}},
		}},
		StartupProbe: &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: agent.DefaultBarrierPath, Port: intstr.FromInt32(agent.DefaultBarrierPort)}},
			PeriodSeconds: 1,
			// Ten minutes for the whole group to gather.
			FailureThreshold: 600,
		},
		Env: slices.Clip(env),
	}
}
