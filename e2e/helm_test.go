package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/images/manifest"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/runfiles"
)

// The chart's life on a real cluster: Helm takes the suite's install.yaml
// installation over, upgrades it with a value (the controller rolls and
// its new Pods lead and admit), and uninstalls it, leaving the CRD. The
// suite's install.yaml is applied again afterwards, for the specs that
// run after this one.
var _ = Describe("Helm", Serial, Label("helm"), func() {
	It("takes install.yaml over, upgrades and uninstalls the chart", func(ctx context.Context) {
		helmBin := os.Getenv("HELM")
		Expect(helmBin).NotTo(BeEmpty(), "HELM is not set: tools/e2e.sh exports it (tools/helm/build.sh)")
		root, err := framework.RepoRoot()
		Expect(err).NotTo(HaveOccurred())
		chart := filepath.Join(root, "charts", "jobset")
		home := GinkgoT().TempDir()
		helm := func(args ...string) {
			GinkgoHelper()
			cmd := exec.CommandContext(ctx, helmBin, append(args, "--namespace", "jobset-system", "--kubeconfig", os.Getenv("KUBECONFIG"))...)
			cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
			out, err := cmd.CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "helm %s:\n%s", strings.Join(args, " "), out)
		}
		DeferCleanup(func(ctx context.Context) {
			By("applying install.yaml again")
			Expect(manifest.Apply(ctx, k8sClient, runfiles.Path(os.Getenv("INSTALL_YAML")), "")).To(Succeed())
			waitForInstall(ctx)
		}, NodeTimeout(10*time.Minute))

		By("taking install.yaml's objects over")
		helm("install", "jobset", chart, "--take-ownership", "--force-conflicts", "--wait", "--timeout", "5m")
		var d appsv1.Deployment
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "jobset-system", Name: "jobset-controller"}, &d)).To(Succeed())
		Expect(d.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "Helm"))
		Eventually(func() error { return dryRunJobSet(ctx) }).Should(Succeed())

		By("upgrading with a value: the controller rolls, and a new Pod leads")
		const flag = "--node-loss-threshold=45s"
		helm("upgrade", "jobset", chart, "--reuse-values", "--set", "controller.nodeLossThreshold=45s", "--force-conflicts", "--wait", "--timeout", "5m")
		Eventually(func(g Gomega) {
			var lease coordinationv1.Lease
			g.Expect(k8sClient.Get(ctx, leaderLease, &lease)).To(Succeed())
			var pods corev1.PodList
			g.Expect(k8sClient.List(ctx, &pods, client.InNamespace("jobset-system"), client.MatchingLabels{"app.kubernetes.io/name": "jobset-controller"})).To(Succeed())
			var upgraded []string
			for _, p := range pods.Items {
				if slices.Contains(p.Spec.Containers[0].Args, flag) {
					upgraded = append(upgraded, p.Name)
				}
			}
			g.Expect(upgraded).NotTo(BeEmpty(), "no controller Pod runs with "+flag)
			holder := ""
			if lease.Spec.HolderIdentity != nil {
				holder = *lease.Spec.HolderIdentity
			}
			g.Expect(slices.ContainsFunc(upgraded, func(name string) bool { return strings.HasPrefix(holder, name) })).To(BeTrue(),
				"the lease is held by %q, not by an upgraded Pod %v", holder, upgraded)
		}).Should(Succeed())
		Eventually(func() error { return dryRunJobSet(ctx) }).Should(Succeed())

		By("uninstalling: the Deployments go, the CRD stays")
		helm("uninstall", "jobset", "--wait", "--timeout", "5m")
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: "jobset-system", Name: "jobset-controller"}, &appsv1.Deployment{}))
		}).Should(BeTrue())
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "jobsets.jobset.x-k8s.io"}, &apiextensionsv1.CustomResourceDefinition{})).To(Succeed())
	}, NodeTimeout(15*time.Minute))
})
