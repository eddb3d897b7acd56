package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// applyManifest creates every object of a YAML file, with namespace
// "default" replaced by ns.
func applyManifest(ctx context.Context, c client.Client, file, ns string) {
	root, err := framework.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	data, err := os.ReadFile(filepath.Join(root, "agent", "rbac", file))
	Expect(err).NotTo(HaveOccurred())
	for _, doc := range strings.Split(strings.ReplaceAll(string(data), "namespace: default", "namespace: "+ns), "\n---\n") {
		obj := &unstructured.Unstructured{}
		Expect(yaml.Unmarshal([]byte(doc), &obj.Object)).To(Succeed())
		if len(obj.Object) == 0 {
			continue
		}
		err := c.Create(ctx, obj)
		if err != nil && !strings.Contains(err.Error(), "already exists") {
			Expect(err).NotTo(HaveOccurred(), "%s %s", obj.GetKind(), obj.GetName())
		}
	}
}

var _ = Describe("Agent RBAC and the epoch-only admission policy", func() {
	It("lets the agent's ServiceAccount patch the epoch annotation and nothing else, and leaves others alone", func() {
		ctx := context.Background()
		c := env.Client
		ns := framework.TestNamespace(ctx, c, "agent-rbac")
		applyManifest(ctx, c, "agent-rbac.yaml", ns)
		applyManifest(ctx, c, "epoch-only-policy.yaml", ns)

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
})
