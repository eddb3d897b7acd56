package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/tools/testing/framework"
)

// permission is one verb a role grants on one resource (of some names).
type permission struct {
	role, group, resource, names, verb string
}

func (p permission) String() string {
	names := ""
	if p.names != "" {
		names = " [" + p.names + "]"
	}
	group := p.group
	if group == "" {
		group = "core"
	}
	return fmt.Sprintf("%s: %s %s/%s%s", p.role, p.verb, group, p.resource, names)
}

// generatedPermissions expands every rule of the generated roles of the
// controller, the webhook and the agent into permissions.
func generatedPermissions(t *testing.T, root string) map[permission]bool {
	t.Helper()
	var roles []client.Object
	for _, path := range []string{"controllers/rbac/role.yaml", "webhooks/rbac/role.yaml"} {
		objs, err := readObjects(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		roles = append(roles, objs...)
	}
	roles = append(roles, agentRBAC()...)
	out := map[permission]bool{}
	for _, obj := range roles {
		kind := obj.GetObjectKind().GroupVersionKind().Kind
		if kind == "" {
			kind = fmt.Sprintf("%T", obj)
		}
		var rules []rbacv1.PolicyRule
		switch o := obj.(type) {
		case *rbacv1.Role:
			rules = o.Rules
		default:
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
			if err != nil {
				t.Fatal(err)
			}
			switch kind {
			case "ClusterRole":
				var role rbacv1.ClusterRole
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, &role); err != nil {
					t.Fatal(err)
				}
				rules = role.Rules
			case "Role":
				var role rbacv1.Role
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, &role); err != nil {
					t.Fatal(err)
				}
				rules = role.Rules
			default:
				continue // ServiceAccounts, bindings
			}
		}
		for _, r := range rules {
			names := strings.Join(r.ResourceNames, ", ")
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						out[permission{role: roleKey(kind, obj.GetName(), obj.GetNamespace()), group: g, resource: res, names: names, verb: v}] = true
					}
				}
			}
		}
	}
	return out
}

// documentedPermissions reads the table of docs/security.md's section
// "Permissions": component, role ("Kind name [in namespace]"), group
// ("core" for the empty one), resource, names, verbs, why.
func documentedPermissions(t *testing.T, root string) map[permission]bool {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[permission]bool{}
	inSection := false
	scanner := bufio.NewScanner(f)
	for line := 1; scanner.Scan(); line++ {
		text := scanner.Text()
		if strings.HasPrefix(text, "## ") {
			inSection = text == "## Permissions"
			continue
		}
		if !inSection || !strings.HasPrefix(text, "|") || strings.HasPrefix(text, "|---") || strings.HasPrefix(text, "| component") {
			continue
		}
		cells := strings.Split(strings.Trim(text, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) != 7 {
			t.Fatalf("docs/security.md:%d: %d cells, want 7 (component, role, group, resource, names, verbs, why)", line, len(cells))
		}
		role := strings.Fields(cells[1])
		if len(role) < 2 {
			t.Fatalf("docs/security.md:%d: role %q, want \"Kind name [in namespace]\"", line, cells[1])
		}
		if cells[6] == "" {
			t.Errorf("docs/security.md:%d: no reason given", line)
		}
		group := cells[2]
		if group == "core" {
			group = ""
		}
		for _, verb := range strings.Split(cells[5], ",") {
			namespace := "" // "in each namespace": the agent's, applied in every namespace a user names
			if len(role) == 4 && role[2] == "in" {
				namespace = role[3]
			}
			p := permission{role: roleKey(role[0], role[1], namespace), group: group, resource: cells[3], names: cells[4], verb: strings.TrimSpace(verb)}
			if out[p] {
				t.Errorf("docs/security.md:%d: %s is listed twice", line, p)
			}
			out[p] = true
		}
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every verb of every generated role has its reason in docs/security.md,
// and the page lists no permission that no role grants: administrators
// review that page before they install, so it must be what install.yaml
// grants.
func TestEveryPermissionIsJustified(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	generated, documented := generatedPermissions(t, root), documentedPermissions(t, root)
	if len(generated) == 0 || len(documented) == 0 {
		t.Fatalf("%d generated and %d documented permissions: the parsing is broken", len(generated), len(documented))
	}
	var unjustified, stale []string
	for p := range generated {
		if !documented[p] {
			unjustified = append(unjustified, p.String())
		}
	}
	for p := range documented {
		if !generated[p] {
			stale = append(stale, p.String())
		}
	}
	slices.Sort(unjustified)
	slices.Sort(stale)
	if len(unjustified) > 0 {
		t.Errorf("generated roles grant verbs that docs/security.md (## Permissions) does not justify: add a row with the reason, or drop the verb from the marker:\n  %s", strings.Join(unjustified, "\n  "))
	}
	if len(stale) > 0 {
		t.Errorf("docs/security.md (## Permissions) lists verbs no generated role grants: remove the rows:\n  %s", strings.Join(stale, "\n  "))
	}
}

// roleKey names a role: a Role of the same name may be in several
// namespaces (the controller's, in jobset-system and kube-node-lease).
func roleKey(kind, name, namespace string) string {
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + name + " in " + namespace
}
