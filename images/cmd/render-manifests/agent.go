package main

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// AgentName names the agent's ServiceAccount, Role and RoleBinding; the
// epoch-only policy recognises agents by this ServiceAccount name.
const AgentName = agentspec.ServiceAccountName

// EpochOnlyPolicyName names the ValidatingAdmissionPolicy and its binding.
const EpochOnlyPolicyName = "jobset-agent-epoch-only"

// agentRBAC is what the agent needs in a namespace that runs InPlaceRestart
// JobSets: one watch on its JobSet (get/list/watch) and a patch of its own
// Pod's epoch annotation (agent/agent.go).
//
// No object names a namespace, so that one manifest serves every namespace:
// `kubectl apply -n team-a -f agent-rbac.yaml` (or kustomize's namespace)
// puts all three in team-a. The RoleBinding's subject leaves its namespace
// out too: RBAC validation allows that for a ServiceAccount subject of a
// RoleBinding (not of a ClusterRoleBinding), and the authorizer then takes
// the RoleBinding's own namespace. It binds team-a's jobset-agent and no
// other, exactly as `namespace: team-a` would, with nothing to rewrite.
func agentRBAC() []client.Object {
	meta := metav1.ObjectMeta{Name: AgentName}
	return []client.Object{
		&corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: meta,
		},
		&rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
			ObjectMeta: meta,
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{agentspec.Group}, Resources: []string{agentspec.Resource}, Verbs: []string{"get", "list", "watch"}},
				{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"patch"}},
			},
		},
		&rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
			ObjectMeta: meta,
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: AgentName}},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: AgentName},
		},
	}
}

// epochOnlyPolicy lets a ServiceAccount named jobset-agent, in any
// namespace, change nothing on a Pod but the epoch annotation (KEP-467,
// "Permissions for the agent sidecar"): the Role must grant patch on Pods,
// and this is what narrows it. Other identities are not affected.
func epochOnlyPolicy() []client.Object {
	return []client.Object{
		&admissionregistrationv1.ValidatingAdmissionPolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicy"},
			ObjectMeta: metav1.ObjectMeta{Name: EpochOnlyPolicyName},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionregistrationv1.Fail),
				MatchConstraints: &admissionregistrationv1.MatchResources{
					ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
						RuleWithOperations: admissionregistrationv1.RuleWithOperations{
							Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
							Rule: admissionregistrationv1.Rule{
								APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
							},
						},
					}},
				},
				MatchConditions: []admissionregistrationv1.MatchCondition{{
					Name: "is-jobset-agent",
					Expression: "request.userInfo.username.startsWith('system:serviceaccount:') && " +
						"request.userInfo.username.endsWith(':" + AgentName + "')",
				}},
				Variables: []admissionregistrationv1.Variable{
					{Name: "epochKey", Expression: "'" + agentspec.EpochAnnotation + "'"},
					{Name: "oldAnnotations", Expression: "has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}"},
					{Name: "newAnnotations", Expression: "has(object.metadata.annotations) ? object.metadata.annotations : {}"},
				},
				Validations: []admissionregistrationv1.Validation{{
					Expression: "object.spec == oldObject.spec" +
						" && " + unchanged("labels", "{}") +
						" && " + unchanged("finalizers", "[]") +
						" && " + unchanged("ownerReferences", "[]") +
						" && variables.oldAnnotations.all(k, k == variables.epochKey || (k in variables.newAnnotations && variables.newAnnotations[k] == variables.oldAnnotations[k]))" +
						" && variables.newAnnotations.all(k, k == variables.epochKey || (k in variables.oldAnnotations && variables.oldAnnotations[k] == variables.newAnnotations[k]))",
					Message: "the " + AgentName + " ServiceAccount may change only the Pod annotation " + agentspec.EpochAnnotation,
					Reason:  ptr.To(metav1.StatusReasonForbidden),
				}},
			},
		},
		&admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicyBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: EpochOnlyPolicyName},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        EpochOnlyPolicyName,
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			},
		},
	}
}

// unchanged is a CEL expression that holds when the Pod's metadata field is
// the same before and after, an absent field counting as empty.
func unchanged(field, empty string) string {
	return "(has(object.metadata." + field + ") ? object.metadata." + field + " : " + empty + ")" +
		" == (has(oldObject.metadata." + field + ") ? oldObject.metadata." + field + " : " + empty + ")"
}
