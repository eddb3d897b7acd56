package integration

import (
	"maps"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/jobsetcontroller"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// Two named in-place groups, "trunk" and "head", one replicatedJob each:
// the test plays their agents as the in-place scenarios do.
var _ = Describe("Scoped in-place groups", func() {
	twoGroups := func(maxRestarts int32) *jobset.JobSet {
		return wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).MaxRestarts(maxRestarts).
			ReplicatedJob(wrappers.MakeReplicatedJob("trunk").Pods(2).InPlaceReady().InPlaceGroup("trunk").Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("head").Pods(2).InPlaceReady().InPlaceGroup("head").Obj()).Obj()
	}
	// startPods creates the Pods of the replicatedJob's only Job, as the
	// Job controller would, each with its agent at the given epoch.
	startPods := func(js *jobset.JobSet, rj string, epochs ...string) []*corev1.Pod {
		job := &batchv1.Job{}
		jobName := jobsetcontroller.JobName(js.Name, rj, 0)
		Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: jobName}, job) }).Should(Succeed())
		pods := make([]*corev1.Pod, len(epochs))
		for i, epoch := range epochs {
			pods[i] = &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					GenerateName: jobName + "-",
					Namespace:    ns,
					Labels:       maps.Clone(job.Spec.Template.Labels),
					Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: strconv.Itoa(i),
						jobset.EpochKey: epoch},
				},
				Spec: *job.Spec.Template.Spec.DeepCopy(),
			}
			pods[i].Spec.NodeName = "node-a" // scheduled
			pods[i].Labels[batchv1.JobNameLabel] = jobName
			Expect(k8sClient.Create(ctx, pods[i])).To(Succeed())
		}
		return pods
	}
	agentJoins := func(pod *corev1.Pod, epoch string) {
		patch := client.MergeFrom(pod.DeepCopy())
		pod.Annotations[jobset.EpochKey] = epoch
		Expect(k8sClient.Patch(ctx, pod, patch)).To(Succeed())
	}
	// groupEpochs reads each group's [synced, deprecated], and the
	// default group's under "".
	groupEpochs := func(js *jobset.JobSet) map[string][]int32 {
		got := fetch(ctx, js)
		out := map[string][]int32{"": {ptr.Deref(got.Status.SyncedEpoch, 0), ptr.Deref(got.Status.DeprecatedEpoch, 0)}}
		for _, g := range got.Status.InPlaceGroups {
			out[g.Name] = []int32{ptr.Deref(g.SyncedEpoch, 0), ptr.Deref(g.DeprecatedEpoch, 0)}
		}
		return out
	}
	groupRestarts := func(js *jobset.JobSet) map[string]int32 {
		out := map[string]int32{}
		for _, g := range fetch(ctx, js).Status.InPlaceGroups {
			out[g.Name] = g.InPlaceRestarts
		}
		return out
	}

	It("labels each group's Jobs and Pods with its name and tells their agents", func() {
		js := create(twoGroups(3))
		for _, rj := range []string{"trunk", "head"} {
			job := &batchv1.Job{}
			Eventually(func() error {
				return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: jobsetcontroller.JobName(js.Name, rj, 0)}, job)
			}).Should(Succeed())
			Expect(job.Labels).To(HaveKeyWithValue(jobset.InPlaceGroupKey, rj))
			Expect(job.Spec.Template.Labels).To(HaveKeyWithValue(jobset.InPlaceGroupKey, rj))
			agent := job.Spec.Template.Spec.InitContainers[sidecar.Index(job.Spec.Template.Spec)]
			Expect(agent.Env).To(ContainElement(corev1.EnvVar{Name: agentspec.EnvInPlaceGroup, Value: rj}))
		}
	})

	It("restarts in place only the group whose member failed; the budget is the JobSet's", func() {
		js := create(twoGroups(1))
		trunk := startPods(js, "trunk", "1", "1")
		head := startPods(js, "head", "1", "1")
		Eventually(func() map[string][]int32 { return groupEpochs(js) }).Should(Equal(map[string][]int32{"": {0, 0}, "trunk": {1, 0}, "head": {1, 0}}))

		By("a trunk worker restarting in place: the trunk group restarts, the head group runs on")
		agentJoins(trunk[1], "2")
		Eventually(func() map[string][]int32 { return groupEpochs(js) }).Should(Equal(map[string][]int32{"": {0, 0}, "trunk": {1, 1}, "head": {1, 0}}))
		got := fetch(ctx, js)
		Expect(got.Status.InPlaceRestarts).To(BeEquivalentTo(1))
		Expect(groupRestarts(js)).To(Equal(map[string]int32{"trunk": 1, "head": 0}))
		Expect(got.Status.Conditions).NotTo(ContainElement(HaveField("Type", string(jobset.JobSetInPlaceRestarting))),
			"the JobSet's own InPlaceRestarting condition is the default group's, which has no member")
		Eventually(func() []string { return eventNotes(ctx, js) }).Should(ContainElement(ContainSubstring(`in-place group "trunk": in-place group restart 1 started`)))
		agentJoins(trunk[0], "2")
		Eventually(func() map[string][]int32 { return groupEpochs(js) }).Should(Equal(map[string][]int32{"": {0, 0}, "trunk": {2, 1}, "head": {1, 0}}))

		By("a head worker restarting in place with the budget spent: the JobSet fails, naming the group")
		agentJoins(head[0], "2")
		c := eventuallyCondition(ctx, js, jobset.JobSetFailed, metav1.ConditionTrue)
		Expect(c.Reason).To(Equal(jobset.ReasonReachedMaxRestarts))
		Eventually(func() []string { return eventNotes(ctx, js) }).Should(ContainElement(And(
			ContainSubstring(`in-place group "head": Pod `+head[0].Name+" joined epoch 2"), ContainSubstring("would exceed failurePolicy.maxRestarts (1)"))))
		Expect(groupEpochs(js)).To(HaveKeyWithValue("head", []int32{1, 0}))
	})
})
