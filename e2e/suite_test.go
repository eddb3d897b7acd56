// Package e2e runs JobSets with in-place restarts on a real cluster: a real
// kubelet, containerd and the controller, webhook and agent images deployed
// from the generated install.yaml. It runs against any kubeconfig:
// tools/e2e.sh brings up the local cluster built from source and runs it;
// e2e/kind/run.sh does the same on kind where Docker is available.
//
// Environment:
//
//	KUBECONFIG      the cluster (required)
//	INSTALL_YAML    install.yaml to deploy (bazel-bin/images/install.yaml); without
//	                it the suite skips, so that `go test ./...` never deploys anywhere
//
// Specs that need more than a cluster running install.yaml carry a Ginkgo
// label saying what they need:
//
//	local-cluster   the processes and the node runtime of tools/cluster's
//	                local cluster (stopped, killed, reached through ctr)
//	faults          (with local-cluster) control-plane faults, which take
//	                the cluster from every other spec
//	nodes           (with local-cluster) node faults, on three nodes or more
//	soak            (with nodes) the soak of random faults, for
//	                JOBSET_SOAK_DURATION (default 150 s)
//	migration       community JobSet built (tools/peers/jobset.sh)
//	helm            Helm built (tools/helm/build.sh), its path in HELM
//	kueue           Kueue built (tools/kueue/build.sh)
//	trainer         Kubeflow Trainer built (tools/trainer/build.sh)
//
// A run that cannot give a spec what it needs leaves it out with
// --ginkgo.label-filter, as tools/e2e.sh does, and the report names it as
// skipped. A spec that finds its need missing anyway calls Skip(), which
// tools/e2e.sh counts as a failure: nobody asked for that skip.
//
// The workloads are the examples of docs/examples, with the images
// ghcr.io/fastjobset/jobset-agent:v<api/version/VERSION> and
// ghcr.io/fastjobset/e2e-worker:dev; each test namespace
// gets the agent's RBAC from agent/rbac.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/fastjobset/jobset/api/scheme"
	"github.com/fastjobset/jobset/images/manifest"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/runfiles"
)

var (
	k8sClient client.Client
	clientset *kubernetes.Clientset
	agentRBAC string
)

func TestEndToEnd(t *testing.T) {
	// Opt-in: a KUBECONFIG alone may point at a cluster that is not meant
	// for tests.
	if os.Getenv("INSTALL_YAML") == "" {
		t.Skip("INSTALL_YAML is not set: the end-to-end suite runs through tools/e2e.sh (or set KUBECONFIG and INSTALL_YAML)")
	}
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(3 * time.Minute)
	// A spec's context has no deadline: without this, an Eventually given
	// that context and no timeout of its own would wait for ever.
	EnforceDefaultTimeoutsWhenUsingContexts()
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	suiteConfig, reporterConfig := GinkgoConfiguration()
	// Under Bazel, the JSON report goes with the test's outputs
	// (bazel-testlogs/.../test.outputs), where tools/e2e.sh reads what
	// passed, failed and was left out; --ginkgo.json-report still wins.
	if dir := os.Getenv("TEST_UNDECLARED_OUTPUTS_DIR"); dir != "" && reporterConfig.JSONReport == "" {
		reporterConfig.JSONReport = filepath.Join(dir, jsonReportName)
	}
	RunSpecs(t, "JobSet in-place restarts on a real kubelet", suiteConfig, reporterConfig)
}

// jsonReportName is the JSON report's file name under Bazel, which
// tools/e2e.sh reads.
const jsonReportName = "ginkgo-report.json"

var _ = BeforeSuite(func(ctx context.Context) {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter)))
	kubeconfig := os.Getenv("KUBECONFIG")
	Expect(kubeconfig).NotTo(BeEmpty(), "KUBECONFIG is not set: run tools/e2e.sh, which brings up the local cluster, or point it at a cluster")
	install := runfiles.Path(os.Getenv("INSTALL_YAML"))
	root, err := framework.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	agentRBAC = filepath.Join(root, "agent", "rbac", "agent-rbac.yaml")

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	cfg.QPS, cfg.Burst = 50, 100
	s, err := scheme.New()
	Expect(err).NotTo(HaveOccurred())
	k8sClient, err = client.New(cfg, client.Options{Scheme: s})
	Expect(err).NotTo(HaveOccurred())
	clientset, err = kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())

	By("deploying " + install)
	Expect(manifest.Apply(ctx, k8sClient, install, "")).To(Succeed())
	waitForInstall(ctx)
}, NodeTimeout(10*time.Minute))

// waitForInstall returns once install.yaml's controller and webhook serve:
// both Deployments available, the controller's lease held by one of its
// Pods that runs now (not by a Pod of an installation since removed, whose
// lease has yet to expire), and the webhook admitting a JobSet. The specs
// that remove the installation wait for it again after reinstalling.
func waitForInstall(ctx context.Context) {
	GinkgoHelper()
	for _, name := range []string{"jobset-controller", "jobset-webhook"} {
		Eventually(func(g Gomega) {
			var d appsv1.Deployment
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "jobset-system", Name: name}, &d)).To(Succeed())
			g.Expect(d.Status.AvailableReplicas).To(BeNumerically(">=", 1), fmt.Sprintf("%s not available", name))
		}).Should(Succeed())
	}
	By("waiting until a running controller Pod leads")
	Eventually(func(g Gomega) {
		var lease coordinationv1.Lease
		g.Expect(k8sClient.Get(ctx, leaderLease, &lease)).To(Succeed())
		holder := podOfLeader(ptr.Deref(lease.Spec.HolderIdentity, ""))
		var pods corev1.PodList
		g.Expect(k8sClient.List(ctx, &pods, client.InNamespace("jobset-system"), client.MatchingLabels{"app.kubernetes.io/name": "jobset-controller"})).To(Succeed())
		var running []string
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
				running = append(running, p.Name)
			}
		}
		g.Expect(running).To(ContainElement(holder), "the lease is held by %q, which is no running controller Pod", holder)
	}).Should(Succeed())
	By("waiting until the webhook admits JobSets")
	Eventually(func() error { return dryRunJobSet(ctx) }).Should(Succeed())
}

// Every spec starts on an installation that serves. A spec that rolled,
// scaled or reinstalled the components, or took the control plane down,
// waits for them itself when it passes; after one that failed first (the
// node lifecycle controller may have marked every Pod not ready, the
// webhook's too, until the kubelets report again), the next spec waits
// here, and fails here if they never serve again, saying what is wrong
// with them, rather than on an admission error of its own.
var _ = BeforeEach(func(ctx context.Context) {
	Eventually(func() error { return dryRunJobSet(ctx) }).WithTimeout(5*time.Minute).
		Should(Succeed(), func() string { return "the webhook does not admit JobSets; " + installationState(ctx) })
})

// A failed spec records the state of the components as it found them
// (before its cleanup): the first failure of a run that failed many times
// says whether a spec broke them for the others.
var _ = AfterEach(func(ctx context.Context) {
	if CurrentSpecReport().Failed() {
		AddReportEntry("installation", ReportEntryVisibilityFailureOrVerbose, installationState(ctx))
	}
})

// installationState is the components' state on one line: each
// Deployment's replicas, each of their Pods' phase, node, readiness,
// restarts and last termination, and the nodes under pressure.
func installationState(ctx context.Context) string {
	var parts []string
	var deployments appsv1.DeploymentList
	if err := k8sClient.List(ctx, &deployments, client.InNamespace("jobset-system")); err != nil {
		return "listing Deployments: " + err.Error()
	}
	for _, d := range deployments.Items {
		parts = append(parts, fmt.Sprintf("deployment %s: %d wanted, %d updated, %d available",
			d.Name, ptr.Deref(d.Spec.Replicas, 1), d.Status.UpdatedReplicas, d.Status.AvailableReplicas))
	}
	var pods corev1.PodList
	if err := k8sClient.List(ctx, &pods, client.InNamespace("jobset-system")); err != nil {
		return strings.Join(append(parts, "listing Pods: "+err.Error()), "; ")
	}
	for _, p := range pods.Items {
		state := fmt.Sprintf("pod %s on %q: %s %s", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Reason)
		if p.DeletionTimestamp != nil {
			state += " deleting"
		}
		for _, cs := range p.Status.ContainerStatuses {
			state += fmt.Sprintf(", %s ready=%t restarts=%d", cs.Name, cs.Ready, cs.RestartCount)
			if w := cs.State.Waiting; w != nil {
				state += " waiting " + w.Reason
			}
			if t := cs.LastTerminationState.Terminated; t != nil {
				state += fmt.Sprintf(" last ended %s (%d) at %s", t.Reason, t.ExitCode, t.FinishedAt.Format(time.TimeOnly))
			}
		}
		parts = append(parts, state)
	}
	var nodes corev1.NodeList
	if err := k8sClient.List(ctx, &nodes); err != nil {
		return strings.Join(append(parts, "listing Nodes: "+err.Error()), "; ")
	}
	for _, n := range nodes.Items {
		for _, c := range n.Status.Conditions {
			if (c.Type == corev1.NodeReady) != (c.Status == corev1.ConditionTrue) {
				parts = append(parts, fmt.Sprintf("node %s: %s=%s %s", n.Name, c.Type, c.Status, c.Reason))
			}
		}
	}
	return strings.Join(parts, "; ")
}

// dryRunJobSet asks for the admission of an InPlaceRestart JobSet, storing
// nothing: it succeeds once the webhook serves.
func dryRunJobSet(ctx context.Context) error {
	return k8sClient.Create(ctx, example("default", "story1-inplace.yaml"), client.DryRunAll)
}
