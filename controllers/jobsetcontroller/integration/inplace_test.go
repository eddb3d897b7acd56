package integration

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	"github.com/fastjobset/jobset/api/jobset/keepoff"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/internal/metrics"
	"github.com/fastjobset/jobset/controllers/jobsetcontroller"
	"github.com/fastjobset/jobset/controllers/nodeloss"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// These scenarios play the agents and the kubelet: the test creates the
// worker Pods (no Job controller runs), writes their epoch annotations as
// agents do, and sets their status as the kubelet would.
var _ = Describe("In-place restart", func() {

	// workers: one replicatedJob of `jobs` Jobs x `perJob` Pods, InPlaceRestart.
	workers := func(jobs, perJob, maxRestarts int32) *wrappers.JobSetWrapper {
		return wrappers.MakeJobSet("trainer", ns).
			RestartStrategy(jobset.InPlaceRestart).
			MaxRestarts(maxRestarts).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(jobs).Pods(perJob).InPlaceReady().Obj())
	}

	// agentEnv is the agent's environment as the controller reads it: a
	// fence of 1 s, and what the JobSet's template sets besides.
	agentEnv := func(js *jobset.JobSet) []corev1.EnvVar {
		env := []corev1.EnvVar{{Name: agentspec.EnvFenceAfterSeconds, Value: "1"}}
		template := js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
		if i := sidecar.Index(template); i >= 0 {
			for _, e := range template.InitContainers[i].Env {
				if e.ValueFrom == nil && e.Name != agentspec.EnvFenceAfterSeconds {
					env = append(env, e)
				}
			}
		}
		return env
	}
	// startPods creates n worker Pods of the JobSet's current attempt, as
	// the Job controller would (with its Pod template's finalizers), bound
	// to a node, each with its agent at the given epoch ("": the agent has
	// not written one yet).
	// startPodsFrom starts them at completion indexes first, first+1, ...
	// startPodsOn starts them on the node.
	var startPodsOn func(js *jobset.JobSet, node string, first int, epochs ...string) []*corev1.Pod
	startPodsFrom := func(js *jobset.JobSet, first int, epochs ...string) []*corev1.Pod {
		return startPodsOn(js, "node-a", first, epochs...)
	}
	// startPodsWith starts them on the node, each changed by mutate before
	// it is created (as a webhook changes it).
	var startPodsWith func(js *jobset.JobSet, node string, first int, mutate func(*corev1.Pod), epochs ...string) []*corev1.Pod
	startPodsOn = func(js *jobset.JobSet, node string, first int, epochs ...string) []*corev1.Pod {
		return startPodsWith(js, node, first, nil, epochs...)
	}
	startPodsWith = func(js *jobset.JobSet, node string, first int, mutate func(*corev1.Pod), epochs ...string) []*corev1.Pod {
		attempt := strconv.Itoa(int(fetch(ctx, js).Status.Restarts))
		job := &batchv1.Job{}
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: jobsetcontroller.JobName(js.Name, "workers", 0)}, job)
		}).Should(Succeed())
		pods := make([]*corev1.Pod, len(epochs))
		for i, epoch := range epochs {
			pods[i] = &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					GenerateName: "trainer-workers-",
					Namespace:    ns,
					Labels: map[string]string{
						jobset.JobSetNameKey:        js.Name,
						jobset.JobSetUIDKey:         string(js.UID),
						jobset.RestartsKey:          attempt,
						jobset.ReplicatedJobNameKey: "workers",
						batchv1.JobNameLabel:        jobsetcontroller.JobName(js.Name, "workers", 0),
					},
					Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: strconv.Itoa(first + i)},
					Finalizers:  job.Spec.Template.Finalizers,
				},
				Spec: corev1.PodSpec{
					NodeName:      node, // scheduled
					RestartPolicy: corev1.RestartPolicyNever,
					// The agent sidecar, as far as the controller reads it.
					InitContainers: []corev1.Container{{
						Name: agentspec.ContainerName, Image: "registry.k8s.io/pause:3.10",
						RestartPolicy:      ptr.To(corev1.ContainerRestartPolicyAlways),
						RestartPolicyRules: sidecar.AgentRestartRules(),
						Env:                agentEnv(js),
					}},
					Containers: []corev1.Container{{Name: "worker", Image: "registry.k8s.io/pause:3.10"}},
				},
			}
			if epoch != "" {
				pods[i].Annotations[jobset.EpochKey] = epoch
			}
			if mutate != nil {
				mutate(pods[i])
			}
			Expect(k8sClient.Create(ctx, pods[i])).To(Succeed())
		}
		return pods
	}
	startPods := func(js *jobset.JobSet, epochs ...string) []*corev1.Pod {
		return startPodsFrom(js, 0, epochs...)
	}
	// agentJoins writes the epoch annotation, as an agent does.
	agentJoins := func(pod *corev1.Pod, epoch string) {
		patch := client.MergeFrom(pod.DeepCopy())
		pod.Annotations[jobset.EpochKey] = epoch
		Expect(k8sClient.Patch(ctx, pod, patch)).To(Succeed())
	}
	// kubeletReports sets the Pod's status, as the kubelet does.
	kubeletReports := func(pod *corev1.Pod, mutate func(*corev1.PodStatus)) {
		Eventually(func(g Gomega) {
			fresh := &corev1.Pod{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), fresh)).To(Succeed())
			mutate(&fresh.Status)
			g.Expect(k8sClient.Status().Update(ctx, fresh)).To(Succeed())
		}).Should(Succeed())
	}
	// containersIn shows the Pod's agent and worker in state, as its
	// kubelet reports them; running and stopped are the states it reports.
	containersIn := func(s *corev1.PodStatus, state corev1.ContainerState) {
		s.InitContainerStatuses = []corev1.ContainerStatus{{Name: agentspec.ContainerName, State: state}}
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", State: state}}
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	stopped := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137}}
	epochs := func(js *jobset.JobSet) (synced, deprecated int32) {
		got := fetch(ctx, js)
		return ptr.Deref(got.Status.SyncedEpoch, 0), ptr.Deref(got.Status.DeprecatedEpoch, 0)
	}
	eventuallyEpochs := func(js *jobset.JobSet, synced, deprecated int32) {
		Eventually(func(g Gomega) {
			s, d := epochs(js)
			g.Expect([]int32{s, d}).To(Equal([]int32{synced, deprecated}), "[syncedEpoch, deprecatedEpoch]")
		}).Should(Succeed())
	}
	// restartsInPlaceOnce: the first Pod's agent joins epoch 2 (a group
	// restart from epoch 1), then the second's, and the group syncs.
	restartsInPlaceOnce := func(js *jobset.JobSet, first, second *corev1.Pod) {
		GinkgoHelper()
		agentJoins(first, "2")
		eventuallyEpochs(js, 1, 1)
		agentJoins(second, "2")
		eventuallyEpochs(js, 2, 1)
	}
	// jobControllerCompletes records completed indexes in the status of the
	// JobSet's only Job, as the Job controller does.
	jobControllerCompletes := func(js *jobset.JobSet, indexes string) {
		Eventually(func(g Gomega) {
			job := &batchv1.Job{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: jobsetcontroller.JobName(js.Name, "workers", 0)}, job)).To(Succeed())
			job.Status.CompletedIndexes = indexes
			job.Status.Succeeded = int32(len(strings.Split(indexes, ",")))
			if job.Status.StartTime == nil {
				job.Status.StartTime = ptr.To(metav1.Now())
			}
			g.Expect(k8sClient.Status().Update(ctx, job)).To(Succeed())
		}).Should(Succeed())
	}
	// noStatusWrite pokes the Pods (the JobSet itself when given none) so
	// that the controller reconciles, waits until a reconcile of the JobSet
	// has run to its end, and checks that the JobSet is not written. Without
	// the wait, Consistently would also pass on a controller that never
	// looked. The proof is the JobSet's epoch gauges: every reconcile of an
	// InPlaceRestart JobSet publishes them after its status write, so the
	// series forgotten here come back only from a reconcile that started
	// after this point.
	noStatusWrite := func(js *jobset.JobSet, pods ...*corev1.Pod) {
		GinkgoHelper()
		before := fetch(ctx, js)
		metrics.ForgetJobSet(js.Namespace, js.Name)
		for i, pod := range pods {
			patch := client.MergeFrom(pod.DeepCopy())
			pod.Labels["poke"] = strconv.Itoa(i)
			Expect(k8sClient.Patch(ctx, pod, patch)).To(Succeed())
		}
		if len(pods) == 0 {
			// Optimistic: a status write since the read above fails the
			// patch instead of hiding in the resourceVersion it returns.
			patch := client.MergeFromWithOptions(before.DeepCopy(), client.MergeFromWithOptimisticLock{})
			if before.Labels == nil {
				before.Labels = map[string]string{}
			}
			before.Labels["poke"] = "1"
			Expect(k8sClient.Patch(ctx, before, patch)).To(Succeed())
		}
		Eventually(func() []string { return epochSeries(js.Namespace, js.Name) }).ShouldNot(BeEmpty(),
			"a reconcile of JobSet %s runs to its end", js.Name)
		Consistently(func() string { return fetch(ctx, js).ResourceVersion }).Should(Equal(before.ResourceVersion))
	}
	// eventuallyReleased waits until the controller released the Pod's
	// group-member finalizer.
	eventuallyReleased := func(pod *corev1.Pod) {
		Eventually(func(g Gomega) {
			fresh := &corev1.Pod{}
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), fresh)
			if apierrors.IsNotFound(err) {
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(fresh.Finalizers).NotTo(ContainElement(jobset.GroupMemberFinalizer))
		}).Should(Succeed())
	}
	// syncedAtOne: a JobSet whose Pods all joined epoch 1.
	// afterTheJoin waits until the clock has reached d past the second in
	// which the Pod's agent joined. The API server dates writes to the
	// second, and a kubelet status of the join's second counts as older
	// than the join (inplace.FailureSignal); a real kubelet reports a
	// worker's failure later, since the worker starts only once the group
	// synced.
	afterTheJoin := func(pod *corev1.Pod, d time.Duration) {
		GinkgoHelper()
		fresh := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), fresh)).To(Succeed())
		var joined time.Time
		for _, f := range fresh.ManagedFields {
			if f.Subresource == "" && f.Time != nil && strings.Contains(f.FieldsV1.GetRawString(), jobset.EpochKey) && f.Time.After(joined) {
				joined = f.Time.Time
			}
		}
		Expect(joined.IsZero()).To(BeFalse(), "Pod %s has joined", pod.Name)
		Eventually(func() bool { return !time.Now().Truncate(time.Second).Before(joined.Add(d)) }).Should(BeTrue())
	}
	setSuspend := func(js *jobset.JobSet, suspend bool) {
		Eventually(func() error {
			fresh := fetch(ctx, js)
			fresh.Spec.Suspend = ptr.To(suspend)
			return k8sClient.Update(ctx, fresh)
		}).Should(Succeed())
	}
	// addFinalizer and removeFinalizer change one finalizer of the Pod, as
	// the Job controller does with its tracking finalizer.
	addFinalizer := func(pod *corev1.Pod, finalizer string) {
		patch := client.RawPatch(types.StrategicMergePatchType, []byte(fmt.Sprintf(`{"metadata":{"finalizers":[%q]}}`, finalizer)))
		Expect(k8sClient.Patch(ctx, pod.DeepCopy(), patch)).To(Succeed())
	}
	removeFinalizer := func(pod *corev1.Pod, finalizer string) {
		patch := client.RawPatch(types.StrategicMergePatchType, []byte(fmt.Sprintf(`{"metadata":{"$deleteFromPrimitiveList/finalizers":[%q]}}`, finalizer)))
		Expect(k8sClient.Patch(ctx, pod.DeepCopy(), patch)).To(Succeed())
	}
	nodeTaints := func(name string) []corev1.Taint {
		node := &corev1.Node{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, node)).To(Succeed())
		return node.Spec.Taints
	}
	podCondition := func(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == t {
				return &p.Status.Conditions[i]
			}
		}
		return nil
	}
	// createNode creates a Node object for the spec, whose taints the
	// controller writes.
	createNode := func(name string) {
		Expect(k8sClient.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
		DeferCleanup(func() { _ = k8sClient.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}) })
	}
	// kubelets plays the nodes' kubelets: each creates its node's Lease and
	// renews it every 300 ms until renewing(node, false), and again after
	// renewing(node, true); they stop with the spec.
	kubelets := func(nodes ...string) (renewing func(node string, on bool)) {
		var renews sync.Map
		running, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		for _, node := range nodes {
			lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: corev1.NamespaceNodeLease, Name: node},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node), LeaseDurationSeconds: ptr.To[int32](4)}}
			Expect(k8sClient.Create(ctx, lease)).To(Succeed())
			renews.Store(node, true)
			go func() {
				defer GinkgoRecover()
				ticker := time.NewTicker(300 * time.Millisecond)
				defer ticker.Stop()
				for {
					select {
					case <-running.Done():
						return
					case <-ticker.C:
					}
					if on, _ := renews.Load(node); on == false {
						continue
					}
					lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
					if err := k8sClient.Update(running, lease); err != nil {
						_ = k8sClient.Get(running, client.ObjectKeyFromObject(lease), lease)
					}
				}
			}()
		}
		return func(node string, on bool) { renews.Store(node, on) }
	}
	// kept holds the Pod with a finalizer of the test's once deleted, to be
	// read, until the spec ends.
	kept := func(pod *corev1.Pod) {
		const keep = "jobset.sigs.k8s.io/test-keep"
		addFinalizer(pod, keep)
		DeferCleanup(func() {
			p := &corev1.Pod{}
			if k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), p) == nil {
				p.Finalizers = slices.DeleteFunc(p.Finalizers, func(f string) bool { return f == keep })
				_ = k8sClient.Update(ctx, p)
			}
		})
	}
	syncedAtOne := func(js *jobset.JobSet, n int) []*corev1.Pod {
		pods := startPods(js, slices.Repeat([]string{"1"}, n)...)
		eventuallyEpochs(js, 1, 0)
		return pods
	}
	// resumedSyncsAtTwo resumes a suspended JobSet of two Pods synced at
	// epoch 1: the new Pods join epoch 2 and sync there, no group restart
	// counted.
	resumedSyncsAtTwo := func(js *jobset.JobSet) {
		setSuspend(js, false)
		eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionFalse)
		startPods(js, "2", "2")
		eventuallyEpochs(js, 2, 1) // epoch 1 deprecated uncounted, for any Pod that outlived the suspension
		got := fetch(ctx, js)
		Expect(got.Status.InPlaceRestarts).To(BeZero())
		Expect(got.Status.TerminalState).To(BeEmpty())
	}

	It("KEP case 1: all Pods in sync: no status write", func() {
		js := create(workers(1, 3, 3).Obj())
		pods := syncedAtOne(js, 3)
		noStatusWrite(js, pods...)
	})

	It("KEP case 2: all Pods just became in sync: syncedEpoch set", func() {
		js := create(workers(2, 2, 3).Obj())
		pods := startPods(js, "1", "1", "1", "")
		Consistently(func() *int32 { return fetch(ctx, js).Status.SyncedEpoch }).Should(BeNil())
		agentJoins(pods[3], "1")
		eventuallyEpochs(js, 1, 0)
		c := eventuallyCondition(ctx, js, jobset.JobSetInPlaceRestarting, metav1.ConditionFalse)
		Expect(c.Reason).To(Equal(jobset.ReasonEpochSynced))
		Expect(fetch(ctx, js).Status.InPlaceRestarts).To(BeZero())
	})

	It("KEP case 3: in sync, then one Pod restarted into a new epoch: deprecatedEpoch set", func() {
		js := create(workers(1, 3, 3).Obj())
		pods := syncedAtOne(js, 3)
		agentJoins(pods[1], "2")
		eventuallyEpochs(js, 1, 1)
		got := fetch(ctx, js)
		Expect(got.Status.InPlaceRestarts).To(BeEquivalentTo(1))
		c := eventuallyCondition(ctx, js, jobset.JobSetInPlaceRestarting, metav1.ConditionTrue)
		Expect(c.Message).To(ContainSubstring(pods[1].Name))
		Eventually(func() []string { return eventReasons(ctx, js) }).Should(ContainElement(jobset.ReasonInPlaceRestartStarted))
	})

	It("KEP case 4: lost sync, and a second Pod reached the new epoch but not all: no status write", func() {
		js := create(workers(1, 3, 3).Obj())
		pods := syncedAtOne(js, 3)
		agentJoins(pods[0], "2")
		eventuallyEpochs(js, 1, 1)
		agentJoins(pods[1], "2")
		noStatusWrite(js, pods...)

		By("the last Pod joining: the group restart completes")
		agentJoins(pods[2], "2")
		eventuallyEpochs(js, 2, 1)
		c := eventuallyCondition(ctx, js, jobset.JobSetInPlaceRestarting, metav1.ConditionFalse)
		Expect(c.Reason).To(Equal(jobset.ReasonInPlaceRestartCompleted))
		Expect(c.Message).To(MatchRegexp(`completed in \d+\.\ds`))
		Eventually(func() []string { return eventReasons(ctx, js) }).Should(ContainElement(jobset.ReasonInPlaceRestartCompleted))
	})

	// A restart of the worker's process moves no restartCount: the agents
	// report how each member came back, and the completion says it.
	It("says in the completed group restart how its members came back, by their agents' reports", func() {
		js := create(workers(1, 4, 4).Obj())
		pods := syncedAtOne(js, 4)
		joinsReporting := func(pod *corev1.Pod, epoch, restarts string) {
			patch := client.MergeFrom(pod.DeepCopy())
			pod.Annotations[jobset.EpochKey] = epoch
			pod.Annotations[agentspec.WorkerRestartsAnnotation] = restarts
			Expect(k8sClient.Patch(ctx, pod, patch)).To(Succeed())
		}
		joinsReporting(pods[0], "2", "process=0,pod=1,epoch=2,tier=pod")
		eventuallyEpochs(js, 1, 1)
		joinsReporting(pods[1], "2", "process=1,pod=0,epoch=2,tier=process")
		joinsReporting(pods[2], "2", "process=4,pod=1,epoch=2,tier=process")
		By("an agent that reported an earlier join only: its member's way back is unknown")
		joinsReporting(pods[3], "2", "process=0,pod=0,epoch=1,tier=new")
		eventuallyEpochs(js, 2, 1)
		c := eventuallyCondition(ctx, js, jobset.JobSetInPlaceRestarting, metav1.ConditionFalse)
		Expect(c.Reason).To(Equal(jobset.ReasonInPlaceRestartCompleted))
		Expect(c.Message).To(HaveSuffix("(2 by restarting the worker's process, 1 by restarting its containers, 0 replaced, 1 unreported)"))
		Eventually(func() []string { return eventNotes(ctx, js) }).Should(ContainElement(c.Message))
		counted := func(tier string) func() float64 {
			return func() float64 {
				return testutil.ToFloat64(metrics.InPlaceRestartPods.WithLabelValues(js.Namespace, tier))
			}
		}
		Eventually(counted(metrics.TierProcess)).Should(Equal(2.0))
		Expect(counted(metrics.TierPod)()).To(Equal(1.0))
		Expect(counted(metrics.TierReplaced)()).To(BeZero())
		Expect(counted(metrics.TierUnreported)()).To(Equal(1.0))
	})

	It("reports invalid epochs by Pod name, ignores them for sync, and does not spin", func() {
		js := create(workers(1, 3, 3).Obj())
		pods := startPods(js, "1", "banana", "-4")
		// The Pods appear one by one: wait until the condition names both.
		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(fetch(ctx, js).Status.Conditions, string(jobset.JobSetInvalidEpoch))
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Message).To(And(ContainSubstring(pods[1].Name), ContainSubstring(pods[2].Name), ContainSubstring(`"banana"`)))
		}).Should(Succeed())
		Expect(fetch(ctx, js).Status.SyncedEpoch).To(BeNil())
		Eventually(func() []string { return eventReasons(ctx, js) }).Should(ContainElement(jobset.ReasonInvalidEpoch))
		noStatusWrite(js)

		By("the agents writing valid epochs")
		agentJoins(pods[1], "1")
		agentJoins(pods[2], "1")
		eventuallyEpochs(js, 1, 0)
		eventuallyCondition(ctx, js, jobset.JobSetInvalidEpoch, metav1.ConditionFalse)
	})

	It("excludes a failed Pod at once (fast failure detection) and syncs with its replacement", func() {
		js := create(workers(1, 2, 3).Obj())
		pods := syncedAtOne(js, 2)
		kubeletReports(pods[0], func(s *corev1.PodStatus) { s.Phase = corev1.PodFailed })
		eventuallyEpochs(js, 1, 1)
		Expect(eventuallyCondition(ctx, js, jobset.JobSetInPlaceRestarting, metav1.ConditionTrue).Message).
			To(ContainSubstring(pods[0].Name + " failed"))

		replacement := startPods(js, "2")
		agentJoins(pods[1], "2")
		eventuallyEpochs(js, 2, 1)
		Expect(replacement).To(HaveLen(1))
	})

	It("deprecates at once when a container of a synced Pod terminated non-zero", func() {
		js := create(workers(1, 2, 3).Obj())
		pods := syncedAtOne(js, 2)
		afterTheJoin(pods[1], time.Second)
		// Dated by the node against its agent's start, never against the
		// controller's clock.
		agentStarted := metav1.NewTime(time.Now().Add(-time.Minute))
		kubeletReports(pods[1], func(s *corev1.PodStatus) {
			s.Phase = corev1.PodRunning
			s.InitContainerStatuses = []corev1.ContainerStatus{{
				Name: agentspec.ContainerName, Image: "registry.k8s.io/pause:3.10",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: agentStarted}},
			}}
			s.ContainerStatuses = []corev1.ContainerStatus{{
				Name: "worker", Image: "registry.k8s.io/pause:3.10",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error", FinishedAt: metav1.Now()}},
			}}
		})
		eventuallyEpochs(js, 1, 1)
		Expect(eventuallyCondition(ctx, js, jobset.JobSetInPlaceRestarting, metav1.ConditionTrue).Message).
			To(ContainSubstring("terminated with exit code 3"))
	})

	// The expected count came from Succeeded Pod objects,
	// so once the Pod GC removed one the group never synced again.
	It("lets a completed index leave the group, from its Job's status, even once its Pod is gone", func() {
		js := create(workers(1, 3, 3).Obj())
		pods := syncedAtOne(js, 3)
		kubeletReports(pods[2], func(s *corev1.PodStatus) { s.Phase = corev1.PodSucceeded })
		jobControllerCompletes(js, "2")
		eventuallyReleased(pods[2])                          // it finished before anyone deleted it
		Expect(k8sClient.Delete(ctx, pods[2])).To(Succeed()) // the Pod GC
		restartsInPlaceOnce(js, pods[0], pods[1])
	})

	// Kubectl delete (a drain, an eviction) of a running
	// worker that exits 0 on SIGTERM: its Job counts the index complete and
	// never replaces it. Before, the Pod went at once and the group synced
	// again a rank short; now the Pod is held until the controller answered
	// with a full restart, which the deletion's group restart already
	// counted.
	It("restarts fully, counted once, when a worker deleted while it ran exits 0 and its index counts complete", func() {
		js := create(workers(1, 3, 3).Obj())
		pods := syncedAtOne(js, 3)
		setFinalizers := func(pod *corev1.Pod, finalizers ...string) {
			patch := client.MergeFrom(pod.DeepCopy())
			pod.Finalizers = finalizers
			Expect(k8sClient.Patch(ctx, pod, patch)).To(Succeed())
		}
		// The Job controller's tracking finalizer, which it removes once it
		// counted the Pod.
		setFinalizers(pods[2], jobset.GroupMemberFinalizer, batchv1.JobTrackingFinalizer)
		Expect(k8sClient.Delete(ctx, pods[2])).To(Succeed()) // SIGTERM to the Pod's containers
		eventuallyEpochs(js, 1, 1)
		kubeletReports(pods[2], func(s *corev1.PodStatus) { s.Phase = corev1.PodSucceeded }) // the worker exits 0
		jobControllerCompletes(js, "2")
		setFinalizers(pods[2], jobset.GroupMemberFinalizer)
		Eventually(func(g Gomega) {
			got := fetch(ctx, js)
			g.Expect([]int32{got.Status.Restarts, got.Status.RestartsCountTowardsMax, got.Status.InPlaceRestarts}).
				To(Equal([]int32{1, 0, 1}), "[restarts, restartsCountTowardsMax, inPlaceRestarts]")
		}).Should(Succeed())
		Eventually(func() []string { return eventReasons(ctx, js) }).Should(ContainElement(jobsetcontroller.ReasonRestarting))
		eventuallyReleased(pods[2])
	})

	// An agent that cannot join kept the group waiting
	// with nothing to say so.
	It("names the Pods that have not joined, and why, once a gather stalls; says so once; clears it at the sync", func() {
		js := create(workers(1, 2, 3).Obj())
		pods := startPods(js, "1", "")
		kubeletReports(pods[1], func(s *corev1.PodStatus) {
			s.Phase = corev1.PodRunning
			s.InitContainerStatuses = []corev1.ContainerStatus{{
				Name: agentspec.ContainerName, Image: "registry.k8s.io/pause:3.10", RestartCount: 4,
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: agentspec.ExitConfigError}},
			}}
		})
		Consistently(func() *metav1.Condition {
			return meta.FindStatusCondition(fetch(ctx, js).Status.Conditions, string(jobset.JobSetGatherStalled))
		}).Should(BeNil(), "under the threshold, a gather is just a gather")

		c := eventuallyCondition(ctx, js, jobset.JobSetGatherStalled, metav1.ConditionTrue)
		Expect(c.Reason).To(Equal(jobset.ReasonPodsNotJoined))
		Expect(c.Message).To(And(ContainSubstring("1 of 2 have not joined"), ContainSubstring(pods[1].Name),
			ContainSubstring("exits with code 2, a configuration error")))
		Eventually(func() []string { return eventReasons(ctx, js) }).Should(ContainElement(jobset.ReasonPodsNotJoined))

		agentJoins(pods[1], "1") // the user fixed the agent's configuration
		eventuallyEpochs(js, 1, 0)
		Expect(eventuallyCondition(ctx, js, jobset.JobSetGatherStalled, metav1.ConditionFalse).Reason).To(Equal(jobset.ReasonGatherCompleted))
		stalled := slices.DeleteFunc(eventReasons(ctx, js), func(r string) bool { return r != jobset.ReasonPodsNotJoined })
		Expect(stalled).To(HaveLen(1), "the event says it once")
	})

	It("ends a stalled gather's report when the JobSet finishes", func() {
		js := create(workers(1, 2, 3).Obj())
		startPods(js, "1", "") // the second agent never joins
		eventuallyCondition(ctx, js, jobset.JobSetGatherStalled, metav1.ConditionTrue)

		jobs := childJobs(ctx, js)
		completeJob(ctx, &jobs[0]) // both workers finished, whatever their agents did
		eventuallyCondition(ctx, js, jobset.JobSetCompleted, metav1.ConditionTrue)
		c := eventuallyCondition(ctx, js, jobset.JobSetGatherStalled, metav1.ConditionFalse)
		Expect(c.Reason).To(Equal(jobset.ReasonGatherCompleted))
	})

	// The Pods' finalizer came from the Jobs' Pod template: the Pods of
	// Jobs created before it (an upgrade) went unheld, and after a
	// rollback every Pod those templates create stayed held for good.
	It("holds every member before the group syncs, and no Job's Pod template carries the finalizer", func() {
		js := create(workers(1, 2, 3).Obj())
		job := &eventuallyJobs(ctx, js, "0", jobsetcontroller.JobName(js.Name, "workers", 0))[0]
		Expect(job.Spec.Template.Finalizers).NotTo(ContainElement(jobset.GroupMemberFinalizer))
		pods := startPods(js, "1", "1")
		for _, pod := range pods {
			Expect(pod.Finalizers).To(BeEmpty(), "created as a Job of an older version creates them")
		}
		eventuallyEpochs(js, 1, 0)
		for _, pod := range pods {
			fresh := &corev1.Pod{}
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), fresh)).To(Succeed())
			Expect(fresh.Finalizers).To(ContainElement(jobset.GroupMemberFinalizer), "Pod %s is held", pod.Name)
		}
	})

	It("releases the group-member finalizer of every Pod when its JobSet is deleted", func() {
		js := create(workers(1, 2, 3).Obj())
		pods := syncedAtOne(js, 2)
		Expect(k8sClient.Delete(ctx, js)).To(Succeed())
		for _, pod := range pods {
			eventuallyReleased(pod)
		}
	})

	Context("restart budget", func() {
		It("maxRestarts 0: the first in-place group restart fails the JobSet, naming in-place restarts", func() {
			js := create(workers(1, 2, 0).Obj())
			pods := syncedAtOne(js, 2)
			agentJoins(pods[0], "2")
			c := eventuallyCondition(ctx, js, jobset.JobSetFailed, metav1.ConditionTrue)
			Expect(c.Reason).To(Equal(jobset.ReasonReachedMaxRestarts))
			// The condition has community JobSet's message; the event names
			// in-place restarts.
			Expect(c.Message).To(Equal(jobset.MessageReachedMaxRestarts))
			Eventually(func() []string { return eventNotes(ctx, js) }).
				Should(ContainElement(ContainSubstring("in-place group restart")))
			Expect(ptr.Deref(fetch(ctx, js).Status.DeprecatedEpoch, 0)).To(BeZero())
		})

		It("maxRestarts N: N group restarts in place, then the JobSet fails", func() {
			js := create(workers(1, 2, 2).Obj())
			pods := syncedAtOne(js, 2)
			for epoch := 2; epoch <= 3; epoch++ {
				e := strconv.Itoa(epoch)
				agentJoins(pods[0], e)
				eventuallyEpochs(js, int32(epoch-1), int32(epoch-1)) // deprecated: the other agent restarts
				agentJoins(pods[1], e)
				eventuallyEpochs(js, int32(epoch), int32(epoch-1))
			}
			Expect(fetch(ctx, js).Status.InPlaceRestarts).To(BeEquivalentTo(2))
			agentJoins(pods[0], "4")
			Expect(eventuallyCondition(ctx, js, jobset.JobSetFailed, metav1.ConditionTrue).Reason).To(Equal(jobset.ReasonReachedMaxRestarts))
		})

		It("counts full restarts that count, not those that do not, with in-place ones", func() {
			js := create(workers(1, 2, 2).FailurePolicyRule(jobset.FailurePolicyRule{
				Name: "preempted", Action: jobset.RestartJobSetAndIgnoreMaxRestarts, OnJobFailureMessagePatterns: []string{"preempted"},
			}).Obj())
			pods := syncedAtOne(js, 2)

			// fullRestart fails the attempt's Job with reason and message,
			// plays the garbage collector, and starts the new attempt's Pods,
			// which gather at the next epoch and sync there. The old Pods go
			// only once the controller has acted on the Job's failure: seen
			// before it, a member Pod being deleted is a group restart.
			fullRestart := func(attempt int, reason, message string) {
				jobs := eventuallyJobs(ctx, js, strconv.Itoa(attempt), "trainer-workers-0")
				failJob(ctx, &jobs[0], reason, message)
				eventuallyDeleting(ctx, jobs...)
				for _, pod := range pods {
					Expect(k8sClient.Delete(ctx, pod)).To(Succeed())
				}
				finishDeletion(ctx, &jobs[0])
				eventuallyJobs(ctx, js, strconv.Itoa(attempt+1), "trainer-workers-0")
				next := strconv.Itoa(attempt + 2)
				pods = startPods(js, next, next)
				eventuallyEpochs(js, int32(attempt+2), int32(attempt+1))
			}
			By("a full restart that does not count")
			fullRestart(0, "PodFailurePolicy", "Pod was preempted")
			By("a full restart that counts")
			fullRestart(1, "BackoffLimitExceeded", "backoff")
			got := fetch(ctx, js)
			Expect([]int32{got.Status.Restarts, got.Status.RestartsCountTowardsMax, got.Status.InPlaceRestarts}).To(Equal([]int32{2, 1, 0}))

			By("one in-place restart fits the budget of 2, a second does not")
			agentJoins(pods[0], "4")
			eventuallyEpochs(js, 3, 3)
			agentJoins(pods[1], "4")
			eventuallyEpochs(js, 4, 3)
			agentJoins(pods[0], "5")
			c := eventuallyCondition(ctx, js, jobset.JobSetFailed, metav1.ConditionTrue)
			Expect(c.Message).To(Equal(jobset.MessageReachedMaxRestarts)) // community's wording, which Kueue copies
			Eventually(func() []string { return eventNotes(ctx, js) }).Should(ContainElement(ContainSubstring("2 restarts used")))
		})
	})

	It("does not use the budget across suspend and resume", func() {
		js := create(workers(1, 2, 0).Obj())
		pods := syncedAtOne(js, 2)
		setSuspend(js, true)
		eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionTrue)
		for _, pod := range pods { // the Job controller deletes the Pods of suspended Jobs
			Expect(k8sClient.Delete(ctx, pod)).To(Succeed())
			// and the kubelet stops their containers: until then, the new
			// Pods do not sync (an old worker may still run).
			kubeletReports(pod, func(s *corev1.PodStatus) { s.Phase = corev1.PodFailed })
		}
		resumedSyncsAtTwo(js)
	})

	// The Job controller stops a suspended JobSet's Pods one by one, and
	// Kueue may resume it in between: a Pod that outlived the suspension
	// still runs the synced epoch while the new ones gather at the next.
	It("restarts in place, uncounted, a Pod that outlived a suspension, so that it gathers with the new ones", func() {
		js := create(workers(1, 2, 0).Obj())
		pods := syncedAtOne(js, 2)
		setSuspend(js, true)
		eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionTrue)
		Expect(k8sClient.Delete(ctx, pods[0])).To(Succeed())
		kubeletReports(pods[0], func(s *corev1.PodStatus) { s.Phase = corev1.PodFailed })

		By("resumed before the Job controller stopped the other Pod, which still runs epoch 1")
		setSuspend(js, false)
		eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionFalse)
		startPodsFrom(js, 0, "2")
		eventuallyEpochs(js, 1, 1)

		By("its agent restarts its worker and joins epoch 2: the group syncs, no restart counted")
		agentJoins(pods[1], "2")
		eventuallyEpochs(js, 2, 1)
		got := fetch(ctx, js)
		Expect([]int32{got.Status.InPlaceRestarts, got.Status.RestartsCountTowardsMax}).To(Equal([]int32{0, 0}))
	})

	// Kueue preempts by suspending. The Job controller deletes the Pods of
	// the suspended Job; a trainer that checkpoints on SIGTERM exits 0, its
	// Pod ends Succeeded. Kubernetes' Job controller takes its tracking
	// finalizer off first and counts nothing; one that counted the index
	// complete (as it does for a Pod deleted by anyone else) made the
	// JobSet complete at once before, or resume a rank short.
	It("does not complete a suspended JobSet whose stopped workers exited 0, and resumes with every rank", func() {
		js := create(workers(1, 2, 3).Obj())
		pods := syncedAtOne(js, 2)
		setSuspend(js, true)
		eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionTrue)
		for _, pod := range pods {
			addFinalizer(pod, batchv1.JobTrackingFinalizer)                                  // the Job controller's, removed once it counted the Pod
			Expect(k8sClient.Delete(ctx, pod)).To(Succeed())                                 // the Job controller stops the suspended Job's Pods
			kubeletReports(pod, func(s *corev1.PodStatus) { s.Phase = corev1.PodSucceeded }) // the worker checkpoints and exits 0
		}
		job := &childJobs(ctx, js)[0]
		completeJob(ctx, job)
		for _, pod := range pods {
			removeFinalizer(pod, batchv1.JobTrackingFinalizer)
		}

		By("the stop is answered with new Jobs, not counted, and the JobSet does not complete")
		Eventually(func(g Gomega) {
			got := fetch(ctx, js)
			g.Expect([]int32{got.Status.Restarts, got.Status.RestartsCountTowardsMax, got.Status.InPlaceRestarts}).
				To(Equal([]int32{1, 0, 0}), "[restarts, restartsCountTowardsMax, inPlaceRestarts]")
		}).Should(Succeed())
		Expect(meta.FindStatusCondition(fetch(ctx, js).Status.Conditions, string(jobset.JobSetCompleted))).To(BeNil())
		finishDeletion(ctx, job)
		next := eventuallyJobs(ctx, js, "1", job.Name)
		Expect(ptr.Deref(next[0].Spec.Suspend, false)).To(BeTrue(), "the new Job waits for the resume")
		for _, pod := range pods {
			eventuallyReleased(pod)
		}

		By("on resume every rank runs again and syncs")
		resumedSyncsAtTwo(js)
	})

	// A node that dies, hangs or is cut off keeps its Node object and its
	// Pods Running in the API; Kubernetes would evict them after 300 s,
	// gracefully, which a dead kubelet never completes.
	It("marks Failed a member whose node stopped renewing its Lease, after the agent's fence, and taints the node until it renews again", func() {
		lost, ok := "node-lost-"+ns, "node-ok-"+ns
		createNode(lost)
		renewing := kubelets(lost, ok)
		js := create(workers(1, 2, 3).Obj())
		healthy := startPodsOn(js, ok, 0, "1")[0]
		member := startPodsOn(js, lost, 1, "1")[0]
		eventuallyEpochs(js, 1, 0)
		kept(member)                                       // as a dead kubelet keeps it, to be read
		addFinalizer(member, batchv1.JobTrackingFinalizer) // as the Job controller creates it
		// Its kubelet's last word: running, never a stop.
		kubeletReports(member, func(s *corev1.PodStatus) { containersIn(s, running) })

		By("the node's kubelet stops renewing: past the bound, the member is marked Failed and deleted, uncounted by its Job")
		renewing(lost, false)
		Eventually(func(g Gomega) {
			p := &corev1.Pod{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(member), p)).To(Succeed())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodFailed))
			// The Job controller counts a failed Pod only while it holds
			// its tracking finalizer: counted, the node's loss would hold
			// the Job's later replacements back longer.
			g.Expect(p.Finalizers).NotTo(ContainElement(batchv1.JobTrackingFinalizer))
			c := podCondition(p, corev1.DisruptionTarget)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(jobsetcontroller.ReasonNodeLost))
			g.Expect(p.DeletionTimestamp).NotTo(BeNil())
			// Not ready since the node's last renewal: the Job controller
			// dates the failure from it, and its backoff is over already.
			ready := podCondition(p, corev1.PodReady)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(corev1.ConditionFalse))
			g.Expect(ready.Reason).To(Equal(jobsetcontroller.ReasonNodeLost))
			g.Expect(ready.LastTransitionTime.Time).To(BeTemporally("<", c.LastTransitionTime.Time))
		}, 30*time.Second).Should(Succeed())
		eventuallyEpochs(js, 1, 1) // the group restarts in place around its replacement
		Expect(fetch(ctx, js).Status.InPlaceRestarts).To(Equal(int32(1)))

		By("its replacement joins while its node stays silent: the group syncs, as its agent's fence stopped its worker")
		agentJoins(healthy, "2")
		startPodsOn(js, ok, 1, "2")
		eventuallyEpochs(js, 2, 1)
		Eventually(func() []string { return eventReasons(ctx, js) }).Should(ContainElement(jobsetcontroller.ReasonNodeLost))
		Eventually(func() []corev1.Taint { return nodeTaints(lost) }).Should(ContainElement(HaveField("Key", nodeloss.Taint)))
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(healthy), &corev1.Pod{})).To(Succeed(), "the member on the healthy node stays")

		By("the node renews again: its taint goes")
		renewing(lost, true)
		Eventually(func() []corev1.Taint { return nodeTaints(lost) }, 10*time.Second).ShouldNot(ContainElement(HaveField("Key", nodeloss.Taint)))
	})

	// The controller marks a lost member Failed, then deletes it: two
	// writes. Should the deletion fail, or the leader stop in between, a
	// kubelet that comes back may write its own phase back over the mark
	// (its status manager merges the phase it computed over a terminal one
	// it did not set) and the Pod would look live again, beside its
	// replacement: a rank would run twice.
	It("marks Failed again and deletes a member marked lost whose kubelet wrote its phase back, and never counts it in its group", func() {
		js := create(workers(1, 2, 3).Obj())
		pods := syncedAtOne(js, 2)
		kept(pods[1])
		const why = "node node-a has not renewed its Lease for 31s"

		By("the leader marks the member lost and stops before it deletes it")
		stopController()
		kubeletReports(pods[1], func(s *corev1.PodStatus) { // markLost's first write
			s.Phase, s.Reason, s.Message = corev1.PodFailed, jobsetcontroller.ReasonNodeLost, why
			s.Conditions = append(s.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				Reason: jobsetcontroller.ReasonNodeLost, Message: why, LastTransitionTime: metav1.Now()})
		})
		By("its kubelet comes back and writes a running status it made before it saw the mark")
		kubeletReports(pods[1], func(s *corev1.PodStatus) {
			s.Phase, s.Reason, s.Message = corev1.PodRunning, "", ""
			containersIn(s, running)
		})
		restartController()

		By("the new leader marks it Failed again, with its mark's reason, and deletes it")
		Eventually(func(g Gomega) {
			p := &corev1.Pod{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pods[1]), p)).To(Succeed())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodFailed))
			g.Expect([]string{p.Status.Reason, p.Status.Message}).To(Equal([]string{jobsetcontroller.ReasonNodeLost, why}))
			g.Expect(p.DeletionTimestamp).NotTo(BeNil())
		}).Should(Succeed())
		eventuallyEpochs(js, 1, 1) // the group restarts in place around its replacement

		By("its agent joins epoch 2 with the healthy member's: no sync, the rank is its replacement's")
		agentJoins(pods[0], "2")
		agentJoins(pods[1], "2")
		noStatusWrite(js, pods[0])

		By("its replacement joins while its kubelet has not stopped it: no sync either")
		replacement := startPodsOn(js, "node-b", 1, "2")[0]
		noStatusWrite(js, replacement)

		By("its kubelet stops it: the group syncs with the replacement")
		kubeletReports(pods[1], func(s *corev1.PodStatus) {
			containersIn(s, stopped)
		})
		eventuallyEpochs(js, 2, 1)
		Expect(fetch(ctx, js).Status.InPlaceRestarts).To(Equal(int32(1)))
	})

	// A full restart deletes the Jobs of the earlier attempt in the
	// foreground: each goes once its Pods are gone, and its successor, of
	// the same name, waits for that. A Pod on a node whose kubelet is gone
	// stays Terminating for ever, and the restart with it.
	It("removes an earlier attempt's Pod held Terminating on a node that stopped renewing its Lease, so that a full restart ends", func() {
		lost, ok := "node-lost-"+ns, "node-ok-"+ns
		createNode(lost)
		renewing := kubelets(lost, ok)
		// Agents that ask no witness (FENCE_WITNESSES=0): the Pod goes past
		// its bound, not past the deferred bound that an earlier attempt's
		// witnesses call for (TestLostMembers covers that one).
		spec := workers(1, 2, 3).Obj()
		pod := &spec.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
		agent := &pod.InitContainers[sidecar.Index(*pod)]
		agent.Env = append(agent.Env, corev1.EnvVar{Name: agentspec.EnvFenceWitnesses, Value: "0"})
		js := create(spec)
		healthy := startPodsOn(js, ok, 0, "1")[0]
		stuck := startPodsOn(js, lost, 1, "1")[0]
		eventuallyEpochs(js, 1, 0)

		By("the lost node's kubelet stops renewing; the Job fails: a full restart deletes it")
		renewing(lost, false)
		job := eventuallyJobs(ctx, js, "0", "trainer-workers-0")[0]
		failJob(ctx, &job, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
		eventuallyDeleting(ctx, job)

		By("the garbage collector deletes the Job's Pods: the healthy node's kubelet removes its own, the lost node's never does")
		Expect(k8sClient.Delete(ctx, healthy)).To(Succeed())
		Expect(k8sClient.Delete(ctx, healthy, client.GracePeriodSeconds(0))).To(Succeed())
		Expect(k8sClient.Delete(ctx, stuck)).To(Succeed())

		By("past the bound, the controller removes it: marked Failed, deleted with no grace period")
		Eventually(func(g Gomega) {
			p := &corev1.Pod{}
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(stuck), p)
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Pod %s is still there: phase %s, being deleted since %v", stuck.Name, p.Status.Phase, p.DeletionTimestamp)
		}, 30*time.Second).Should(Succeed())
		Eventually(func() []string { return eventNotes(ctx, js) }).Should(ContainElement(ContainSubstring(stuck.Name)))
		Eventually(func() []corev1.Taint { return nodeTaints(lost) }).Should(ContainElement(HaveField("Key", nodeloss.Taint)))

		By("the garbage collector ends the Job's deletion: the new attempt's Job is created")
		finishDeletion(ctx, &job)
		eventuallyJobs(ctx, js, "1", "trainer-workers-0")
	})

	// A worker that fails in place on a broken node keeps failing there: an
	// in-place restart keeps the Pod, and so the node.
	It("replaces off its node a Pod that failed in place three times within the window, as part of the third group restart", func() {
		js := create(workers(1, 2, 10).Obj())
		pods := syncedAtOne(js, 2)
		for epoch := 2; epoch <= 4; epoch++ {
			agentJoins(pods[0], strconv.Itoa(epoch)) // pods[0] failed in place: its agent rejoins first
			eventuallyEpochs(js, int32(epoch-1), int32(epoch-1))
			if epoch == 4 {
				break
			}
			agentJoins(pods[1], strconv.Itoa(epoch))
			eventuallyEpochs(js, int32(epoch), int32(epoch-1))
		}
		Eventually(func(g Gomega) {
			p := &corev1.Pod{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pods[0]), p)).To(Succeed())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodFailed))
			c := podCondition(p, jobset.PodConditionReplacedOffNode)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Message).To(ContainSubstring("failed in place 3 times within 10m0s on node node-a"))
			g.Expect(strings.Split(p.Annotations[jobset.FailuresInPlaceAnnotation], ",")).To(HaveLen(3))
		}).Should(Succeed())
		Expect(fetch(ctx, js).Status.InPlaceRestarts).To(Equal(int32(3)), "counted as the group restarts they are")
		Eventually(func() []string { return eventReasons(ctx, js) }).Should(ContainElement(jobsetcontroller.ReasonRepeatedFailures))
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pods[1]), pods[1])).To(Succeed())
		Expect(pods[1].Status.Phase).NotTo(Equal(corev1.PodFailed), "the peer that restarted in place with it stays")

		// Its agent joined epoch 4 before the mark, and its kubelet's status
		// manager merges the phase it last computed over a terminal one it
		// did not set: the Pod looks running again. Its kubelet, whose
		// latest copy of the Pod is then that one, would never stop it, nor
		// would its Job replace it: the controller marks it Failed again.
		// The group is still a rank short, and the marked Pod's worker may
		// run until its kubelet stops it.
		By("its kubelet writes back a running status made before it saw the mark: marked Failed again; the peer joins epoch 4")
		kubeletReports(pods[0], func(s *corev1.PodStatus) {
			s.Phase = corev1.PodRunning
			s.Reason, s.Message = "", ""
			containersIn(s, running)
		})
		Eventually(func(g Gomega) {
			p := &corev1.Pod{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pods[0]), p)).To(Succeed())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodFailed))
			g.Expect(p.Status.Reason).To(Equal(jobsetcontroller.ReasonRepeatedFailures))
			g.Expect(p.Status.Message).To(ContainSubstring("failed in place 3 times"))
		}).Should(Succeed())
		agentJoins(pods[1], "4")
		noStatusWrite(js, pods[1])

		By("its replacement joins epoch 4 while the kubelet has not stopped the marked Pod")
		replacement := startPodsOn(js, "node-b", 0, "4")[0]
		noStatusWrite(js, replacement)

		By("the kubelet stops the marked Pod: the group syncs with the replacement, no group restart more")
		kubeletReports(pods[0], func(s *corev1.PodStatus) {
			s.Phase = corev1.PodFailed
			containersIn(s, stopped)
		})
		eventuallyEpochs(js, 4, 3)
		noStatusWrite(js)
		Expect(fetch(ctx, js).Status.InPlaceRestarts).To(Equal(int32(3)), "the replacement was part of the third group restart")
	})

	// Under exclusive placement a follower is pinned to its leader's
	// domain, here its node: replaced alone, it could never leave it.
	It("replaces off its node, with its whole Job, a follower that failed in place three times under hostname exclusive placement, as part of the third group restart", func() {
		const hostname = "kubernetes.io/hostname"
		exclusive := func(p *corev1.Pod) { p.Annotations[jobset.ExclusiveKey] = hostname }
		// keptOffNodeA: the Pod webhook's keep-off, on the Job's new Pods.
		keptOffNodeA := func(p *corev1.Pod) {
			exclusive(p)
			keepoff.Add(p, []string{"node-a"})
		}
		js := create(workers(1, 2, 10).Obj())
		leader := startPodsWith(js, "node-a", 0, exclusive, "1")[0]
		follower := startPodsWith(js, "node-a", 1, exclusive, "1")[0]
		eventuallyEpochs(js, 1, 0)
		for epoch := 2; epoch <= 4; epoch++ {
			agentJoins(follower, strconv.Itoa(epoch)) // the follower failed in place: its agent rejoins first
			eventuallyEpochs(js, int32(epoch-1), int32(epoch-1))
			if epoch == 4 {
				break
			}
			agentJoins(leader, strconv.Itoa(epoch))
			eventuallyEpochs(js, int32(epoch), int32(epoch-1))
		}
		Eventually(func(g Gomega) {
			p := &corev1.Pod{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(follower), p)).To(Succeed())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodFailed))
			c := podCondition(p, jobset.PodConditionReplacedOffNode)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(jobset.PodReasonRepeatedFailures))
			g.Expect(c.Message).To(ContainSubstring("failed in place 3 times within 10m0s on node node-a"))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			p := &corev1.Pod{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(leader), p)).To(Succeed())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodFailed), "the leader is replaced with its follower")
			c := podCondition(p, jobset.PodConditionReplacedOffNode)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(jobset.PodReasonReplacedWithItsJob))
			g.Expect(c.Message).To(ContainSubstring("Pod " + follower.Name + " on node node-a failed in place again and again"))
			g.Expect(p.Annotations).NotTo(HaveKey(jobset.FailuresInPlaceAnnotation), "the leader's own failures are not counted")
		}).Should(Succeed())
		Expect(fetch(ctx, js).Status.InPlaceRestarts).To(Equal(int32(3)), "counted as the group restarts they are")
		Eventually(func() []string { return eventNotes(ctx, js) }).Should(ContainElement(ContainSubstring("its Pods " + leader.Name + " are replaced with it")))

		By("the kubelet stops both marked Pods")
		for _, p := range []*corev1.Pod{leader, follower} {
			kubeletReports(p, func(s *corev1.PodStatus) {
				s.Phase = corev1.PodFailed
				containersIn(s, stopped)
			})
		}

		By("the leader's replacement, kept off node A, finds no node: the JobSet says so")
		newLeader := startPodsWith(js, "", 0, keptOffNodeA, "")[0]
		kubeletReports(newLeader, func(s *corev1.PodStatus) {
			s.Phase = corev1.PodPending
			s.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
				Message: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."}}
		})
		c := eventuallyCondition(ctx, js, jobset.JobSetKeptOffNodes, metav1.ConditionTrue)
		Expect(c.Message).To(And(ContainSubstring("Pod "+newLeader.Name+" is kept off node node-a"), ContainSubstring("placed exclusively over "+hostname),
			ContainSubstring("0/1 nodes are available")))

		By("a node is added, the leader's replacement is scheduled there, and its follower after it: the group syncs at epoch 4, no group restart more")
		binding := &corev1.Binding{Target: corev1.ObjectReference{Kind: "Node", Name: "node-b"}}
		Expect(k8sClient.SubResource("binding").Create(ctx, newLeader, binding)).To(Succeed())
		eventuallyCondition(ctx, js, jobset.JobSetKeptOffNodes, metav1.ConditionFalse)
		agentJoins(newLeader, "4")
		startPodsWith(js, "node-b", 1, keptOffNodeA, "4")
		eventuallyEpochs(js, 4, 3)
		Expect(fetch(ctx, js).Status.InPlaceRestarts).To(Equal(int32(3)), "the Job's replacement was part of the third group restart")
		for _, p := range []*corev1.Pod{leader, follower} {
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
			Expect(podCondition(p, jobset.PodConditionReplacedOffNode)).NotTo(BeNil())
		}
	})

	It("falls back to the failure policy when a Job fails: FailJobSet on PodFailurePolicy", func() {
		js := create(workers(2, 1, 5).FailurePolicyRule(jobset.FailurePolicyRule{
			Name: "fatal", Action: jobset.FailJobSet, OnJobFailureReasons: []string{"PodFailurePolicy"},
		}).Obj())
		syncedAtOne(js, 2)
		jobs := eventuallyJobs(ctx, js, "0", "trainer-workers-0", "trainer-workers-1")
		failJob(ctx, &jobs[1], "PodFailurePolicy", "Container worker for pod trainer-workers-1-0 failed with exit code 42 matching FailJob rule at index 0")
		c := eventuallyCondition(ctx, js, jobset.JobSetFailed, metav1.ConditionTrue)
		Expect(c.Reason).To(Equal(jobset.ReasonFailJobSetAction))
	})

	// The marks of a restart in place are those the restart that brought
	// the Pod to its epoch left, and a status made before the join can be
	// posted long after it (held in the API server's queues): taken as a
	// failure, they started group restarts one after another.
	It("starts no group restart on a synced Pod's restart in place until its agent rejoins", func() {
		js := create(workers(1, 2, 3).Obj())
		pods := syncedAtOne(js, 2)
		afterTheJoin(pods[1], 3*time.Second) // however long after the join
		// Every container removed to start them all again, the agent down.
		removed := func(name string) corev1.ContainerStatus {
			return corev1.ContainerStatus{Name: name, Image: "registry.k8s.io/pause:3.10", RestartCount: 1,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: jobset.ReasonRestartingAllContainers}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 137, Reason: jobset.ReasonRestartingAllContainers}}}
		}
		kubeletReports(pods[1], func(s *corev1.PodStatus) {
			s.Phase = corev1.PodRunning
			s.InitContainerStatuses = []corev1.ContainerStatus{removed(agentspec.ContainerName)}
			s.ContainerStatuses = []corev1.ContainerStatus{removed("worker")}
		})
		noStatusWrite(js, pods[1])
		agentJoins(pods[1], "2")
		eventuallyEpochs(js, 1, 1)
		Expect(eventuallyCondition(ctx, js, jobset.JobSetInPlaceRestarting, metav1.ConditionTrue).Message).
			To(ContainSubstring(pods[1].Name + " joined epoch 2"))
	})

	// An agent that stopped its hung worker joins the next epoch with the
	// record of the hang: a failure like any other, with its own reason.
	It("gives a group restart that a hung worker started the reason Hang, counted as any failure", func() {
		js := create(workers(1, 2, 1).Obj())
		pods := syncedAtOne(js, 2)
		hangs := metrics.InPlaceRestartsByCause.WithLabelValues(js.Namespace, metrics.CauseHang)
		before := testutil.ToFloat64(hangs)
		patch := client.MergeFrom(pods[0].DeepCopy())
		pods[0].Annotations[jobset.EpochKey] = "2"
		pods[0].Annotations[agentspec.HungAnnotation] = "1"
		Expect(k8sClient.Patch(ctx, pods[0], patch)).To(Succeed())
		eventuallyEpochs(js, 1, 1)
		c := eventuallyCondition(ctx, js, jobset.JobSetInPlaceRestarting, metav1.ConditionTrue)
		Expect(c.Reason).To(Equal(jobset.ReasonHang))
		Expect(c.Message).To(ContainSubstring(pods[0].Name + " joined epoch 2 after its worker made no progress"))
		Eventually(func() []string { return eventReasons(ctx, js) }).Should(ContainElement(jobset.ReasonHang))
		Expect(fetch(ctx, js).Status.InPlaceRestarts).To(BeEquivalentTo(1), "counted toward maxRestarts")
		Eventually(func() float64 { return testutil.ToFloat64(hangs) }).Should(Equal(before + 1))
		agentJoins(pods[1], "2")
		eventuallyEpochs(js, 2, 1)
	})

	// An agent out of contact with the API server that fences anyway (no
	// peer on another node to vouch for it, or past its defer limit) stops
	// its worker: the platform's doing, not the worker's.
	agentJoinsAfterFence := func(pod *corev1.Pod, epoch, fencedAt string) {
		patch := client.MergeFrom(pod.DeepCopy())
		pod.Annotations[jobset.EpochKey] = epoch
		pod.Annotations[agentspec.FencedAnnotation] = fencedAt
		Expect(k8sClient.Patch(ctx, pod, patch)).To(Succeed())
	}
	It("counts no group restart that only fences caused and blames no Pod, even three in a row; a real failure beside a fence counts", func() {
		js := create(workers(1, 2, 1).Obj()) // maxRestarts 1: a counted restart would spend it
		pods := syncedAtOne(js, 2)
		for epoch := 2; epoch <= 4; epoch++ {
			By(fmt.Sprintf("Pod %s fenced at epoch %d and joins %d", pods[0].Name, epoch-1, epoch))
			agentJoinsAfterFence(pods[0], strconv.Itoa(epoch), strconv.Itoa(epoch-1))
			eventuallyEpochs(js, int32(epoch-1), int32(epoch-1))
			agentJoins(pods[1], strconv.Itoa(epoch))
			eventuallyEpochs(js, int32(epoch), int32(epoch-1))
		}
		got := fetch(ctx, js)
		Expect(got.Status.InPlaceRestarts).To(BeZero(), "no fence counts")
		Expect(got.Status.FencedInPlaceRestarts).To(BeEquivalentTo(3))
		Expect(eventReasons(ctx, js)).NotTo(ContainElement(jobset.ReasonInPlaceRestartStarted))
		Eventually(func() []string { return eventReasons(ctx, js) }).Should(ContainElement(jobset.ReasonFencedRestartStarted))
		Eventually(func() []string { return eventNotes(ctx, js) }).Should(ContainElement(
			HavePrefix("in-place group restart after a fence (3 so far, not counted toward maxRestarts) completed: every live Pod joined epoch 4")))
		for _, pod := range pods {
			p := &corev1.Pod{}
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), p)).To(Succeed())
			Expect(p.Annotations).NotTo(HaveKey(jobset.FailuresInPlaceAnnotation), "Pod %s is blamed for no failure in place", p.Name)
			Expect(p.Status.Phase).NotTo(Equal(corev1.PodFailed), "Pod %s stays on its node", p.Name)
		}

		By("a fence and a worker's real failure at the same time: counted once, the failed Pod blamed")
		stopController()
		agentJoinsAfterFence(pods[0], "5", "4")
		agentJoins(pods[1], "5")
		restartController()
		eventuallyEpochs(js, 5, 4)
		got = fetch(ctx, js)
		Expect(got.Status.InPlaceRestarts).To(BeEquivalentTo(1), "the real failure counts")
		Expect(got.Status.FencedInPlaceRestarts).To(BeEquivalentTo(3))

		By("a stale fence record (epoch 4) on a Pod that now joins 6: a failure, counted; the budget is spent")
		agentJoins(pods[0], "6")
		Eventually(func() *metav1.Condition {
			return meta.FindStatusCondition(fetch(ctx, js).Status.Conditions, string(jobset.JobSetFailed))
		}).Should(HaveField("Reason", jobset.ReasonReachedMaxRestarts))
	})

	// Seen on the local cluster. Every rank crashed while
	// the controller was down; after RestartAllContainers no container
	// shows the trigger's exit code or any finish time, so the old code's
	// dated signals were gone and the sync looked plain.
	It("counts a group restart that no reconcile saw start, and starts no second one", func() {
		js := create(workers(1, 2, 3).Obj())
		pods := syncedAtOne(js, 2)

		By("every Pod restarting in place and rejoining while the controller is down")
		eventuallyCondition(ctx, js, jobset.JobSetInPlaceRestarting, metav1.ConditionFalse)
		stopController()
		for _, pod := range pods {
			kubeletReports(pod, func(s *corev1.PodStatus) {
				s.Phase = corev1.PodRunning
				s.ContainerStatuses = []corev1.ContainerStatus{{
					Name: "worker", Image: "registry.k8s.io/pause:3.10", RestartCount: 1,
					State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "RestartingAllContainers"}},
				}}
			})
			agentJoins(pod, "2")
		}
		restartController()

		eventuallyEpochs(js, 2, 1)
		Expect(fetch(ctx, js).Status.InPlaceRestarts).To(BeEquivalentTo(1))
		Consistently(func() []int32 { s, d := epochs(js); return []int32{s, d} }).Should(Equal([]int32{2, 1}))
	})

	// A Pod that joined the gather and was then evicted
	// (phase Failed, object kept) was taken for a member lost once its
	// replacement let the group sync: a second, spurious group restart.
	It("ignores a Pod that joined a gather and failed before the sync: its replacement was the member", func() {
		js := create(workers(1, 2, 3).Obj())
		pods := syncedAtOne(js, 2)
		agentJoins(pods[1], "2")
		eventuallyEpochs(js, 1, 1)
		kubeletReports(pods[1], func(s *corev1.PodStatus) { s.Phase = corev1.PodFailed; s.Reason = "Evicted" })
		replacement := startPodsFrom(js, 1, "2")[0] // at the evicted Pod's index
		agentJoins(pods[0], "2")
		eventuallyEpochs(js, 2, 1)
		noStatusWrite(js, pods[0], replacement)
		Expect(fetch(ctx, js).Status.InPlaceRestarts).To(BeEquivalentTo(1))
	})

	// An execution is counted when every Job is made anew (a full restart,
	// a resume); a group restart in place keeps the Jobs and their Pods.
	It("counts no execution for an in-place group restart: the count, the Jobs and the Pods' annotation stay", func() {
		js := create(workers(1, 2, 3).Obj())
		history := statusHistory(ctx, js)
		job := eventuallyJobs(ctx, js, "0", "trainer-workers-0")[0]
		Expect(job.Spec.Template.Annotations).To(HaveKeyWithValue(jobset.ExecutionAttemptsKey, "0"))
		fromTemplate := func(p *corev1.Pod) {
			p.Annotations[jobset.ExecutionAttemptsKey] = job.Spec.Template.Annotations[jobset.ExecutionAttemptsKey]
		}
		pods := startPodsWith(js, "node-a", 0, fromTemplate, "1", "1")
		eventuallyEpochs(js, 1, 0)

		restartsInPlaceOnce(js, pods[0], pods[1])
		got := fetch(ctx, js)
		Expect(got.Status.InPlaceRestarts).To(BeEquivalentTo(1))
		Expect(got.Status.ExecutionAttempts).To(HaveValue(BeEquivalentTo(0)))
		jobs := childJobs(ctx, js)
		Expect(jobs).To(HaveLen(1))
		Expect(jobs[0].UID).To(Equal(job.UID), "the Job is not recreated")
		Expect(jobs[0].Annotations).To(HaveKeyWithValue(jobset.ExecutionAttemptsKey, "0"))
		Expect(jobs[0].Spec.Template.Annotations).To(HaveKeyWithValue(jobset.ExecutionAttemptsKey, "0"))
		for _, pod := range pods {
			fresh := &corev1.Pod{}
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), fresh)).To(Succeed())
			Expect(fresh.Annotations).To(HaveKeyWithValue(jobset.ExecutionAttemptsKey, "0"), "Pod %s, restarted in place", pod.Name)
		}

		Eventually(history).Should(ContainElement(HaveField("SyncedEpoch", HaveValue(BeEquivalentTo(2)))))
		for i, st := range history() {
			Expect(ptr.Deref(st.ExecutionAttempts, 0)).To(BeZero(), "status %d", i)
		}
	})

	// The active deadline counts the execution, not the Pods: a group
	// restart in place is no new execution.
	It("leaves status.startTime, and the deadline counted from it, through an in-place group restart", func() {
		w := workers(1, 2, 3)
		w.Spec.ActiveDeadlineSeconds = ptr.To[int64](7200)
		js := create(w.Obj())
		eventuallyJobs(ctx, js, "0", "trainer-workers-0")
		Eventually(func() *metav1.Time { return fetch(ctx, js).Status.StartTime }).ShouldNot(BeNil())
		start := metav1.NewTime(time.Now().Add(-time.Hour)).Rfc3339Copy()
		Eventually(func() error {
			fresh := fetch(ctx, js)
			fresh.Status.StartTime = &start
			return k8sClient.Status().Update(ctx, fresh)
		}).Should(Succeed())
		history := statusHistory(ctx, js)
		pods := startPods(js, "1", "1")
		eventuallyEpochs(js, 1, 0)

		restartsInPlaceOnce(js, pods[0], pods[1])
		got := fetch(ctx, js)
		Expect(got.Status.InPlaceRestarts).To(BeEquivalentTo(1))
		Expect(got.Status.Restarts).To(BeZero())
		Expect(got.Status.StartTime).To(HaveValue(HaveField("Time", BeTemporally("==", start.Time))))
		Expect(got.Status.TerminalState).To(BeEmpty())
		for i, st := range history() {
			Expect(st.StartTime).To(HaveValue(HaveField("Time", BeTemporally("==", start.Time))), "status %d", i)
		}
	})

	It("converges when the controller restarts in the middle of a group restart", func() {
		js := create(workers(1, 3, 3).Obj())
		pods := syncedAtOne(js, 3)
		agentJoins(pods[0], "2")
		eventuallyEpochs(js, 1, 1)

		By("stopping the controller while the other agents restart")
		// The last agents joining completes the group restart: a running
		// controller writes syncedEpoch 2 at once, as it wrote
		// deprecatedEpoch 1 for the first join above and as the new one
		// does below. The JobSet is read from the apiserver, so that write
		// would show, and nothing else writes the JobSet meanwhile: an
		// unchanged resourceVersion proves the stopped controller wrote
		// nothing at all, not only that syncedEpoch stayed.
		stopController()
		before := fetch(ctx, js).ResourceVersion
		agentJoins(pods[1], "2")
		agentJoins(pods[2], "2")
		Consistently(func(g Gomega) {
			got := fetch(ctx, js)
			g.Expect(got.ResourceVersion).To(Equal(before), "the stopped controller wrote the JobSet")
			g.Expect(ptr.Deref(got.Status.SyncedEpoch, 0)).To(BeEquivalentTo(1))
		}).Should(Succeed())

		By("starting a new controller")
		restartController()
		eventuallyEpochs(js, 2, 1)
		Expect(fetch(ctx, js).Status.InPlaceRestarts).To(BeEquivalentTo(1))
	})
})
