package agent_test

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/agent"
	"github.com/fastjobset/jobset/agent/kubeclient"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/epochcases"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// localListener is a listener for the agent's barrier on a free port.
func localListener() net.Listener {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	return l
}

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

// agentPod creates a Pod of the named JobSet that runs as the agent's
// ServiceAccount, as every worker Pod with an agent does.
func agentPod(ctx context.Context, ns, name, jobSetName string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
			Labels:      map[string]string{"app": "trainer", jobset.JobSetNameKey: jobSetName},
			Annotations: map[string]string{"team": "a", jobset.JobSetNameKey: jobSetName}},
		Spec: corev1.PodSpec{
			ServiceAccountName:           agentspec.ServiceAccountName,
			AutomountServiceAccountToken: ptr.To(false),
			Containers:                   []corev1.Container{{Name: "worker", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	Expect(env.Client.Create(ctx, pod)).To(Succeed())
	return pod
}

// tokenClient is a client that authenticates with a real ServiceAccount
// token of the agent's ServiceAccount, issued by the API server's
// TokenRequest API: bound to pod as the kubelet's projected token is, or
// bound to nothing when pod is nil. No impersonation: the API server
// authenticates the token and fills in the user info the policy reads.
func tokenClient(ctx context.Context, ns string, pod *corev1.Pod) client.Client {
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if pod != nil {
		request.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: agentspec.ServiceAccountName}}
	Expect(env.Client.SubResource("token").Create(ctx, sa, request)).To(Succeed())
	Expect(request.Status.Token).NotTo(BeEmpty())

	cfg := rest.AnonymousClientConfig(env.Config)
	cfg.BearerToken = request.Status.Token
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	Expect(err).NotTo(HaveOccurred())

	By("checking that the API server authenticates the token as the agent, bound to its Pod")
	review := &authenticationv1.SelfSubjectReview{}
	Expect(c.Create(ctx, review)).To(Succeed())
	Expect(review.Status.UserInfo.Username).To(Equal("system:serviceaccount:" + ns + ":" + agentspec.ServiceAccountName))
	if pod != nil {
		Expect(review.Status.UserInfo.Extra).To(HaveKeyWithValue("authentication.kubernetes.io/pod-name", authenticationv1.ExtraValue{pod.Name}))
		Expect(review.Status.UserInfo.Extra).To(HaveKeyWithValue("authentication.kubernetes.io/pod-uid", authenticationv1.ExtraValue{string(pod.UID)}))
	}
	return c
}

// mergePatch patches pod's metadata or spec as the agent does (a JSON
// merge patch).
func mergePatch(ctx context.Context, as client.Client, pod *corev1.Pod, body string) error {
	return as.Patch(ctx, pod.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(body)))
}

func epochPatch(value string) string {
	return fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, jobset.EpochKey, value)
}

// policyDenial matches any denial of the epoch-only policy.
var policyDenial = MatchError(ContainSubstring("ValidatingAdmissionPolicy 'jobset-agent-epoch-only'"))

// ruleDenial matches the policy's denial that names rule.
func ruleDenial(rule string) OmegaMatcher {
	return MatchError(And(ContainSubstring("ValidatingAdmissionPolicy 'jobset-agent-epoch-only'"), ContainSubstring("denied request: rule "+rule+":")))
}

var _ = Describe("The epoch-only admission policy, with real bound ServiceAccount tokens", func() {
	var (
		ns                    string
		own, neighbour, other *corev1.Pod
		// asOwn holds a token bound to own, as own's agent holds.
		asOwn client.Client
	)

	BeforeEach(func(ctx context.Context) {
		ns = framework.TestNamespace(ctx, env.Client, "epoch-only")
		kubectlApply("agent-rbac.yaml", "-n", ns)
		kubectlApply("epoch-only-policy.yaml")
		own = agentPod(ctx, ns, "story-a-workers-0-0", "story-a")
		neighbour = agentPod(ctx, ns, "story-a-workers-0-1", "story-a")
		other = agentPod(ctx, ns, "story-b-workers-0-0", "story-b")
		asOwn = tokenClient(ctx, ns, own)

		By("waiting for the policy to be in force")
		// Each try writes a new value: a try that got through before the
		// policy was in force would make a repeated one a no-op.
		try := 0
		Eventually(func() error {
			try++
			return mergePatch(ctx, asOwn, own, fmt.Sprintf(`{"metadata":{"labels":{"probe":"%d"}}}`, try))
		}).Should(policyDenial)
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(own), own)).To(Succeed())
	})

	It("lets an agent write its own Pod's epoch, keep it and raise it, and leaves other identities alone", func(ctx context.Context) {
		for _, value := range []string{"1", "1", "2", "2147483647"} {
			Expect(mergePatch(ctx, asOwn, own, epochPatch(value))).To(Succeed(), "epoch %s", value)
		}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(own), own)).To(Succeed())
		Expect(own.Annotations).To(HaveKeyWithValue(jobset.EpochKey, "2147483647"))

		By("leaving other identities unaffected: a namespace editor writes what it likes")
		Expect(mergePatch(ctx, env.Client, own, epochPatch("abc"))).To(Succeed())
		Expect(mergePatch(ctx, env.Client, neighbour, `{"metadata":{"labels":{"app":"relabelled"}}}`)).To(Succeed())

		By("letting the agent replace a value that is no epoch with a valid one")
		Expect(mergePatch(ctx, asOwn, own, epochPatch("3"))).To(Succeed())
	})

	It("admits exactly the epochs the controller reads (agentspec.ParseEpoch, one table for both)", func(ctx context.Context) {
		cases := slices.Clone(epochcases.Cases)
		// Valid epochs in increasing order: the policy never lets one go down.
		slices.SortStableFunc(cases, func(a, b epochcases.Case) int { return cmp.Compare(a.Epoch, b.Epoch) })
		for _, c := range cases {
			err := mergePatch(ctx, asOwn, own, epochPatch(c.Value))
			if c.Valid {
				Expect(err).NotTo(HaveOccurred(), "epoch %s", c.Name())
			} else {
				Expect(err).To(ruleDenial("epoch-value"), "epoch %s", c.Name())
			}
		}
	})

	// Each denial names its rule. before is the epoch the agent writes on
	// its own Pod first ("" for none).
	DescribeTable("denies the agent",
		func(ctx context.Context, target func() *corev1.Pod, before, patch, rule string) {
			if before != "" {
				Expect(mergePatch(ctx, asOwn, own, epochPatch(before))).To(Succeed())
			}
			pod := target()
			Expect(mergePatch(ctx, asOwn, pod, patch)).To(ruleDenial(rule))

			By("leaving the Pod as it was")
			got := &corev1.Pod{}
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pod), got)).To(Succeed())
			if pod == own && before != "" {
				Expect(got.Annotations).To(HaveKeyWithValue(jobset.EpochKey, before))
			} else {
				Expect(got.Annotations).NotTo(HaveKey(jobset.EpochKey))
			}
			Expect(got.Labels).To(Equal(pod.Labels))
			Expect(got.Spec.ActiveDeadlineSeconds).To(BeNil())
		},
		Entry("the epoch of a neighbour Pod of its JobSet", func() *corev1.Pod { return neighbour }, "", epochPatch("1"), "own-pod"),
		Entry("the epoch of another JobSet's Pod", func() *corev1.Pod { return other }, "", epochPatch("1"), "own-pod"),
		Entry("a decrease of its own epoch", func() *corev1.Pod { return own }, "5", epochPatch("4"), "epoch-not-lower"),
		Entry("removing its epoch", func() *corev1.Pod { return own }, "5", `{"metadata":{"annotations":{"`+jobset.EpochKey+`":null}}}`, "epoch-value"),
		Entry("a label change on its own Pod", func() *corev1.Pod { return own }, "", `{"metadata":{"labels":{"app":"hijacked"}}}`, "epoch-only"),
		Entry("another annotation on its own Pod", func() *corev1.Pod { return own }, "", `{"metadata":{"annotations":{"team":"b"}}}`, "epoch-only"),
		Entry("a spec change on its own Pod", func() *corev1.Pod { return own }, "", `{"spec":{"activeDeadlineSeconds":60}}`, "epoch-only"),
	)

	It("denies a token bound to no Pod, even on the Pod it runs as", func(ctx context.Context) {
		unbound := tokenClient(ctx, ns, nil)
		Expect(mergePatch(ctx, unbound, own, epochPatch("1"))).To(
			And(ruleDenial("own-pod"), MatchError(ContainSubstring("this token is bound to no Pod"))))
	})

	It("denies delete: RBAC does, and the policy does where another Role grants it", func(ctx context.Context) {
		Expect(asOwn.Delete(ctx, own.DeepCopy())).To(MatchError(ContainSubstring(`cannot delete resource "pods"`)))

		By("granting delete through another Role")
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "careless"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"delete"}}}}
		Expect(env.Client.Create(ctx, role)).To(Succeed())
		Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "careless"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: agentspec.ServiceAccountName, Namespace: ns}},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "careless"}})).To(Succeed())
		Eventually(func() bool { return agentCan(ctx, ns, ns, "delete", "", "pods") }).Should(BeTrue())
		Expect(asOwn.Delete(ctx, own.DeepCopy())).To(ruleDenial("no-delete"))
		Expect(asOwn.Delete(ctx, neighbour.DeepCopy())).To(ruleDenial("no-delete"))
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(own), &corev1.Pod{})).To(Succeed())
	})

	It("denies what RBAC does not grant", func(ctx context.Context) {
		Expect(asOwn.Get(ctx, client.ObjectKeyFromObject(neighbour), &corev1.Pod{})).To(MatchError(ContainSubstring("forbidden")))
		Expect(asOwn.List(ctx, &jobset.JobSetList{}, client.InNamespace(ns))).To(MatchError(ContainSubstring("forbidden")))
	})

	// What the agent's Role grants (watch JobSets, patch Pods) and the
	// policy allows is all the real agent needs: anything more would be a
	// permission every worker Pod's agent holds for nothing.
	It("runs the real agent with a token bound to its Pod and nothing but the agent's Role: it joins, and lifts once synced", func(ctx context.Context) {
		js := wrappers.MakeJobSet("story-a", ns).RestartStrategy(jobset.InPlaceRestart).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		Expect(env.Client.Create(ctx, js)).To(Succeed())

		request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: own.Name, UID: own.UID}}}
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: agentspec.ServiceAccountName}}
		Expect(env.Client.SubResource("token").Create(ctx, sa, request)).To(Succeed())
		cfg := rest.AnonymousClientConfig(env.Config)
		cfg.BearerToken = request.Status.Token
		httpClient, err := rest.HTTPClientFor(cfg)
		Expect(err).NotTo(HaveOccurred())
		api, err := kubeclient.New(cfg.Host, httpClient, "agent-test")
		Expect(err).NotTo(HaveOccurred())

		environment := map[string]string{agentspec.EnvNamespace: ns, agentspec.EnvPodName: own.Name, agentspec.EnvJobSetName: js.Name}
		agentCfg, err := agent.ConfigFromEnv(func(k string) string { return environment[k] })
		Expect(err).NotTo(HaveOccurred())
		a := agent.New(agentCfg, api, agent.WithListener(localListener()))
		runCtx, cancel := context.WithCancel(ctx)
		exited := make(chan int, 1)
		go func() { exited <- a.Run(runCtx) }()
		DeferCleanup(func() { cancel(); <-exited })

		Eventually(func(g Gomega) {
			got := &corev1.Pod{}
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(own), got)).To(Succeed())
			g.Expect(got.Annotations).To(HaveKeyWithValue(jobset.EpochKey, "1"))
		}).Should(Succeed())

		Eventually(func() error {
			fresh := &jobset.JobSet{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(js), fresh); err != nil {
				return err
			}
			patch := client.MergeFrom(fresh.DeepCopy())
			fresh.Status.SyncedEpoch = ptr.To[int32](1)
			return env.Client.Status().Patch(ctx, fresh, patch)
		}).Should(Succeed())
		Eventually(a.Lifted()).Should(BeClosed())
	})
})

var _ = Describe("Agent RBAC", func() {
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
		for _, verb := range []string{"get", "list", "watch", "update", "delete", "create"} {
			Expect(agentCan(ctx, teamA, teamA, verb, "", "pods")).To(BeFalse(), "%s pods", verb)
		}
		for _, verb := range []string{"get", "list", "patch", "update"} {
			Expect(agentCan(ctx, teamA, teamA, verb, jobset.GroupVersion.Group, "jobsets")).To(BeFalse(), "%s jobsets", verb)
		}
	})
})
