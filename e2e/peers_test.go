package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fastjobset/jobset/tools/testing/peers"
	"github.com/fastjobset/jobset/tools/testing/runfiles"
)

// Peers of ours (tools/testing/peers): Kueue and Kubeflow Trainer, real
// clients of our JobSets, and community JobSet, which replaces ours and is
// replaced by it. tools/e2e.sh builds those a run asks for and lists their
// builds in JOBSET_PEERS; a spec whose peer is not listed skips.

// peerCluster is the suite's cluster as package peers takes it.
func peerCluster() peers.Cluster {
	return peers.Cluster{Client: k8sClient, Clientset: clientset, Out: GinkgoWriter}
}

// loadPeer returns p's manifests from its build, or skips the spec when
// the run did not build p.
func loadPeer(p *peers.Peer) *peers.Manifests {
	dir, err := peers.Find(p)
	Expect(err).NotTo(HaveOccurred())
	if dir == "" {
		Skip(fmt.Sprintf("%s is not built: tools/e2e.sh builds it and lists it in %s for the runs that ask for it (see there)", p.Name, peers.Env))
	}
	m, err := peers.Load(p, dir)
	Expect(err).NotTo(HaveOccurred())
	return m
}

// installPeer installs p for the spec, skipping it unless the run built
// p, and removes p after the spec (after a failed install too, so that no
// webhook of p is left in the way of the next spec), once no object of the
// drained kinds is left: the spec's namespace and cluster-scoped objects
// are deleted first (cleanups run last registered first), and p's manager
// must release the finalizers it put on them.
func installPeer(ctx context.Context, p *peers.Peer, drained ...schema.GroupVersionKind) {
	m := loadPeer(p)
	DeferCleanup(func(ctx context.Context) {
		for _, gvk := range drained {
			By(fmt.Sprintf("waiting until %s has released every %s of the spec", p.Name, gvk.Kind))
			Eventually(func(g Gomega) {
				list := &unstructured.UnstructuredList{}
				list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
				err := k8sClient.List(ctx, list)
				if meta.IsNoMatchError(err) {
					return // the install failed before p's kinds were served
				}
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(list.Items).To(BeEmpty(), "%s left", gvk.Kind)
			}).Should(Succeed())
		}
		timedPeer(p.Name, "uninstall", func() { Expect(m.Uninstall(ctx, peerCluster())).To(Succeed()) })
	}, NodeTimeout(10*time.Minute))
	timedPeer(p.Name, "install", func() { Expect(m.Install(ctx, peerCluster())).To(Succeed()) })
}

// configurePeer adds the top-level fields of config to the running p's
// Configuration and restarts its manager.
func configurePeer(ctx context.Context, p *peers.Peer, config string) {
	timedPeer(p.Name, "configure", func() { Expect(p.Configure(ctx, peerCluster(), []byte(config))).To(Succeed()) })
}

// timedPeer runs step and reports how long it took, as name=step name_s=S.
func timedPeer(name, step string, f func()) {
	start := time.Now()
	f()
	AddReportEntry(name, fmt.Sprintf("%s=%s %s_s=%.1f", name, step, name, time.Since(start).Seconds()))
}

// ourJobSet is ours as the suite deployed it (INSTALL_YAML), with the
// feature gates on as well, for the switches between ours and community
// JobSet.
func ourJobSet(gates ...string) *peers.Manifests {
	// As the suite finds it: under Bazel, relative to the runfiles.
	install, err := filepath.Abs(runfiles.Path(os.Getenv("INSTALL_YAML")))
	Expect(err).NotTo(HaveOccurred())
	m, err := peers.LoadFile(peers.OurJobSet.WithFeatureGates(gates...), install)
	Expect(err).NotTo(HaveOccurred())
	return m
}
