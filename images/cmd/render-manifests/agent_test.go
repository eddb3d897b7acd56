package main

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// TestAgentRBACNamesNoNamespace keeps agent-rbac.yaml appliable into any
// namespace (`kubectl apply -n team-a`, which refuses objects that name
// another): no object names one, nor does the RoleBinding's subject, which
// the authorizer then resolves to the RoleBinding's namespace. //agent's
// envtest proves the binding on a real apiserver.
func TestAgentRBACNamesNoNamespace(t *testing.T) {
	var bindings int
	for _, obj := range agentRBAC() {
		if ns := obj.GetNamespace(); ns != "" {
			t.Errorf("%T %s names namespace %q", obj, obj.GetName(), ns)
		}
		binding, ok := obj.(*rbacv1.RoleBinding)
		if !ok {
			continue
		}
		bindings++
		want := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: AgentName}
		if len(binding.Subjects) != 1 || binding.Subjects[0] != want {
			t.Errorf("RoleBinding subjects %+v, want only %+v", binding.Subjects, want)
		}
	}
	if bindings != 1 {
		t.Errorf("%d RoleBindings, want 1", bindings)
	}
}
