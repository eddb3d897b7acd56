// Package agentaccess lets each namespace's agents watch their nodes'
// Leases. An agent that fences on its node's Lease (FENCE_NODE_LEASE)
// watches kube-node-lease, a namespace its per-namespace Role
// (agent/rbac/agent-rbac.yaml) cannot reach, and a RoleBinding there must
// name every ServiceAccount it binds: RBAC has no wildcard for "the
// jobset-agent of every namespace". So the controller keeps one Role and
// one RoleBinding in kube-node-lease, binding the ServiceAccount
// jobset-agent of each namespace that has one; applying agent-rbac.yaml
// into a namespace is then all that namespace needs.
//
// The Role grants watch on Leases and nothing more: the agent watches its
// node's Lease by name, and a node's Lease tells no more than its name and
// when its kubelet last renewed it.
package agentaccess

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// Name is the Role's and the RoleBinding's, in kube-node-lease.
const Name = "jobset-agent-node-leases"

// managedBy labels what the controller keeps, for an administrator who
// finds it there.
var managedBy = map[string]string{"app.kubernetes.io/managed-by": "jobset-controller"}

// Role is the Role the agents are bound to.
func Role() *rbacv1.Role {
	return &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: agentspec.NodeLeaseNamespace, Name: Name, Labels: managedBy},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"watch"},
		}},
	}
}

// Binding is the RoleBinding that binds Role to the agents' ServiceAccounts
// among accounts (jobset-agent, of any namespace), in namespace order; one
// being deleted is left out.
func Binding(accounts []corev1.ServiceAccount) *rbacv1.RoleBinding {
	subjects := []rbacv1.Subject{}
	for _, sa := range accounts {
		if sa.Name != agentspec.ServiceAccountName || sa.DeletionTimestamp != nil {
			continue
		}
		subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name})
	}
	slices.SortFunc(subjects, func(a, b rbacv1.Subject) int { return cmp.Compare(a.Namespace, b.Namespace) })
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: agentspec.NodeLeaseNamespace, Name: Name, Labels: managedBy},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: Name},
		Subjects:   subjects,
	}
}
