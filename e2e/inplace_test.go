package e2e

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/kubeapply"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// podState is what an in-place restart must keep (the UID) and move on
// (restart counts).
type podState struct {
	uid      types.UID
	restarts map[string]int32
}

var _ = Describe("In-place group restart", func() {
	var ns string
	BeforeEach(func(ctx context.Context) {
		var err error
		ns, err = framework.CreateNamespace(ctx, k8sClient, "e2e")
		Expect(err).NotTo(HaveOccurred())
		Expect(kubeapply.Apply(ctx, k8sClient, agentRBAC, ns)).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			Expect(k8sClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		})
	})

	It("restarts every Pod in place when one worker fails (seed story 1)", func(ctx context.Context) {
		js := example(ns, "story1-inplace.yaml")
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		before := waitForSyncedWorkers(ctx, js, 4)
		epoch := syncedEpoch(ctx, js)

		By("one worker exits with code 1")
		victim := anyPod(before)
		exitWorker(ctx, ns, victim, 1)

		By("the group restarts in place and re-syncs at the next epoch")
		Eventually(func() int32 { return syncedEpoch(ctx, js) }).Should(Equal(epoch + 1))
		after := waitForSyncedWorkers(ctx, js, 4)
		for name, b := range before {
			a, ok := after[name]
			Expect(ok).To(BeTrue(), "Pod %s was replaced", name)
			Expect(a.uid).To(Equal(b.uid), "Pod %s was recreated", name)
			for c, n := range b.restarts {
				Expect(a.restarts[c]).To(Equal(n+1), "Pod %s container %s restarted %d times, want %d", name, c, a.restarts[c], n+1)
			}
			Expect(strings.Count(workerStarts(ctx, ns, name), "\n")).To(Equal(2),
				"Pod %s: the emptyDir keeps the first start's record", name)
		}
	})
})

// example returns the JobSet of docs/examples/<file>, in namespace ns.
func example(ns, file string) *jobset.JobSet {
	root, err := framework.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	objs, err := kubeapply.Read(filepath.Join(root, "docs", "examples", file))
	Expect(err).NotTo(HaveOccurred())
	Expect(objs).To(HaveLen(1), "%s holds one JobSet", file)
	js := &jobset.JobSet{}
	Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, js)).To(Succeed())
	js.Namespace = ns
	return js
}

// waitForSyncedWorkers waits until want Pods of js run with every container
// started and the barrier lifted, and returns their state by name.
func waitForSyncedWorkers(ctx context.Context, js *jobset.JobSet, want int) map[string]podState {
	var states map[string]podState
	Eventually(func(g Gomega) {
		var pods corev1.PodList
		g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(js.Namespace),
			client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
		states = map[string]podState{}
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
				continue
			}
			s := podState{uid: p.UID, restarts: map[string]int32{}}
			for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
				g.Expect(cs.State.Running).NotTo(BeNil(), "%s/%s not running", p.Name, cs.Name)
				g.Expect(ptr.Deref(cs.Started, false)).To(BeTrue(), "%s/%s not started (barrier)", p.Name, cs.Name)
				s.restarts[cs.Name] = cs.RestartCount
			}
			states[p.Name] = s
		}
		g.Expect(states).To(HaveLen(want))
	}).Should(Succeed())
	return states
}

func syncedEpoch(ctx context.Context, js *jobset.JobSet) int32 {
	var got jobset.JobSet
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), &got)).To(Succeed())
	return ptr.Deref(got.Status.SyncedEpoch, 0)
}

func anyPod(states map[string]podState) string {
	for name := range states {
		return name
	}
	Fail("no Pods")
	return ""
}

// exitWorker makes the worker of Pod name exit with code, through the API
// server's Pod proxy.
func exitWorker(ctx context.Context, ns, name string, code int) {
	_, err := clientset.CoreV1().Pods(ns).ProxyGet("http", name, "8081", "/exit",
		map[string]string{"code": strconv.Itoa(code)}).DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred())
}

// workerStarts returns the worker's start log, kept on its emptyDir.
func workerStarts(ctx context.Context, ns, name string) string {
	var out []byte
	Eventually(func() error {
		var err error
		out, err = clientset.CoreV1().Pods(ns).ProxyGet("http", name, "8081", "/starts", nil).DoRaw(ctx)
		return err
	}).Should(Succeed())
	return string(out)
}
