package e2e

import (
	"context"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

var _ = Describe("Scoped in-place groups", func() {
	It("restarts in place only the group whose worker failed; the other group's Pods, containers, workers and epochs stay", func(ctx context.Context) {
		ns := agentNamespace(ctx)
		// The Pod tier: a group restart moves every container's restart
		// count, so that a Pod left alone shows it.
		js := podTier(example(ns, "scoped-groups.yaml"))
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		before := waitForSyncedWorkers(ctx, js, 4)
		Eventually(func() map[string][]int32 { return groupEpochs(ctx, js) }).Should(Equal(map[string][]int32{"trunk": {1, 0}, "head": {1, 0}}))
		trunk, head := podsOfGroup(ctx, js, "trunk"), podsOfGroup(ctx, js, "head")
		Expect(trunk).To(HaveLen(2))
		Expect(head).To(HaveLen(2))

		By("a trunk worker exits with code 1")
		exitWorker(ctx, ns, trunk[0], 1)

		By("the trunk group restarts in place and re-syncs at epoch 2; the head group stays at epoch 1")
		Eventually(func() map[string][]int32 { return groupEpochs(ctx, js) }).Should(Equal(map[string][]int32{"trunk": {2, 1}, "head": {1, 0}}))
		Eventually(func(g Gomega) {
			after := runningWorkers(g, ctx, js)
			g.Expect(after).To(HaveLen(4))
			for name, b := range before {
				a := after[name]
				g.Expect(a.uid).To(Equal(b.uid), "Pod %s was recreated", name)
				restarts := int32(0)
				if slices.Contains(trunk, name) {
					restarts = 1
				}
				for c, n := range b.restarts {
					g.Expect(a.restarts[c]).To(Equal(n+restarts), "Pod %s container %s restarted %d times, want %d", name, c, a.restarts[c], n+restarts)
				}
			}
		}).Should(Succeed())
		for _, name := range trunk {
			Expect(strings.Count(workerStarts(ctx, ns, name), "\n")).To(Equal(2), "Pod %s: its worker started again", name)
		}
		for _, name := range head {
			Expect(strings.Count(workerStarts(ctx, ns, name), "\n")).To(Equal(1), "Pod %s: its worker was never restarted", name)
			pod := &corev1.Pod{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod)).To(Succeed())
			Expect(pod.Annotations).To(HaveKeyWithValue(jobset.EpochKey, "1"), "Pod %s left its group's epoch", name)
		}
		got := getJobSet(ctx, js)
		Expect(got.Status.InPlaceRestarts).To(Equal(int32(1)))
		for _, g := range got.Status.InPlaceGroups {
			want := int32(0)
			if g.Name == "trunk" {
				want = 1
			}
			Expect(g.InPlaceRestarts).To(Equal(want), "group %s", g.Name)
		}
	})
})

// groupEpochs is each named in-place group's [synced, deprecated].
func groupEpochs(ctx context.Context, js *jobset.JobSet) map[string][]int32 {
	out := map[string][]int32{}
	for _, g := range getJobSet(ctx, js).Status.InPlaceGroups {
		out[g.Name] = []int32{ptr.Deref(g.SyncedEpoch, 0), ptr.Deref(g.DeprecatedEpoch, 0)}
	}
	return out
}

// podsOfGroup names the live Pods the controller labelled as the group's.
func podsOfGroup(ctx context.Context, js *jobset.JobSet, group string) []string {
	var pods corev1.PodList
	Expect(k8sClient.List(ctx, &pods, client.InNamespace(js.Namespace),
		client.MatchingLabels{jobset.JobSetNameKey: js.Name, jobset.InPlaceGroupKey: group})).To(Succeed())
	var names []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			names = append(names, p.Name)
		}
	}
	return names
}
