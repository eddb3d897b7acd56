package agentaccess

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

func TestBindingNamesEachNamespacesAgents(t *testing.T) {
	account := func(ns, name string, deleting bool) corev1.ServiceAccount {
		sa := corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if deleting {
			sa.DeletionTimestamp = &metav1.Time{}
		}
		return sa
	}
	agents := func(namespaces ...string) []rbacv1.Subject {
		subjects := []rbacv1.Subject{}
		for _, ns := range namespaces {
			subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: agentspec.ServiceAccountName})
		}
		return subjects
	}
	cases := map[string]struct {
		accounts []corev1.ServiceAccount
		want     []rbacv1.Subject
	}{
		"no namespace has agents: a binding of no one, kept for the next": {
			want: agents(),
		},
		"in namespace order, whatever the list's": {
			accounts: []corev1.ServiceAccount{account("team-b", agentspec.ServiceAccountName, false), account("team-a", agentspec.ServiceAccountName, false)},
			want:     agents("team-a", "team-b"),
		},
		"another ServiceAccount of the namespace is not bound": {
			accounts: []corev1.ServiceAccount{account("team-a", "default", false), account("team-a", agentspec.ServiceAccountName, false)},
			want:     agents("team-a"),
		},
		"a ServiceAccount being deleted is not bound": {
			accounts: []corev1.ServiceAccount{account("team-a", agentspec.ServiceAccountName, true), account("team-b", agentspec.ServiceAccountName, false)},
			want:     agents("team-b"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := Binding(tc.accounts)
			if diff := cmp.Diff(tc.want, b.Subjects); diff != "" {
				t.Errorf("subjects (-want +got):\n%s", diff)
			}
			if b.Namespace != agentspec.NodeLeaseNamespace || b.RoleRef.Name != Role().Name || b.RoleRef.Kind != "Role" {
				t.Errorf("binding %s/%s to %+v, want %s/%s bound to Role %s", b.Namespace, b.Name, b.RoleRef, agentspec.NodeLeaseNamespace, Name, Role().Name)
			}
		})
	}
}

func TestRoleGrantsWatchOnLeasesOnly(t *testing.T) {
	want := []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"watch"}}}
	if diff := cmp.Diff(want, Role().Rules); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
}
