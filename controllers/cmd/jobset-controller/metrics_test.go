package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/images/manifest"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/scrapecheck"
)

// The metrics endpoint serves a scraper bound to jobset-metrics-reader and
// refuses anyone else, while the controller runs as its ServiceAccount with
// nothing but its generated RBAC (controllers/rbac/role.yaml): the
// TokenReviews and SubjectAccessReviews that decide are its own requests.
// The leader says it leads, which the no-leader alert reads.
func TestMetricsNeedAnAuthorizedToken(t *testing.T) {
	c := startCluster(t)
	user := "system:serviceaccount:" + c.ns + ":jobset-controller"
	bindGeneratedRBAC(t, c, user)
	addr := framework.FreeLoopbackAddress(t)
	r := c.startReplicaVia(t, impersonating(user), func(o *options) { o.metricsAddr = addr })
	c.waitForLeader(t, r)

	scrapecheck.Check(context.Background(), t, c.env, c.ns, "https://"+addr+"/metrics",
		"jobset_build_info{",
		`leader_election_master_status{name="`+leaseName+`"} 1`)
}

// impersonating makes a config act as user, a ServiceAccount.
func impersonating(user string) func(*rest.Config) *rest.Config {
	return func(cfg *rest.Config) *rest.Config {
		cfg = rest.CopyConfig(cfg)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:serviceaccounts", "system:authenticated"}}
		return cfg
	}
}

// bindGeneratedRBAC creates the controller's generated ClusterRole and
// Roles (the one of jobset-system in the test's namespace, where the lease
// is) and binds them to user.
func bindGeneratedRBAC(t *testing.T, c *cluster, user string) {
	t.Helper()
	ctx := context.Background()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Read(filepath.Join(root, "controllers", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	for i, u := range objs {
		name := fmt.Sprintf("generated-%s-%d", strings.ToLower(u.GetKind()), i)
		ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: u.GetKind(), Name: name}
		var role, binding client.Object
		switch u.GetKind() {
		case "ClusterRole":
			role, binding = &rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{Subjects: subjects, RoleRef: ref}
		case "Role":
			role, binding = &rbacv1.Role{}, &rbacv1.RoleBinding{Subjects: subjects, RoleRef: ref}
		default:
			t.Fatalf("unexpected %s in the controller's RBAC", u.GetKind())
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role); err != nil {
			t.Fatal(err)
		}
		role.SetName(name)
		binding.SetName(name)
		if u.GetKind() == "Role" {
			ns := u.GetNamespace()
			if ns == "jobset-system" {
				ns = c.ns
			}
			role.SetNamespace(ns)
			binding.SetNamespace(ns)
		}
		for _, obj := range []client.Object{role, binding} {
			if err := c.env.Client.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
		}
	}
}
