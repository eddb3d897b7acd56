package main

import (
	"context"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/controllers/agentaccess"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// An agent that fences on its node's Lease watches it in kube-node-lease,
// which the Role a namespace applies (agent/rbac/agent-rbac.yaml) cannot
// reach. The controller, with nothing but its generated RBAC, binds the
// agents' ServiceAccount of each namespace that has one there, restores
// the binding when it is removed, and unbinds a ServiceAccount once gone.
func TestAgentsMayWatchTheirNodesLeases(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t)
	user := "system:serviceaccount:" + c.ns + ":jobset-controller"
	bindGeneratedRBAC(t, c, user)
	r := c.startReplicaVia(t, impersonating(user))
	c.waitForLeader(t, r)

	var teams [2]string
	for i := range teams {
		ns, err := framework.CreateNamespace(ctx, c.env.Client, "team")
		if err != nil {
			t.Fatal(err)
		}
		teams[i] = ns
	}
	mayWatch := func(ns string) bool {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   "system:serviceaccount:" + ns + ":" + agentspec.ServiceAccountName,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: agentspec.NodeLeaseNamespace, Verb: "watch", Group: "coordination.k8s.io", Resource: "leases", Name: "node-1",
			},
		}}
		if err := c.env.Client.Create(ctx, review); err != nil {
			t.Fatalf("asking whether %s's agents may watch a Lease: %v", ns, err)
		}
		return review.Status.Allowed
	}

	agents := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: teams[0], Name: agentspec.ServiceAccountName}}
	if err := c.env.Client.Create(ctx, agents); err != nil {
		t.Fatal(err)
	}
	poll(t, r, "the agents of "+teams[0]+" to be let watch their nodes' Leases", func() bool { return mayWatch(teams[0]) })
	if mayWatch(teams[1]) {
		t.Errorf("the agents of %s, which has no ServiceAccount %s, may watch the nodes' Leases", teams[1], agentspec.ServiceAccountName)
	}

	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: agentspec.NodeLeaseNamespace, Name: agentaccess.Name}}
	if err := c.env.Client.Delete(ctx, binding); err != nil {
		t.Fatal(err)
	}
	poll(t, r, "the RoleBinding removed by hand to be restored", func() bool {
		return c.env.Client.Get(ctx, client.ObjectKeyFromObject(binding), binding) == nil && mayWatch(teams[0])
	})

	if err := c.env.Client.Delete(ctx, agents); err != nil {
		t.Fatal(err)
	}
	poll(t, r, "the agents of "+teams[0]+", their ServiceAccount deleted, to be let watch no more", func() bool { return !mayWatch(teams[0]) })
}
