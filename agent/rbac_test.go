package agent_test

import (
	"context"
	"fmt"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// kubectlApply applies a file of agent/rbac the way the user guide says
// to, with the envtest kubectl: `kubectl apply -f agent/rbac/<file> [args]`.
func kubectlApply(file string, args ...string) {
	root, err := framework.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	out, err := env.Kubectl(append([]string{"apply", "-f", filepath.Join(root, "agent", "rbac", file)}, args...)...)
	Expect(err).NotTo(HaveOccurred(), out)
}

// agentCan asks the authorizer whether the jobset-agent ServiceAccount of
// saNamespace may verb resource in namespace, as the agent's token would be
// (username and groups).
func agentCan(ctx context.Context, saNamespace, namespace, verb, group, resource string) bool {
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   "system:serviceaccount:" + saNamespace + ":jobset-agent",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + saNamespace, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: verb, Group: group, Resource: resource,
		},
	}}
	Expect(env.Client.Create(ctx, review)).To(Succeed())
	return review.Status.Allowed
}

var _ = Describe("Agent RBAC and the epoch-only admission policy", func() {
	It("lets the agent's ServiceAccount patch the epoch annotation and nothing else, and leaves others alone", func() {
		ctx := context.Background()
		c := env.Client
		ns := framework.TestNamespace(ctx, c, "agent-rbac")
		kubectlApply("agent-rbac.yaml", "-n", ns)
		kubectlApply("epoch-only-policy.yaml")

		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "worker", Namespace: ns,
				Labels: map[string]string{"app": "trainer"}, Annotations: map[string]string{"team": "a"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "registry.k8s.io/pause:3.10"}}},
		}
		Expect(c.Create(ctx, pod)).To(Succeed())

		cfg := rest.CopyConfig(env.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":jobset-agent"}
		asAgent, err := client.New(cfg, client.Options{Scheme: env.Scheme})
		Expect(err).NotTo(HaveOccurred())
		patch := func(as client.Client, body string) error {
			return as.Patch(ctx, pod.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(body)))
		}

		By("denying a label change, once the policy is in force")
		// Each try writes a new value: a try that got through before the
		// policy was in force would make a repeated one a no-op.
		try := 0
		Eventually(func() error {
			try++
			return patch(asAgent, fmt.Sprintf(`{"metadata":{"labels":{"app":"hijacked-%d"}}}`, try))
		}).Should(MatchError(ContainSubstring("may change only the Pod annotation jobset.sigs.k8s.io/epoch")))

		By("allowing the epoch annotation")
		Expect(patch(asAgent, `{"metadata":{"annotations":{"`+jobset.EpochKey+`":"3"}}}`)).To(Succeed())

		By("denying another annotation, and a spec change")
		Expect(patch(asAgent, `{"metadata":{"annotations":{"team":"b"}}}`)).To(MatchError(ContainSubstring("may change only")))
		Expect(patch(asAgent, `{"spec":{"activeDeadlineSeconds":60}}`)).To(MatchError(ContainSubstring("may change only")))

		By("denying what RBAC does not grant")
		Expect(asAgent.Delete(ctx, pod.DeepCopy())).To(MatchError(ContainSubstring("forbidden")))
		Expect(asAgent.List(ctx, &jobset.JobSetList{}, client.InNamespace(ns))).To(Succeed())

		By("leaving other identities unaffected")
		Expect(patch(c, `{"metadata":{"labels":{"app":"relabelled"}}}`)).To(Succeed())
	})

	It("applies into any namespace with kubectl apply -n, and binds that namespace's agent only", func(ctx context.Context) {
		c := env.Client
		teamA := framework.TestNamespace(ctx, c, "team-a")
		teamB := framework.TestNamespace(ctx, c, "team-b")
		for _, ns := range []string{teamA, teamB} {
			kubectlApply("agent-rbac.yaml", "-n", ns)
			Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "jobset-agent"}, &corev1.ServiceAccount{})).To(Succeed())
		}

		By("granting each namespace's agent what it needs there")
		needs := []struct{ verb, group, resource string }{
			{"get", jobset.GroupVersion.Group, "jobsets"},
			{"list", jobset.GroupVersion.Group, "jobsets"},
			{"watch", jobset.GroupVersion.Group, "jobsets"},
			{"patch", "", "pods"},
		}
		for _, ns := range []string{teamA, teamB} {
			for _, n := range needs {
				Expect(agentCan(ctx, ns, ns, n.verb, n.group, n.resource)).To(BeTrue(), "%s's agent: %s %s", ns, n.verb, n.resource)
			}
		}

		By("and nothing in the other namespace, nor more than it needs")
		for _, n := range needs {
			Expect(agentCan(ctx, teamA, teamB, n.verb, n.group, n.resource)).To(BeFalse(), "%s's agent in %s: %s %s", teamA, teamB, n.verb, n.resource)
			Expect(agentCan(ctx, teamB, teamA, n.verb, n.group, n.resource)).To(BeFalse(), "%s's agent in %s: %s %s", teamB, teamA, n.verb, n.resource)
		}
		for _, verb := range []string{"get", "update", "delete", "create"} {
			Expect(agentCan(ctx, teamA, teamA, verb, "", "pods")).To(BeFalse(), "%s pods", verb)
		}
		Expect(agentCan(ctx, teamA, teamA, "patch", jobset.GroupVersion.Group, "jobsets")).To(BeFalse(), "patch jobsets")
	})
})
