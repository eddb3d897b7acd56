package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/images/manifest"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// The webhook runs, rotates its certificate into the
// webhook configurations and admits JobSets with nothing but its generated
// RBAC (webhooks/rbac/role.yaml), whose rules name the Secret and the two
// configurations: as its ServiceAccount, not as an administrator. The
// names in the generated rules are install.yaml's; this test's apiserver
// has its own, which replace them.
func TestRunsWithItsGeneratedRBAC(t *testing.T) {
	const user = "system:serviceaccount:jobset-system:jobset-webhook"
	var generated []client.Object
	// Its own Secret name: the rotator's controller is named after it, and
	// controller names are unique per process.
	adjust := func(o *options) { o.secret = "rbac-test-cert" }
	w := startWebhookVia(t, adjust, func(cfg *rest.Config) *rest.Config {
		cfg = rest.CopyConfig(cfg)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:serviceaccounts", "system:authenticated"}}
		return cfg
	}, func(ctx context.Context, env *framework.Environment, o options) {
		generated = bindGeneratedRBAC(ctx, t, env.Client, o, user)
	})
	w.admitInjected(t, "as-its-serviceaccount")
	if len(generated) == 0 {
		t.Fatal("no generated role was bound")
	}
}

// bindGeneratedRBAC creates the generated Roles and ClusterRoles, with the
// test's namespace and object names, bound to user.
func bindGeneratedRBAC(ctx context.Context, t *testing.T, c client.Client, o options, user string) []client.Object {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Read(filepath.Join(root, "webhooks", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rename := map[string]string{
		"jobset-webhook-server-cert":              o.secret,
		"jobset-mutating-webhook-configuration":   o.mutatingConfig,
		"jobset-validating-webhook-configuration": o.validatingConfig,
	}
	var created []client.Object
	for _, u := range objs {
		var rules *[]rbacv1.PolicyRule
		var obj client.Object
		switch u.GetKind() {
		case "ClusterRole":
			role := &rbacv1.ClusterRole{}
			obj, rules = role, &role.Rules
		case "Role":
			role := &rbacv1.Role{}
			obj, rules = role, &role.Rules
		default:
			t.Fatalf("unexpected %s in the webhook's RBAC", u.GetKind())
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
			t.Fatal(err)
		}
		for i := range *rules {
			for j, name := range (*rules)[i].ResourceNames {
				if to, ok := rename[name]; ok {
					(*rules)[i].ResourceNames[j] = to
				}
			}
		}
		name := "generated-" + strings.ToLower(u.GetKind())
		obj.SetName(name)
		subject := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
		ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: u.GetKind(), Name: name}
		var binding client.Object = &rbacv1.ClusterRoleBinding{Subjects: subject, RoleRef: ref}
		if u.GetKind() == "Role" {
			obj.SetNamespace(o.namespace)
			binding = &rbacv1.RoleBinding{Subjects: subject, RoleRef: ref}
			binding.SetNamespace(o.namespace)
		}
		binding.SetName(name)
		for _, o := range []client.Object{obj, binding} {
			if err := c.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		created = append(created, obj)
	}
	return created
}

// The rotator's list and watch requests select one name; others pass.
func TestNameSelecting(t *testing.T) {
	var got []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
	}))
	defer server.Close()
	rt := nameSelecting{next: http.DefaultTransport, names: map[string]string{"/api/v1/namespaces/ns/secrets": "cert"}}
	c := &http.Client{Transport: rt}
	for _, req := range []struct{ method, path string }{
		{http.MethodGet, "/api/v1/namespaces/ns/secrets?watch=true&fieldSelector=a%3Db"},
		{http.MethodGet, "/api/v1/namespaces/ns/secrets/cert"},
		{http.MethodPut, "/api/v1/namespaces/ns/secrets"},
		{http.MethodGet, "/api/v1/namespaces/other/secrets"},
	} {
		r, err := http.NewRequest(req.method, server.URL+req.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	want := []string{
		"GET /api/v1/namespaces/ns/secrets?fieldSelector=metadata.name%3Dcert&watch=true",
		"GET /api/v1/namespaces/ns/secrets/cert?",
		"PUT /api/v1/namespaces/ns/secrets?",
		"GET /api/v1/namespaces/other/secrets?",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
