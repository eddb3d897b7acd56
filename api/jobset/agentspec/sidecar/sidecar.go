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

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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
	// CPU and Memory are the agent's requests and limits (equal, so that a
	// Guaranteed Pod stays Guaranteed); zero means DefaultCPU and
	// DefaultMemory.
	CPU, Memory resource.Quantity
	// FenceNodeLease has the agent fence on its node's Lease too
	// (agentspec.EnvFenceNodeLease): its agents' ServiceAccount needs
	// watch on Leases in agentspec.NodeLeaseNamespace, which the controller
	// grants every namespace's agents.
	FenceNodeLease bool
}

// The agent's default requests and limits. The memory limit leaves room
// above what the agent uses while it watches, and it uses no CPU while
// idle (its footprint: docs/benchmarks.md, B3); it needs CPU for a moment
// when it starts (TLS, one watch, one patch), which is on the path of
// every group restart, so its CPU limit is not tight.
var (
	DefaultCPU    = resource.MustParse("100m")
	DefaultMemory = resource.MustParse("32Mi")
)

// AgentUser is the numeric user and group the agent runs as: the nonroot
// user of its distroless image (images/internal/oci.NonRoot). Numeric, so
// that the kubelet can check runAsNonRoot whatever the image says.
const AgentUser = 65532

// Inject adds the agent sidecar to a Job's Pod template that has none, and
// the worker restart rule to every container without restart rules of its
// own. A Pod that already has an agent is left as it is, so Inject is
// idempotent and never overrides what a user wrote.
//
// The Pod runs as the agent's ServiceAccount unless the template names
// another. The agent alone gets the Pod's ServiceAccount token, through
// TokenVolume;
// the Pod's automatic token mount, which would give it to every
// container, is turned off unless the template sets
// automountServiceAccountToken itself (then it is respected, and admission
// warns). The agent's requests equal its limits, except in a Pod whose
// containers request nothing (BestEffort) or that sets Pod-level
// resources: there it gets none, so the Pod's QoS class never changes.
func Inject(job *batchv1.JobSpec, o Options) {
	pod := &job.Template.Spec
	if Index(*pod) >= 0 {
		return
	}
	agent := Container(o)
	if pod.Resources != nil || QOSClass(*pod) == corev1.PodQOSBestEffort {
		agent.Resources = corev1.ResourceRequirements{}
	}
	pod.InitContainers = append(pod.InitContainers, agent)
	for _, volume := range []corev1.Volume{TokenVolume(), StateVolume()} {
		if !slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == volume.Name }) {
			pod.Volumes = append(pod.Volumes, volume)
		}
	}
	if pod.AutomountServiceAccountToken == nil {
		pod.AutomountServiceAccountToken = ptr.To(false)
	}
	// A projected token needs a named ServiceAccount (Pod validation), and
	// the agent's Role and the epoch-only policy are for this one.
	if pod.ServiceAccountName == "" {
		pod.ServiceAccountName = agentspec.ServiceAccountName
	}
	for i := range pod.Containers {
		c := &pod.Containers[i]
		if len(c.RestartPolicyRules) > 0 {
			continue
		}
		if rules := WorkerRestartRules(c.Name, job.PodFailurePolicy); rules != nil {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyNever)
			c.RestartPolicyRules = rules
		}
	}
}

// TokenVolume is the projected volume through which the agent, and only
// the agent, reads its ServiceAccount credentials at the standard
// in-cluster path: the same three files as the volume the ServiceAccount
// admission plugin adds to every container (kube-api-access-*), a token
// bound to the Pod, the cluster CA and the namespace.
func TokenVolume() corev1.Volume {
	return corev1.Volume{Name: agentspec.TokenVolumeName, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
				Path: "token", ExpirationSeconds: ptr.To[int64](agentspec.TokenExpirationSeconds)}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: agentspec.RootCAConfigMap},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}}
}

// StateVolume is the agent's state directory, which outlives its
// container: a promise it made to a peer binds the agents that follow it
// in the Pod (agentspec.EnvStateDir).
func StateVolume() corev1.Volume {
	return corev1.Volume{Name: agentspec.StateVolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
		SizeLimit: ptr.To(resource.MustParse("1Mi"))}}}
}

// SecurityContext is the agent's: what the restricted Pod Security
// Standard asks of a container, and a read-only root filesystem.
func SecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		RunAsUser:                ptr.To[int64](AgentUser),
		RunAsGroup:               ptr.To[int64](AgentUser),
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// Resources are the agent's requests, equal to its limits.
func Resources(o Options) corev1.ResourceRequirements {
	cpu, memory := o.CPU, o.Memory
	if cpu.IsZero() {
		cpu = DefaultCPU
	}
	if memory.IsZero() {
		memory = DefaultMemory
	}
	list := corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: memory}
	return corev1.ResourceRequirements{Requests: list, Limits: list.DeepCopy()}
}

// Container is the agent sidecar: a restartable init container whose
// startup probe holds the workers back until the barrier lifts, which
// reads its credentials from TokenVolume.
func Container(o Options) corev1.Container {
	env := make([]corev1.EnvVar, 0, len(agentspec.RequiredEnv)+4)
	for _, name := range agentspec.RequiredEnv {
		env = append(env, corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: agentspec.FieldPathOf[name]}}})
	}
	// Its node names it to its peers; its state directory keeps its
	// promises to them (agent/witness.go).
	env = append(env,
		corev1.EnvVar{Name: agentspec.EnvNodeName, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: agentspec.FieldPathOf[agentspec.EnvNodeName]}}},
		corev1.EnvVar{Name: agentspec.EnvStateDir, Value: agentspec.StateMountPath})
	if o.RestartExitCode != 0 && o.RestartExitCode != agentspec.DefaultRestartExitCode {
		env = append(env, corev1.EnvVar{Name: agentspec.EnvRestartExitCode, Value: strconv.Itoa(int(o.RestartExitCode))})
	}
	if o.FenceNodeLease {
		env = append(env, corev1.EnvVar{Name: agentspec.EnvFenceNodeLease, Value: "true"})
	}
	return corev1.Container{
		Name:               agentspec.ContainerName,
		Image:              o.Image,
		RestartPolicy:      ptr.To(corev1.ContainerRestartPolicyAlways),
		RestartPolicyRules: AgentRestartRules(),
		StartupProbe: &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: agentspec.DefaultBarrierPath, Port: intstr.FromInt32(agentspec.DefaultBarrierPort)}},
			PeriodSeconds:    agentspec.StartupProbePeriodSeconds,
			FailureThreshold: agentspec.StartupProbeFailureThreshold,
		},
		Env:             env,
		Resources:       Resources(o),
		SecurityContext: SecurityContext(),
		VolumeMounts: []corev1.VolumeMount{
			{Name: agentspec.TokenVolumeName, MountPath: agentspec.TokenMountPath, ReadOnly: true},
			{Name: agentspec.StateVolumeName, MountPath: agentspec.StateMountPath},
		},
	}
}

// AgentRestartRules restart every container of the Pod whenever the agent
// stops while its Pod lives, whatever its exit code: the restart code, a
// crash or an OOM kill, and 0, which is how it answers the SIGTERM of a
// kubelet that stops it alone (a failed liveness probe, an in-place resize
// that restarts it). Restarting the agent alone would let it join the next
// epoch while its worker runs on from before the group restart. (NotIn with
// no values matches every code; Kubernetes 1.37 has no action that fails
// the Pod instead.) The Pod being deleted is not affected: the kubelet
// applies no restart rules to a terminating Pod.
func AgentRestartRules() []corev1.ContainerRestartRule {
	return []corev1.ContainerRestartRule{{
		Action: corev1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{
			Operator: corev1.ContainerRestartRuleOnExitCodesOpNotIn, Values: []int32{}},
	}}
}

// WorkerRestartRules restart the whole Pod in place when the named worker
// container exits non-zero, except on the codes that policy (the Job's
// podFailurePolicy) maps to FailJob: those must fail the Pod, and so the
// Job, for the JobSet's failure policy to decide (FailJobSet at once, say).
// Nil when every non-zero code fails the Job.
//
// The rule takes the shorter of its two forms, NotIn {0 and the FailJob
// codes} or In {the other codes of 1..255}, so that it stays within the
// 255 values Pod validation allows. (Linux exit codes are 0..255; with the
// In form, a larger code fails the Pod, which its Job replaces.)
func WorkerRestartRules(container string, policy *batchv1.PodFailurePolicy) []corev1.ContainerRestartRule {
	notIn, in := []int32{0}, []int32{}
	for code := int32(1); code <= MaxExitCode; code++ {
		if _, fails := FailJobRule(container, policy, code); fails {
			notIn = append(notIn, code)
		} else {
			in = append(in, code)
		}
	}
	rule := corev1.ContainerRestartRule{Action: corev1.ContainerRestartRuleActionRestartAllContainers}
	switch {
	case len(in) == 0:
		return nil
	case len(notIn) <= len(in):
		rule.ExitCodes = &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpNotIn, Values: notIn}
	default:
		rule.ExitCodes = &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: in}
	}
	return []corev1.ContainerRestartRule{rule}
}

// MaxExitCode is the largest exit code a Linux process can report.
const MaxExitCode = 255

// FailJobRule returns the index of the podFailurePolicy rule that decides
// what the named container's exit with code does to its Job, and whether
// that is FailJob, as the Job controller matches rules: the first rule
// that matches wins; onExitCodes applies to the named container or, without
// containerName, to every container; exit code 0 never matches. Rules on
// Pod conditions are passed over: an exit does not set them.
func FailJobRule(container string, policy *batchv1.PodFailurePolicy, code int32) (int, bool) {
	if policy == nil || code == 0 {
		return -1, false
	}
	for i, r := range policy.Rules {
		e := r.OnExitCodes
		if e == nil || (e.ContainerName != nil && *e.ContainerName != container) {
			continue
		}
		if slices.Contains(e.Values, code) == (e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn) {
			return i, r.Action == batchv1.PodFailurePolicyActionFailJob
		}
	}
	return -1, false
}

// MatchingRestartRule returns the container's restart rule that the kubelet
// applies when it exits with code: the first that matches.
func MatchingRestartRule(c corev1.Container, code int32) (corev1.ContainerRestartRule, bool) {
	for _, r := range c.RestartPolicyRules {
		if r.ExitCodes == nil {
			continue
		}
		in := slices.Contains(r.ExitCodes.Values, code)
		switch r.ExitCodes.Operator {
		case corev1.ContainerRestartRuleOnExitCodesOpIn:
			if in {
				return r, true
			}
		case corev1.ContainerRestartRuleOnExitCodesOpNotIn:
			if !in {
				return r, true
			}
		}
	}
	return corev1.ContainerRestartRule{}, false
}

// RestartsAllOn reports whether the container's exit with code restarts
// every container of its Pod.
func RestartsAllOn(c corev1.Container, code int32) bool {
	r, ok := MatchingRestartRule(c, code)
	return ok && r.Action == corev1.ContainerRestartRuleActionRestartAllContainers
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
