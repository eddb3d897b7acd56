package workload

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// Community JobSet v0.12.0's in-place restart protocol, as its agent
// (cmd/in-place-restart-agent of sigs.k8s.io/jobset) and its API types
// name it: the agent's environment, its Pod annotation and the two status
// fields its controller writes. They are not ours (ours: the epoch
// annotation, deprecatedEpoch and syncedEpoch).
const (
	CommunityAttemptAnnotation = "jobset.sigs.k8s.io/in-place-restart-attempt"
	CommunityPreviousAttempt   = "previousInPlaceRestartAttempt"
	CommunityCurrentAttempt    = "currentInPlaceRestartAttempt"

	communityAgentRole = "jobset-community-agent"
	communityExitCode  = "1" // its agent's default IN_PLACE_RESTART_EXIT_CODE
)

// CommunityInPlace turns an in-place JobSet of ours (JobSet with
// InPlaceRestart) into community JobSet's shape: the same Pods, whose agent
// sidecar is community's (agentImage) with its environment, barrier on the
// same startup probe (path and port given to it by STARTUP_PROBE_PATH and
// STARTUP_PROBE_PORT: its default port, 8081, is the worker's), and the
// RestartAllContainers rule on its restart exit code alone.
func CommunityInPlace(js *jobset.JobSet, agentImage string) error {
	for i := range js.Spec.ReplicatedJobs {
		pod := &js.Spec.ReplicatedJobs[i].Template.Spec.Template.Spec
		found := false
		for j := range pod.InitContainers {
			c := &pod.InitContainers[j]
			if c.StartupProbe == nil || c.StartupProbe.HTTPGet == nil || c.RestartPolicy == nil {
				continue
			}
			found = true
			probe := c.StartupProbe.HTTPGet
			c.Image = agentImage
			c.ImagePullPolicy = corev1.PullIfNotPresent
			c.Args, c.Command = nil, nil
			c.Env = []corev1.EnvVar{
				{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				{Name: "JOBSET_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + jobset.JobSetNameKey + "']"}}},
				{Name: "STARTUP_PROBE_PATH", Value: probe.Path},
				{Name: "STARTUP_PROBE_PORT", Value: probe.Port.String()},
				{Name: "IN_PLACE_RESTART_EXIT_CODE", Value: communityExitCode},
			}
			c.RestartPolicyRules = []corev1.ContainerRestartRule{{
				Action: corev1.ContainerRestartRuleActionRestartAllContainers,
				ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{
					Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{1},
				},
			}}
		}
		if !found {
			return fmt.Errorf("replicated job %s has no agent sidecar to replace", js.Spec.ReplicatedJobs[i].Name)
		}
	}
	return nil
}

// CommunityAgentRBAC lets the ServiceAccount jobset-agent of ns (made by
// RecreateNamespace) do what community's agent does: its controller-runtime
// cache gets, lists and watches JobSets; it patches its Pod (server-side
// apply).
func (c *Cluster) CommunityAgentRBAC(ctx context.Context, ns string) error {
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: communityAgentRole, Namespace: ns},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{jobset.GroupVersion.Group}, Resources: []string{"jobsets"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "patch"}},
		},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: communityAgentRole, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: communityAgentRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "jobset-agent", Namespace: ns}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := c.Client.Create(ctx, obj); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
	}
	return nil
}
