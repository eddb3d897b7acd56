// Package sidecar builds, from the contract in package agentspec, the agent
// sidecar container and the restart rules that make a Pod restart in place:
// the one builder behind the webhook's injection, the test wrappers and the
// documented manifest (docs/examples/story1-inplace.yaml, which a test
// compares with what Inject produces).
//
// It is apart from agentspec because it needs k8s.io/api's Pod types, which
// the agent binary must not link.
package sidecar

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// Options are the settings of an injected agent.
type Options struct {
	// Image of the agent sidecar.
	Image string
	// RestartExitCode is the exit code with which the agent restarts its
	// Pod in place; zero means agentspec.DefaultRestartExitCode.
	RestartExitCode int32
}

// Inject adds the agent sidecar to a Pod that has none, and the worker
// restart rule to every container without restart rules of its own.
// A Pod that already has an agent is left as it is, so Inject is
// idempotent and never overrides what a user wrote.
func Inject(pod *corev1.PodSpec, o Options) {
	if Index(*pod) >= 0 {
		return
	}
	pod.InitContainers = append(pod.InitContainers, Container(o))
	for i := range pod.Containers {
		c := &pod.Containers[i]
		if len(c.RestartPolicyRules) > 0 {
			continue
		}
		c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyNever)
		c.RestartPolicyRules = WorkerRestartRules()
	}
}

// Container is the agent sidecar: a restartable init container whose
// startup probe holds the workers back until the barrier lifts.
func Container(o Options) corev1.Container {
	env := make([]corev1.EnvVar, 0, len(agentspec.RequiredEnv)+1)
	for _, name := range agentspec.RequiredEnv {
		env = append(env, corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: agentspec.FieldPathOf[name]}}})
	}
	if o.RestartExitCode != 0 && o.RestartExitCode != agentspec.DefaultRestartExitCode {
		env = append(env, corev1.EnvVar{Name: agentspec.EnvRestartExitCode, Value: strconv.Itoa(int(o.RestartExitCode))})
	}
	return corev1.Container{
		Name:          agentspec.ContainerName,
		Image:         o.Image,
		RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
		// The restart code and crashes alike: a crashed agent must not
		// leave its worker running behind the group (Kubernetes 1.37 has
		// no rule action that fails the Pod instead).
		RestartPolicyRules: restartAllUnlessZero(),
		StartupProbe: &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: agentspec.DefaultBarrierPath, Port: intstr.FromInt32(agentspec.DefaultBarrierPort)}},
			PeriodSeconds:    agentspec.StartupProbePeriodSeconds,
			FailureThreshold: agentspec.StartupProbeFailureThreshold,
		},
		Env: env,
	}
}

// WorkerRestartRules restart the whole Pod in place when a worker exits
// non-zero.
func WorkerRestartRules() []corev1.ContainerRestartRule {
	return restartAllUnlessZero()
}

func restartAllUnlessZero() []corev1.ContainerRestartRule {
	return []corev1.ContainerRestartRule{{
		Action: corev1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{
			Operator: corev1.ContainerRestartRuleOnExitCodesOpNotIn, Values: []int32{0}},
	}}
}

// Index is the position of the agent sidecar among the Pod's init
// containers (a restartable one with a RestartAllContainers rule), or -1.
func Index(pod corev1.PodSpec) int {
	return slices.IndexFunc(pod.InitContainers, func(c corev1.Container) bool {
		return ptr.Deref(c.RestartPolicy, "") == corev1.ContainerRestartPolicyAlways && HasRestartAllRule(c)
	})
}

// HasRestartAllRule reports whether the container restarts its whole Pod on
// some exit.
func HasRestartAllRule(c corev1.Container) bool {
	return slices.ContainsFunc(c.RestartPolicyRules, func(r corev1.ContainerRestartRule) bool {
		return r.Action == corev1.ContainerRestartRuleActionRestartAllContainers
	})
}
