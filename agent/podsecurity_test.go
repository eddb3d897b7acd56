package agent_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// restrictedWorker is what the restricted Pod Security Standard asks of a
// worker container; the agent's own comes from injection.
var restrictedWorker = &corev1.SecurityContext{
	RunAsNonRoot:             ptr.To(true),
	AllowPrivilegeEscalation: ptr.To(false),
	Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
}

// The injected agent passes the restricted Pod Security Standard, as the
// API server's PodSecurity admission checks it, so that namespaces that
// enforce it can run in-place JobSets.
var _ = Describe("Pod Security", func() {
	It("admits a Pod with the injected agent in a namespace that enforces restricted, and names only the worker when the worker breaks it", func(ctx context.Context) {
		ns := framework.TestNamespace(ctx, env.Client, "restricted")
		namespace := &corev1.Namespace{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: ns}, namespace)).To(Succeed())
		namespace.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
		Expect(env.Client.Update(ctx, namespace)).To(Succeed())

		pod := func(name string, worker *corev1.SecurityContext) *corev1.Pod {
			rj := wrappers.MakeReplicatedJob("workers").InPlaceReady().Obj()
			template := rj.Template.Spec.Template
			template.Spec.Containers[0].SecurityContext = worker
			return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: template.Spec}
		}
		Expect(env.Client.Create(ctx, pod("compliant", restrictedWorker))).To(Succeed())

		err := env.Client.Create(ctx, pod("worker-not-restricted", nil))
		Expect(err).To(MatchError(And(ContainSubstring(`violates PodSecurity "restricted`), ContainSubstring(`container "worker"`))))
		Expect(err.Error()).NotTo(ContainSubstring(`"jobset-agent"`), "the agent must not be among the containers that break restricted")
	})
})
