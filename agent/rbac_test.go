package agent_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
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
// saNamespace may verb resource ("pods", or "pods/status" for a
// subresource) in namespace, as the agent's token would be (username and
// groups).
func agentCan(ctx context.Context, saNamespace, namespace, verb, group, resource string) bool {
	resource, subresource, _ := strings.Cut(resource, "/")
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   "system:serviceaccount:" + saNamespace + ":jobset-agent",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + saNamespace, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: verb, Group: group, Resource: resource, Subresource: subresource,
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
			// Requests below limits (Burstable), so that a resize of the
			// CPU request is a valid request the policy must refuse.
			Containers: []corev1.Container{{Name: "worker", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")},
				}}},
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
	c, err := client.New(tokenConfig(ctx, ns, pod), client.Options{Scheme: env.Scheme})
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

// tokenConfig is a rest.Config that authenticates with a new token of the
// agent's ServiceAccount, bound to pod (nil: to nothing); see tokenClient.
func tokenConfig(ctx context.Context, ns string, pod *corev1.Pod) *rest.Config {
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if pod != nil {
		request.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: agentspec.ServiceAccountName}}
	Expect(env.Client.SubResource("token").Create(ctx, sa, request)).To(Succeed())
	Expect(request.Status.Token).NotTo(BeEmpty())

	cfg := rest.AnonymousClientConfig(env.Config)
	cfg.BearerToken = request.Status.Token
	return cfg
}

// mergePatch patches pod's metadata or spec as the agent does (a JSON
// merge patch).
func mergePatch(ctx context.Context, as client.Client, pod *corev1.Pod, body string) error {
	return as.Patch(ctx, pod.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(body)))
}

func epochPatch(value string) string {
	return fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, jobset.EpochKey, value)
}

// joinRestarts is a join of epoch with the report of the Pod's worker
// restarts.
func joinRestarts(epoch, restarts string) string {
	return fmt.Sprintf(`{"metadata":{"annotations":{%q:%q,%q:%q}}}`, jobset.EpochKey, epoch, agentspec.WorkerRestartsAnnotation, restarts)
}

var removeEpoch = `{"metadata":{"annotations":{"` + jobset.EpochKey + `":null}}}`

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

	It("lets an agent write its own Pod's epoch, keep it and raise it by one, and leaves other identities alone", func(ctx context.Context) {
		for _, value := range []string{"1", "1", "2", "3"} {
			Expect(mergePatch(ctx, asOwn, own, epochPatch(value))).To(Succeed(), "epoch %s", value)
		}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(own), own)).To(Succeed())
		Expect(own.Annotations).To(HaveKeyWithValue(jobset.EpochKey, "3"))
		Expect(mergePatch(ctx, asOwn, own, epochPatch("5"))).To(And(ruleDenial("epoch-at-most-next"),
			MatchError(ContainSubstring("may rise by one at most, from 3 to 4, not to 5"))))

		By("leaving other identities unaffected: a namespace editor writes what it likes")
		Expect(mergePatch(ctx, env.Client, own, epochPatch("abc"))).To(Succeed())
		Expect(mergePatch(ctx, env.Client, neighbour, `{"metadata":{"labels":{"app":"relabelled"}}}`)).To(Succeed())

		By("letting the agent replace a value that is no epoch with a valid one")
		Expect(mergePatch(ctx, asOwn, own, epochPatch("3"))).To(Succeed())
	})

	It("admits exactly the epochs the controller reads (agentspec.ParseEpoch, one table for both)", func(ctx context.Context) {
		for _, c := range epochcases.Cases {
			// A namespace editor removes the epoch first, so that no old
			// value bounds the new one: this is the grammar alone.
			Expect(mergePatch(ctx, env.Client, own, removeEpoch)).To(Succeed())
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
		Entry("removing its epoch", func() *corev1.Pod { return own }, "5", removeEpoch, "epoch-value"),
		// An agent joins S+1 and its Pod already shows S or S+1 (see the
		// policy's comment): a larger step only stalls the group.
		Entry("a step of two on its own epoch", func() *corev1.Pod { return own }, "5", epochPatch("7"), "epoch-at-most-next"),
		Entry("the largest epoch over a small one", func() *corev1.Pod { return own }, "5", epochPatch("2147483647"), "epoch-at-most-next"),
		Entry("a label change on its own Pod", func() *corev1.Pod { return own }, "", `{"metadata":{"labels":{"app":"hijacked"}}}`, "epoch-only"),
		Entry("another annotation on its own Pod", func() *corev1.Pod { return own }, "", `{"metadata":{"annotations":{"team":"b"}}}`, "epoch-only"),
		Entry("a spec change on its own Pod", func() *corev1.Pod { return own }, "", `{"spec":{"activeDeadlineSeconds":60}}`, "epoch-only"),
	)

	// The controller marks a Pod of a lost node Failed and deletes it while
	// its containers may run on; its Job replaces it. Back, its agent must
	// not join beside the replacement, not even the epoch the Pod shows.
	It("denies an epoch, even the one the Pod shows, once its Pod was marked Failed or is being deleted", func(ctx context.Context) {
		Expect(mergePatch(ctx, asOwn, own, epochPatch("5"))).To(Succeed())
		Expect(mergePatch(ctx, asOwn, neighbour, epochPatch("5"))).To(ruleDenial("own-pod"))
		asNeighbour := tokenClient(ctx, ns, neighbour)
		Expect(mergePatch(ctx, asNeighbour, neighbour, epochPatch("5"))).To(Succeed())

		By("marking own Failed, as the controller marks a Pod of a lost node")
		Expect(env.Client.Status().Patch(ctx, own.DeepCopy(), client.RawPatch(types.StrategicMergePatchType,
			[]byte(`{"status":{"phase":"Failed","conditions":[{"type":"DisruptionTarget","status":"True","reason":"NodeLost"}]}}`)))).To(Succeed())
		for _, value := range []string{"5", "6"} {
			Expect(mergePatch(ctx, asOwn, own, epochPatch(value))).To(And(ruleDenial("live-pod"),
				MatchError(ContainSubstring("has ended Failed"))), "epoch %s", value)
		}

		By("deleting neighbour, whose finalizer keeps it")
		Expect(mergePatch(ctx, env.Client, neighbour, `{"metadata":{"finalizers":["jobset.sigs.k8s.io/test-keep"]}}`)).To(Succeed())
		Expect(env.Client.Delete(ctx, neighbour.DeepCopy())).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			Expect(mergePatch(ctx, env.Client, neighbour, `{"metadata":{"finalizers":null}}`)).To(Succeed())
		})
		for _, value := range []string{"5", "6"} {
			Expect(mergePatch(ctx, asNeighbour, neighbour, epochPatch(value))).To(And(ruleDenial("live-pod"),
				MatchError(ContainSubstring("is being deleted"))), "epoch %s", value)
		}
		got := &corev1.Pod{}
		for _, pod := range []*corev1.Pod{own, neighbour} {
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pod), got)).To(Succeed())
			Expect(got.Annotations).To(HaveKeyWithValue(jobset.EpochKey, "5"))
		}
	})

	// The controller counts a group restart that nothing but fences caused
	// against no budget (docs/controller.md, "A fence that fires anyway"):
	// the record must come with the join after the epoch it names, and
	// name the epoch the Pod showed, so that no record is written ahead of
	// a failure.
	It("lets an agent record its fence only with its join of the next epoch, naming the epoch its Pod showed", func(ctx context.Context) {
		joinFenced := func(epoch, fenced string) string {
			return fmt.Sprintf(`{"metadata":{"annotations":{%q:%q,%q:%q}}}`, jobset.EpochKey, epoch, agentspec.FencedAnnotation, fenced)
		}
		Expect(mergePatch(ctx, asOwn, own, epochPatch("5"))).To(Succeed())

		Expect(mergePatch(ctx, asOwn, own, fmt.Sprintf(`{"metadata":{"annotations":{%q:"5"}}}`, agentspec.FencedAnnotation))).
			To(ruleDenial("fenced-value"), "a record alone, ahead of a join")
		Expect(mergePatch(ctx, asOwn, own, joinFenced("6", "4"))).
			To(And(ruleDenial("fenced-value"), MatchError(ContainSubstring(`shows (5), not "4"`))), "an older epoch")
		Expect(mergePatch(ctx, asOwn, own, joinFenced("6", "6"))).To(ruleDenial("fenced-value"), "the epoch it joins")
		Expect(mergePatch(ctx, asOwn, own, joinFenced("5", "5"))).To(ruleDenial("fenced-value"), "with the epoch it shows, written again")
		Expect(mergePatch(ctx, asOwn, other, joinFenced("6", "5"))).To(ruleDenial("own-pod"))
		Expect(mergePatch(ctx, asOwn, own, joinFenced("6", "5"))).To(Succeed())
		Expect(mergePatch(ctx, asOwn, own, fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, agentspec.FencedAnnotation))).
			To(ruleDenial("fenced-value"), "taken back")
		Expect(mergePatch(ctx, asOwn, own, epochPatch("7"))).To(Succeed(), "a later join leaves the record, which then names an older epoch")
		got := &corev1.Pod{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(own), got)).To(Succeed())
		Expect(got.Annotations).To(And(HaveKeyWithValue(jobset.EpochKey, "7"), HaveKeyWithValue(agentspec.FencedAnnotation, "5")))
	})

	// The hang's record only names why the join it comes with restarts
	// the group: it may not come ahead of the join, nor name another
	// epoch, nor be taken back.
	It("lets an agent record its worker's hang only with its join of the next epoch, naming the epoch its Pod showed", func(ctx context.Context) {
		joinHung := func(epoch, hung string) string {
			return fmt.Sprintf(`{"metadata":{"annotations":{%q:%q,%q:%q}}}`, jobset.EpochKey, epoch, agentspec.HungAnnotation, hung)
		}
		Expect(mergePatch(ctx, asOwn, own, epochPatch("5"))).To(Succeed())

		Expect(mergePatch(ctx, asOwn, own, fmt.Sprintf(`{"metadata":{"annotations":{%q:"5"}}}`, agentspec.HungAnnotation))).
			To(ruleDenial("hung-value"), "a record alone, ahead of a join")
		Expect(mergePatch(ctx, asOwn, own, joinHung("6", "4"))).
			To(And(ruleDenial("hung-value"), MatchError(ContainSubstring(`shows (5), not "4"`))), "an older epoch")
		Expect(mergePatch(ctx, asOwn, own, joinHung("6", "6"))).To(ruleDenial("hung-value"), "the epoch it joins")
		Expect(mergePatch(ctx, asOwn, other, joinHung("6", "5"))).To(ruleDenial("own-pod"))
		Expect(mergePatch(ctx, asOwn, own, joinHung("6", "5"))).To(Succeed())
		Expect(mergePatch(ctx, asOwn, own, fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, agentspec.HungAnnotation))).
			To(ruleDenial("hung-value"), "taken back")
		Expect(mergePatch(ctx, asOwn, own, joinHung("7", "6"))).To(Succeed(), "a later hang names the epoch it left")
		got := &corev1.Pod{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(own), got)).To(Succeed())
		Expect(got.Annotations).To(And(HaveKeyWithValue(jobset.EpochKey, "7"), HaveKeyWithValue(agentspec.HungAnnotation, "6")))
	})

	It("admits exactly the reports of worker restarts the controller reads (agentspec.ParseWorkerRestarts, one table for both), with a join of the epoch they name", func(ctx context.Context) {
		joinEpoch := agentspec.FormatEpoch(epochcases.RestartsEpoch)
		for _, c := range epochcases.WorkerRestartsCases {
			// A namespace editor removes the epoch and the report first,
			// so that each case is a first join: the grammar alone.
			Expect(mergePatch(ctx, env.Client, own, fmt.Sprintf(`{"metadata":{"annotations":{%q:null,%q:null}}}`,
				jobset.EpochKey, agentspec.WorkerRestartsAnnotation))).To(Succeed())
			err := mergePatch(ctx, asOwn, own, joinRestarts(joinEpoch, c.Value))
			if c.Valid {
				Expect(err).NotTo(HaveOccurred(), "report %s", c.Name())
			} else {
				Expect(err).To(ruleDenial("worker-restarts-value"), "report %s", c.Name())
			}
		}
	})

	// The report only counts the Pod's worker restarts: it comes with a
	// join (or a write of the epoch the Pod shows) and names the epoch the
	// Pod shows after it, so that a report is never read against another
	// join; it is never taken back.
	It("lets an agent report its worker's restarts only naming the epoch its Pod shows after the write", func(ctx context.Context) {
		Expect(mergePatch(ctx, asOwn, own, epochPatch("5"))).To(Succeed())
		Expect(mergePatch(ctx, asOwn, own, joinRestarts("6", "process=1,pod=0,epoch=5,tier=process"))).
			To(And(ruleDenial("worker-restarts-value"), MatchError(ContainSubstring(`the epoch the Pod shows (6), not "process=1,pod=0,epoch=5,tier=process"`))), "the epoch it left")
		Expect(mergePatch(ctx, asOwn, own, joinRestarts("6", "process=1,pod=0,epoch=7,tier=process"))).
			To(ruleDenial("worker-restarts-value"), "an epoch ahead")
		Expect(mergePatch(ctx, asOwn, own, fmt.Sprintf(`{"metadata":{"annotations":{%q:"process=1,pod=0,epoch=6,tier=process"}}}`, agentspec.WorkerRestartsAnnotation))).
			To(ruleDenial("worker-restarts-value"), "ahead of its join")
		Expect(mergePatch(ctx, asOwn, other, joinRestarts("6", "process=1,pod=0,epoch=6,tier=process"))).To(ruleDenial("own-pod"))
		Expect(mergePatch(ctx, asOwn, own, joinRestarts("6", "process=1,pod=0,epoch=6,tier=process"))).To(Succeed())
		Expect(mergePatch(ctx, asOwn, own, fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, agentspec.WorkerRestartsAnnotation))).
			To(ruleDenial("worker-restarts-value"), "taken back")
		Expect(mergePatch(ctx, asOwn, own, joinRestarts("6", "process=1,pod=1,epoch=6,tier=pod"))).
			To(Succeed(), "the Pod's next agent joins the epoch the Pod shows again, after a restart of its containers")
		Expect(mergePatch(ctx, asOwn, own, epochPatch("7"))).To(Succeed(), "a join without a report leaves the last, which then names an older epoch")
		got := &corev1.Pod{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(own), got)).To(Succeed())
		Expect(got.Annotations).To(And(HaveKeyWithValue(jobset.EpochKey, "7"),
			HaveKeyWithValue(agentspec.WorkerRestartsAnnotation, "process=1,pod=1,epoch=6,tier=pod")))
	})

	// The controller waits for this confirmation from a Pod it marked lost
	// whose kubelet may be down (docs/controller.md, "The kubelet down
	// alone"): the one write such a Pod takes, and it must not carry an
	// epoch with it.
	It("lets an agent confirm its worker's stop for the epoch its Pod shows, alone, even once its Pod was marked Failed", func(ctx context.Context) {
		stopped := func(value string) string {
			return fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, agentspec.WorkerStoppedAnnotation, value)
		}
		Expect(mergePatch(ctx, asOwn, own, epochPatch("5"))).To(Succeed())

		By("on a live Pod: only the epoch it shows")
		Expect(mergePatch(ctx, asOwn, own, stopped("4"))).To(And(ruleDenial("worker-stopped-value"), MatchError(ContainSubstring(`shows (5), not "4"`))))
		Expect(mergePatch(ctx, asOwn, own, fmt.Sprintf(`{"metadata":{"annotations":{%q:"5","other":"x"}}}`, agentspec.WorkerStoppedAnnotation))).
			To(ruleDenial("epoch-only"))

		By("marking own Failed, as the controller marks a Pod of a lost node")
		Expect(env.Client.Status().Patch(ctx, own.DeepCopy(), client.RawPatch(types.StrategicMergePatchType,
			[]byte(`{"status":{"phase":"Failed","conditions":[{"type":"DisruptionTarget","status":"True","reason":"NodeLost"}]}}`)))).To(Succeed())
		Expect(mergePatch(ctx, asOwn, own, stopped("5"))).To(Succeed())
		Expect(mergePatch(ctx, asOwn, own, fmt.Sprintf(`{"metadata":{"annotations":{%q:"6",%q:"6"}}}`, jobset.EpochKey, agentspec.WorkerStoppedAnnotation))).
			To(ruleDenial("live-pod"), "an epoch with the confirmation")
		Expect(mergePatch(ctx, asOwn, own, epochPatch("5"))).To(ruleDenial("live-pod"), "the epoch it shows, written again")
		Expect(mergePatch(ctx, asOwn, own, fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, agentspec.WorkerStoppedAnnotation))).
			To(And(ruleDenial("worker-stopped-value"), MatchError(ContainSubstring("not removed"))))
		got := &corev1.Pod{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(own), got)).To(Succeed())
		Expect(got.Annotations).To(And(HaveKeyWithValue(jobset.EpochKey, "5"), HaveKeyWithValue(agentspec.WorkerStoppedAnnotation, "5")))
	})

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

	// A RoleBinding that grants a namespace's every ServiceAccount (the
	// group system:serviceaccounts:<ns>) more than the agent's Role is
	// common; the policy, not RBAC, must keep the agent's token to the
	// epoch of its own Pod.
	It("denies every Pod subresource, Pod creation and deletion, where a broad Role grants them all", func(ctx context.Context) {
		By("granting every ServiceAccount of the namespace everything on Pods and their subresources")
		// RBAC has no "pods/*": a Role names each subresource (or "*").
		everything := []string{"pods", "bindings", "pods/status", "pods/ephemeralcontainers", "pods/resize", "pods/eviction",
			"pods/binding", "pods/exec", "pods/attach", "pods/portforward", "pods/proxy", "pods/log"}
		Expect(env.Client.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "broad"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: everything, Verbs: []string{"*"}}}})).To(Succeed())
		Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "broad"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:serviceaccounts:" + ns}},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "broad"}})).To(Succeed())
		Eventually(func() bool { return agentCan(ctx, ns, ns, "create", "", "pods/eviction") }).Should(BeTrue())
		for _, grant := range []struct{ verb, resource string }{
			{"patch", "pods/status"}, {"patch", "pods/ephemeralcontainers"}, {"patch", "pods/resize"},
			{"create", "pods/eviction"}, {"create", "pods/binding"}, {"create", "bindings"},
			{"create", "pods/exec"}, {"create", "pods/attach"}, {"create", "pods/portforward"}, {"create", "pods/proxy"},
			{"create", "pods"}, {"delete", "pods"}, {"deletecollection", "pods"},
		} {
			Expect(agentCan(ctx, ns, ns, grant.verb, "", grant.resource)).To(BeTrue(), "RBAC grants %s %s", grant.verb, grant.resource)
		}

		cfg := tokenConfig(ctx, ns, own)
		clientset, err := kubernetes.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		// connect sends a request to a connect subresource of own (exec,
		// attach, portforward, proxy) as the agent, without upgrading the
		// connection: admission answers before any kubelet is dialled.
		connect := func(verb, subresource string, params map[string]string) error {
			req := clientset.CoreV1().RESTClient().Verb(verb).Namespace(ns).Resource("pods").Name(own.Name).SubResource(subresource)
			for k, v := range params {
				req = req.Param(k, v)
			}
			return req.Do(ctx).Error()
		}
		bind := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: own.Name},
			Target: corev1.ObjectReference{Kind: "Node", Name: "node-a"}}
		strategic := func(body string) client.Patch { return client.RawPatch(types.StrategicMergePatchType, []byte(body)) }
		stranger := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "created-by-agent"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}

		// Every request is made, and every one not denied by its rule
		// reported.
		var notDenied []string
		for _, c := range []struct {
			name string
			err  error
			rule string
		}{
			{"patch pods/status", asOwn.Status().Patch(ctx, own.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"status":{"message":"hijacked"}}`))), "no-subresource"},
			{"patch pods/ephemeralcontainers", asOwn.SubResource("ephemeralcontainers").Patch(ctx, own.DeepCopy(), strategic(
				`{"spec":{"ephemeralContainers":[{"name":"debug","image":"registry.k8s.io/pause:3.10","imagePullPolicy":"IfNotPresent","terminationMessagePolicy":"File"}]}}`)), "no-subresource"},
			{"patch pods/resize", asOwn.SubResource("resize").Patch(ctx, own.DeepCopy(), strategic(
				`{"spec":{"containers":[{"name":"worker","resources":{"requests":{"cpu":"150m"}}}]}}`)), "no-subresource"},
			{"create pods/binding", asOwn.SubResource("binding").Create(ctx, own.DeepCopy(), bind.DeepCopy()), "no-subresource"},
			{"create bindings", asOwn.Create(ctx, bind.DeepCopy()), "no-subresource"},
			{"exec", connect(http.MethodPost, "exec", map[string]string{"command": "true", "stdout": "true"}), "no-subresource"},
			{"attach", connect(http.MethodPost, "attach", map[string]string{"stdout": "true"}), "no-subresource"},
			{"portforward", connect(http.MethodPost, "portforward", map[string]string{"ports": "8080"}), "no-subresource"},
			{"proxy", connect(http.MethodGet, "proxy", nil), "no-subresource"},
			// Last: the bound token ends with its Pod.
			{"create pods/eviction", asOwn.SubResource("eviction").Create(ctx, own.DeepCopy(), &policyv1.Eviction{}), "no-subresource"},
			{"create a Pod", asOwn.Create(ctx, stranger.DeepCopy()), "no-create"},
			{"delete its Pod", asOwn.Delete(ctx, own.DeepCopy()), "no-delete"},
			{"delete every Pod", asOwn.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns)), "no-delete"},
		} {
			if denied, _ := ruleDenial(c.rule).Match(c.err); !denied {
				notDenied = append(notDenied, fmt.Sprintf("%s: want rule %s, got %v", c.name, c.rule, c.err))
			}
		}
		Expect(notDenied).To(BeEmpty())

		By("leaving every Pod as it was")
		got := &corev1.Pod{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(own), got)).To(Succeed())
		Expect(got.Status.Message).To(BeEmpty())
		Expect(got.Spec.EphemeralContainers).To(BeEmpty())
		Expect(got.Spec.NodeName).To(BeEmpty())
		Expect(got.Spec.Containers[0].Resources.Requests.Cpu().String()).To(Equal("100m"))
		Expect(got.DeletionTimestamp).To(BeNil())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(neighbour), &corev1.Pod{})).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(stranger), &corev1.Pod{})).To(MatchError(ContainSubstring("not found")))
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

// The API server names, on every answer, the flow schema and priority
// level that admitted the request (API Priority and Fairness).
var _ = Describe("The agents' priority level, on a real API server", func() {
	It("admits an agent's watch of its JobSet and patch of its Pod through the agents' flow schema, and nothing else of it", func(ctx context.Context) {
		ns := framework.TestNamespace(ctx, env.Client, "flowcontrol")
		kubectlApply("agent-rbac.yaml", "-n", ns)
		kubectlApply("agents-flowcontrol.yaml")
		own := agentPod(ctx, ns, "story-a-workers-0-0", "story-a")
		cfg := tokenConfig(ctx, ns, own)
		httpClient, err := rest.HTTPClientFor(cfg)
		Expect(err).NotTo(HaveOccurred())
		// flowSchemaOf sends a request as the agent and returns the UID of
		// the flow schema that admitted it, whatever the answer.
		flowSchemaOf := func(method, path, body string) string {
			req, err := http.NewRequestWithContext(ctx, method, cfg.Host+path, strings.NewReader(body))
			Expect(err).NotTo(HaveOccurred())
			if method == http.MethodPatch {
				req.Header.Set("Content-Type", "application/merge-patch+json")
			}
			resp, err := httpClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			return resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID")
		}
		agents, serviceAccounts := &flowcontrolv1.FlowSchema{}, &flowcontrolv1.FlowSchema{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "jobset-agents"}, agents)).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "service-accounts"}, serviceAccounts)).To(Succeed())

		watch := "/apis/" + agentspec.Group + "/" + agentspec.Version + "/namespaces/" + ns + "/" + agentspec.Resource + "?watch=true&timeoutSeconds=1"
		join := "/api/v1/namespaces/" + ns + "/pods/" + own.Name
		// The API server takes up a new flow schema in the background.
		Eventually(func() string { return flowSchemaOf(http.MethodGet, watch, "") }).Should(Equal(string(agents.UID)), "the watch of JobSets")
		Expect(flowSchemaOf(http.MethodPatch, join, epochPatch("1"))).To(Equal(string(agents.UID)), "the join")
		Expect(flowSchemaOf(http.MethodGet, join, "")).To(Equal(string(serviceAccounts.UID)), "a read of its Pod, which the agent never makes")
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
