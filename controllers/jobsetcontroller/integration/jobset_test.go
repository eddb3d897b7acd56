package integration

import (
	"path/filepath"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/internal/metrics"
	"github.com/fastjobset/jobset/images/manifest"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

var _ = Describe("JobSet controller", func() {

	// trainer: a driver Job and two worker Jobs of two Pods each.
	trainer := func() *wrappers.JobSetWrapper {
		return wrappers.MakeJobSet("trainer", ns).
			ReplicatedJob(wrappers.MakeReplicatedJob("driver").Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(2).Obj())
	}
	allJobs := []string{"trainer-driver-0", "trainer-workers-0", "trainer-workers-1"}

	Context("children", func() {
		It("creates one Indexed Job per replica, labelled and owned, and the headless Service", func() {
			js := create(trainer().Obj())
			jobs := eventuallyJobs(ctx, js, "0", allJobs...)

			worker := jobs[2]
			Expect(metav1.GetControllerOf(&worker).UID).To(Equal(js.UID))
			Expect(*worker.Spec.CompletionMode).To(Equal(batchv1.IndexedCompletion))
			Expect(*worker.Spec.Parallelism).To(BeEquivalentTo(2))
			for _, m := range []map[string]string{worker.Labels, worker.Annotations, worker.Spec.Template.Labels, worker.Spec.Template.Annotations} {
				Expect(m).To(And(
					HaveKeyWithValue(jobset.JobSetNameKey, "trainer"),
					HaveKeyWithValue(jobset.JobSetUIDKey, string(js.UID)),
					HaveKeyWithValue(jobset.ReplicatedJobNameKey, "workers"),
					HaveKeyWithValue(jobset.JobIndexKey, "1"),
					HaveKeyWithValue(jobset.JobGlobalIndexKey, "2"),
					HaveKeyWithValue(jobset.RestartsKey, "0"),
				))
			}
			Expect(worker.Spec.Template.Spec.Subdomain).To(Equal("trainer"))

			svc := &corev1.Service{}
			Eventually(func() error {
				return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "trainer"}, svc)
			}).Should(Succeed())
			Expect(svc.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))
			Expect(svc.Spec.Selector).To(Equal(map[string]string{jobset.JobSetNameKey: "trainer"}))
			Expect(svc.Spec.PublishNotReadyAddresses).To(BeTrue())
		})

		It("creates no Service when DNS hostnames are disabled", func() {
			js := create(trainer().EnableDNSHostnames(false).Obj())
			jobs := eventuallyJobs(ctx, js, "0", allJobs...)
			Expect(jobs[0].Spec.Template.Spec.Subdomain).To(BeEmpty())
			Consistently(func() bool {
				err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "trainer"}, &corev1.Service{})
				return err != nil
			}).Should(BeTrue())
		})

		It("counts Jobs by state in replicatedJobsStatus", func() {
			js := create(trainer().Obj())
			jobs := eventuallyJobs(ctx, js, "0", allJobs...)
			markJobReady(ctx, &jobs[1])
			completeJob(ctx, &jobs[0])
			Eventually(func(g Gomega) {
				g.Expect(fetch(ctx, js).Status.ReplicatedJobsStatus).To(ConsistOf(
					jobset.ReplicatedJobStatus{Name: "driver", Succeeded: 1},
					jobset.ReplicatedJobStatus{Name: "workers", Ready: 1, Active: 1},
				))
			}).Should(Succeed())
		})
	})

	Context("success policy", func() {
		It("completes when every Job completed (no policy), and stops nothing that still runs", func() {
			js := create(trainer().Obj())
			jobs := eventuallyJobs(ctx, js, "0", allJobs...)
			for i := range jobs[:2] {
				completeJob(ctx, &jobs[i])
			}
			Consistently(func() string { return fetch(ctx, js).Status.TerminalState }).Should(BeEmpty())
			completeJob(ctx, &jobs[2])
			c := eventuallyCondition(ctx, js, jobset.JobSetCompleted, metav1.ConditionTrue)
			Expect(c.Reason).To(Equal(jobset.ReasonAllJobsCompleted))
			Expect(fetch(ctx, js).Status.TerminalState).To(Equal("Completed"))
			Eventually(func() []string { return eventReasons(ctx, js) }).Should(ContainElement(jobset.ReasonAllJobsCompleted))

			By("counting the completion once, however often the JobSet is reconciled again")
			completed := metrics.JobSetsCompleted.WithLabelValues(js.Name, ns)
			Eventually(func() float64 { return testutil.ToFloat64(completed) }).Should(Equal(1.0))
			for i := range 3 {
				Eventually(func() error {
					fresh := fetch(ctx, js)
					fresh.Annotations = map[string]string{"poke": strconv.Itoa(i)}
					return k8sClient.Update(ctx, fresh)
				}).Should(Succeed())
			}
			Consistently(func() float64 { return testutil.ToFloat64(completed) }).Should(Equal(1.0))
		})

		It("with operator Any completes on the first targeted Job, then deletes the Jobs still active", func() {
			js := create(trainer().SuccessPolicy(jobset.OperatorAny, "driver").Obj())
			jobs := eventuallyJobs(ctx, js, "0", allJobs...)
			completeJob(ctx, &jobs[1]) // a worker: not targeted
			Consistently(func() string { return fetch(ctx, js).Status.TerminalState }).Should(BeEmpty())
			completeJob(ctx, &jobs[0]) // the driver
			eventuallyCondition(ctx, js, jobset.JobSetCompleted, metav1.ConditionTrue)
			eventuallyDeleting(ctx, jobs[2])
		})

		It("with operator All and targets ignores the other replicatedJobs", func() {
			js := create(trainer().SuccessPolicy(jobset.OperatorAll, "workers").Obj())
			jobs := eventuallyJobs(ctx, js, "0", allJobs...)
			completeJob(ctx, &jobs[1])
			completeJob(ctx, &jobs[2])
			eventuallyCondition(ctx, js, jobset.JobSetCompleted, metav1.ConditionTrue)
		})
	})

	Context("failure policy", func() {
		It("without a failure policy fails the JobSet on the first failed Job", func() {
			js := create(trainer().Obj())
			jobs := eventuallyJobs(ctx, js, "0", allJobs...)
			failJob(ctx, &jobs[1], "BackoffLimitExceeded", "Job has reached the specified backoff limit")
			c := eventuallyCondition(ctx, js, jobset.JobSetFailed, metav1.ConditionTrue)
			Expect(c.Reason).To(Equal(jobset.ReasonFailedJobs))
			Expect(c.Message).To(ContainSubstring("trainer-workers-0"))
			Expect(fetch(ctx, js).Status.TerminalState).To(Equal("Failed"))
			eventuallyDeleting(ctx, jobs[0], jobs[2])
		})

		It("RestartJobSet recreates every Job and counts toward maxRestarts, until the budget is spent", func() {
			js := create(trainer().MaxRestarts(1).Obj())
			jobs := eventuallyJobs(ctx, js, "0", allJobs...)

			By("failing a worker: restart attempt 1")
			failJob(ctx, &jobs[1], "BackoffLimitExceeded", "backoff")
			eventuallyDeleting(ctx, jobs...)
			got := fetch(ctx, js)
			Expect(got.Status.Restarts).To(BeEquivalentTo(1))
			Expect(got.Status.RestartsCountTowardsMax).To(BeEquivalentTo(1))
			eventuallyCondition(ctx, js, jobset.JobSetRestarting, metav1.ConditionTrue)
			for i := range jobs {
				finishDeletion(ctx, &jobs[i])
			}
			jobs = eventuallyJobs(ctx, js, "1", allJobs...)
			c := eventuallyCondition(ctx, js, jobset.JobSetRestarting, metav1.ConditionFalse)
			Expect(c.Reason).To(Equal(jobset.ReasonJobsRecreated))
			Eventually(func() []string { return eventReasons(ctx, js) }).Should(ContainElement("Restarting"))

			By("failing again with the budget spent")
			failJob(ctx, &jobs[0], "BackoffLimitExceeded", "backoff")
			c = eventuallyCondition(ctx, js, jobset.JobSetFailed, metav1.ConditionTrue)
			Expect(c.Reason).To(Equal(jobset.ReasonReachedMaxRestarts))
			Expect(fetch(ctx, js).Status.Restarts).To(BeEquivalentTo(1))
		})

		It("RestartJobSetAndIgnoreMaxRestarts restarts without using the budget", func() {
			js := create(trainer().MaxRestarts(0).FailurePolicyRule(jobset.FailurePolicyRule{
				Name: "preempted", Action: jobset.RestartJobSetAndIgnoreMaxRestarts,
				OnJobFailureMessagePatterns: []string{"preempted"},
			}).Obj())
			jobs := eventuallyJobs(ctx, js, "0", allJobs...)
			failJob(ctx, &jobs[2], "PodFailurePolicy", "Pod was preempted")
			eventuallyDeleting(ctx, jobs...)
			got := fetch(ctx, js)
			Expect(got.Status.Restarts).To(BeEquivalentTo(1))
			Expect(got.Status.RestartsCountTowardsMax).To(BeEquivalentTo(0))
		})

		It("FailJobSet on PodFailurePolicy fails at once, with budget left", func() {
			js := create(trainer().MaxRestarts(5).FailurePolicyRule(jobset.FailurePolicyRule{
				Name: "fatal", Action: jobset.FailJobSet, OnJobFailureReasons: []string{"PodFailurePolicy"},
			}).Obj())
			jobs := eventuallyJobs(ctx, js, "0", allJobs...)
			failJob(ctx, &jobs[1], "PodFailurePolicy", "Container worker exited with code 42")
			c := eventuallyCondition(ctx, js, jobset.JobSetFailed, metav1.ConditionTrue)
			Expect(c.Reason).To(Equal(jobset.ReasonFailJobSetAction))
			Expect(c.Message).To(Equal(jobset.WithFirstFailedJob(jobset.MessageFailJobSetAction, jobs[1].Name)))
			Eventually(func() []string { return eventNotes(ctx, js) }).Should(ContainElement(ContainSubstring(`"fatal"`)), "the rule's name, in the event")
			Expect(fetch(ctx, js).Status.Restarts).To(BeZero())
		})

		It("targetReplicatedJobs limits a rule to its replicatedJobs", func() {
			js := create(trainer().MaxRestarts(5).FailurePolicyRule(jobset.FailurePolicyRule{
				Name: "driverFatal", Action: jobset.FailJobSet, TargetReplicatedJobs: []string{"driver"},
			}).Obj())
			jobs := eventuallyJobs(ctx, js, "0", allJobs...)
			failJob(ctx, &jobs[1], "BackoffLimitExceeded", "backoff") // a worker
			eventuallyDeleting(ctx, jobs...)
			Expect(fetch(ctx, js).Status.TerminalState).To(BeEmpty())
			Expect(fetch(ctx, js).Status.Restarts).To(BeEquivalentTo(1))
		})

		DescribeTable("matches each Job failure reason",
			func(reason string) {
				js := create(trainer().MaxRestarts(5).FailurePolicyRule(jobset.FailurePolicyRule{
					Name: "onReason", Action: jobset.FailJobSet, OnJobFailureReasons: []string{reason},
				}).Obj())
				jobs := eventuallyJobs(ctx, js, "0", allJobs...)
				failJob(ctx, &jobs[0], reason, "failed for the test")
				c := eventuallyCondition(ctx, js, jobset.JobSetFailed, metav1.ConditionTrue)
				Expect(c.Reason).To(Equal(jobset.ReasonFailJobSetAction))
			},
			Entry("BackoffLimitExceeded", "BackoffLimitExceeded"),
			Entry("DeadlineExceeded", "DeadlineExceeded"),
			Entry("PodFailurePolicy", "PodFailurePolicy"),
			Entry("MaxFailedIndexesExceeded", "MaxFailedIndexesExceeded"),
			Entry("FailedIndexes", "FailedIndexes"),
		)
	})

	Context("restart strategies", func() {
		restartOnce := func(strategy jobset.JobSetRestartStrategy) (*jobset.JobSet, []batchv1.Job) {
			js := create(trainer().RestartStrategy(strategy).MaxRestarts(3).Obj())
			jobs := eventuallyJobs(ctx, js, "0", allJobs...)
			failJob(ctx, &jobs[0], "BackoffLimitExceeded", "backoff")
			eventuallyDeleting(ctx, jobs...)
			return js, jobs
		}

		It("Recreate replaces each Job as soon as its own predecessor is gone", func() {
			js, old := restartOnce(jobset.Recreate)
			finishDeletion(ctx, &old[1]) // only trainer-workers-0 is gone
			Eventually(func(g Gomega) {
				var fresh []string
				for _, job := range childJobs(ctx, js) {
					if job.Labels[jobset.RestartsKey] == "1" {
						fresh = append(fresh, job.Name)
					}
				}
				g.Expect(fresh).To(Equal([]string{"trainer-workers-0"}))
			}).Should(Succeed())
			finishDeletion(ctx, &old[0])
			finishDeletion(ctx, &old[2])
			eventuallyJobs(ctx, js, "1", allJobs...)
		})

		It("BlockingRecreate creates no Job until every old Job is gone", func() {
			js, old := restartOnce(jobset.BlockingRecreate)
			finishDeletion(ctx, &old[0])
			finishDeletion(ctx, &old[1])
			Consistently(func() []string {
				var fresh []string
				for _, job := range childJobs(ctx, js) {
					if job.Labels[jobset.RestartsKey] == "1" {
						fresh = append(fresh, job.Name)
					}
				}
				return fresh
			}).Should(BeEmpty())
			finishDeletion(ctx, &old[2])
			eventuallyJobs(ctx, js, "1", allJobs...)
		})
	})

	Context("suspend", func() {
		It("creates suspended Jobs, then resumes them with the scheduling directives a queue wrote meanwhile", func() {
			js := create(trainer().Suspend(true).Obj())
			jobs := eventuallyJobs(ctx, js, "0", allJobs...)
			for _, job := range jobs {
				Expect(*job.Spec.Suspend).To(BeTrue(), job.Name)
			}
			c := eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionTrue)
			Expect(c.Reason).To(Equal(jobset.ReasonSuspended))

			By("admitting it as Kueue does: node selector and labels, then suspend=false")
			Eventually(func(g Gomega) {
				fresh := fetch(ctx, js)
				for i := range fresh.Spec.ReplicatedJobs {
					tmpl := &fresh.Spec.ReplicatedJobs[i].Template.Spec.Template
					tmpl.Spec.NodeSelector = map[string]string{"pool": "a100"}
					tmpl.Labels = map[string]string{"kueue.x-k8s.io/podset": fresh.Spec.ReplicatedJobs[i].Name}
				}
				fresh.Spec.Suspend = ptr.To(false)
				g.Expect(k8sClient.Update(ctx, fresh)).To(Succeed())
			}).Should(Succeed())

			Eventually(func(g Gomega) {
				for _, job := range childJobs(ctx, js) {
					g.Expect(*job.Spec.Suspend).To(BeFalse(), job.Name)
					g.Expect(job.Spec.Template.Spec.NodeSelector).To(HaveKeyWithValue("pool", "a100"), job.Name)
					g.Expect(job.Spec.Template.Labels).To(HaveKey("kueue.x-k8s.io/podset"), job.Name)
				}
			}).Should(Succeed())
			c = eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionFalse)
			Expect(c.Reason).To(Equal(jobset.ReasonResumed))
		})

		It("suspends running Jobs when the JobSet is suspended", func() {
			js := create(trainer().Obj())
			eventuallyJobs(ctx, js, "0", allJobs...)
			Eventually(func() error {
				fresh := fetch(ctx, js)
				fresh.Spec.Suspend = ptr.To(true)
				return k8sClient.Update(ctx, fresh)
			}).Should(Succeed())
			Eventually(func(g Gomega) {
				for _, job := range childJobs(ctx, js) {
					g.Expect(*job.Spec.Suspend).To(BeTrue(), job.Name)
				}
			}).Should(Succeed())
			eventuallyCondition(ctx, js, jobset.JobSetSuspended, metav1.ConditionTrue)
		})
	})

	Context("deletion", func() {
		It("leaves live children to the garbage collector, and a same-name JobSet does not adopt them", func() {
			old := create(trainer().Obj())
			oldJobs := eventuallyJobs(ctx, old, "0", allJobs...)
			Expect(k8sClient.Delete(ctx, old)).To(Succeed())
			Eventually(func() error {
				return k8sClient.Get(ctx, client.ObjectKeyFromObject(old), &jobset.JobSet{})
			}).ShouldNot(Succeed())

			By("recreating the JobSet under the same name while the old Jobs remain")
			fresh := create(trainer().Obj())
			Consistently(func() []batchv1.Job { return childJobs(ctx, fresh) }).Should(BeEmpty())
			for _, job := range oldJobs {
				Expect(metav1.GetControllerOf(&job).UID).To(Equal(old.UID))
			}

			By("garbage-collecting the old Jobs")
			for i := range oldJobs {
				Expect(k8sClient.Delete(ctx, &oldJobs[i], client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
			}
			jobs := eventuallyJobs(ctx, fresh, "0", allJobs...)
			Expect(jobs[0].Labels).To(HaveKeyWithValue(jobset.JobSetUIDKey, string(fresh.UID)))
		})
	})
})

var _ = Describe("ttlSecondsAfterFinished", func() {
	It("deletes a finished JobSet once its TTL is over, and not before", func() {
		js := wrappers.MakeJobSet("ttl", ns).ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		js.Spec.TTLSecondsAfterFinished = ptr.To[int32](3)
		js = create(js)
		jobs := eventuallyJobs(ctx, js, "0", "ttl-workers-0")
		completeJob(ctx, &jobs[0])
		eventuallyCondition(ctx, js, jobset.JobSetCompleted, metav1.ConditionTrue)
		Consistently(func() *metav1.Time { return fetch(ctx, js).DeletionTimestamp }, "1s").
			Should(BeNil(), "the JobSet stays while its TTL runs")
		// Foreground deletion: envtest runs no garbage collector, so the
		// JobSet stays, marked for deletion.
		Eventually(func() bool {
			var got jobset.JobSet
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(js), &got)
			return apierrors.IsNotFound(err) || got.DeletionTimestamp != nil
		}).Should(BeTrue(), "deleted once the TTL is over (the reconcile requeued for it)")
	})
})

var _ = Describe("Startup order", func() {
	It("starts replicatedJobs in order with startupPolicy InOrder, and reports it", func() {
		js := wrappers.MakeJobSet("ordered", ns).
			ReplicatedJob(wrappers.MakeReplicatedJob("driver").Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		js.Spec.StartupPolicy = &jobset.StartupPolicy{StartupPolicyOrder: jobset.InOrder}
		js = create(js)

		driver := eventuallyJobs(ctx, js, "0", "ordered-driver-0")
		eventuallyCondition(ctx, js, jobset.JobSetStartupPolicyInProgress, metav1.ConditionTrue)
		Consistently(func() []batchv1.Job { return childJobs(ctx, js) }, "1s").Should(HaveLen(1), "workers wait for the driver")

		markJobReady(ctx, &driver[0])
		workers := eventuallyJobs(ctx, js, "0", "ordered-driver-0", "ordered-workers-0")
		markJobReady(ctx, &workers[1])
		c := eventuallyCondition(ctx, js, jobset.JobSetStartupPolicyCompleted, metav1.ConditionTrue)
		Expect(c.Reason).To(Equal(jobset.ReasonStartupPolicyCompleted))
		eventuallyCondition(ctx, js, jobset.JobSetStartupPolicyInProgress, metav1.ConditionFalse)
	})

	It("creates a replicatedJob once the one it dependsOn completed", func() {
		js := wrappers.MakeJobSet("deps", ns).
			ReplicatedJob(wrappers.MakeReplicatedJob("init").Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		js.Spec.ReplicatedJobs[1].DependsOn = []jobset.DependsOn{{Name: "init", Status: jobset.DependencyComplete}}
		js = create(js)

		initJob := eventuallyJobs(ctx, js, "0", "deps-init-0")
		markJobReady(ctx, &initJob[0])
		Consistently(func() []batchv1.Job { return childJobs(ctx, js) }, "1s").Should(HaveLen(1), "ready is not complete")
		completeJob(ctx, &initJob[0])
		eventuallyJobs(ctx, js, "0", "deps-init-0", "deps-workers-0")
	})
})

var _ = Describe("Community JobSet fields", func() {
	It("leaves a JobSet managed by another controller alone", func() {
		js := wrappers.MakeJobSet("elsewhere", ns).ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		js.Spec.ManagedBy = ptr.To("kueue.x-k8s.io/multikueue")
		js = create(js)
		Consistently(func(g Gomega) {
			g.Expect(childJobs(ctx, js)).To(BeEmpty())
			g.Expect(fetch(ctx, js).Status.Conditions).To(BeEmpty())
		}, "2s").Should(Succeed())
	})

	It("puts the coordinator's stable endpoint on every Job and Pod template", func() {
		js := wrappers.MakeJobSet("coord", ns).
			ReplicatedJob(wrappers.MakeReplicatedJob("driver").Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Obj()).Obj()
		js.Spec.Coordinator = &jobset.Coordinator{ReplicatedJob: "driver"}
		js = create(js)
		jobs := eventuallyJobs(ctx, js, "0", "coord-driver-0", "coord-workers-0", "coord-workers-1")
		for _, job := range jobs {
			for _, m := range []map[string]string{job.Labels, job.Annotations, job.Spec.Template.Labels, job.Spec.Template.Annotations} {
				Expect(m).To(HaveKeyWithValue(jobset.CoordinatorKey, "coord-driver-0-0.coord"), "Job %s", job.Name)
			}
		}
	})
})

// The community JobSet examples of docs/examples behave as community JobSet
// documents them.
var _ = Describe("Community JobSet examples", func() {
	example := func(file string) *jobset.JobSet {
		root, err := framework.RepoRoot()
		Expect(err).NotTo(HaveOccurred())
		js := &jobset.JobSet{}
		Expect(manifest.ReadObject(filepath.Join(root, "docs", "examples", file), js)).To(Succeed())
		js.Namespace = ns
		return create(js)
	}

	It("PyTorch-style: Pods get stable DNS hostnames under the JobSet's headless Service", func() {
		js := example("community-pytorch.yaml")
		jobs := eventuallyJobs(ctx, js, "0", "pytorch-workers-0")
		Expect(jobs[0].Spec.Template.Spec.Subdomain).To(Equal("pytorch"))
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pytorch"}, &corev1.Service{})
		}).Should(Succeed())
	})

	It("success policy Any: the driver's completion completes the JobSet and stops the workers", func() {
		js := example("community-success-policy.yaml")
		jobs := eventuallyJobs(ctx, js, "0", "success-policy-driver-0", "success-policy-workers-0", "success-policy-workers-1")
		completeJob(ctx, &jobs[0])
		eventuallyCondition(ctx, js, jobset.JobSetCompleted, metav1.ConditionTrue)
		eventuallyDeleting(ctx, jobs[1], jobs[2])
	})

	It("failure policy rules: a failed leader fails the JobSet at once", func() {
		js := example("community-failure-policy.yaml")
		jobs := eventuallyJobs(ctx, js, "0", "failure-policy-leader-0", "failure-policy-workers-0", "failure-policy-workers-1")
		failJob(ctx, &jobs[0], "BackoffLimitExceeded", "Job has reached the specified backoff limit")
		c := eventuallyCondition(ctx, js, jobset.JobSetFailed, metav1.ConditionTrue)
		Expect(c.Reason).To(Equal(jobset.ReasonFailJobSetAction))
	})

	It("failure policy rules: an evicted worker restarts the JobSet without using the budget", func() {
		js := example("community-failure-policy.yaml")
		jobs := eventuallyJobs(ctx, js, "0", "failure-policy-leader-0", "failure-policy-workers-0", "failure-policy-workers-1")
		failJob(ctx, &jobs[1], "PodFailurePolicy", "Pod failure policy FailJob matched the DisruptionTarget condition")
		Eventually(func(g Gomega) {
			got := fetch(ctx, js)
			g.Expect(got.Status.Restarts).To(Equal(int32(1)))
			g.Expect(got.Status.RestartsCountTowardsMax).To(BeZero())
		}).Should(Succeed())
	})
})

var _ = Describe("volumeClaimPolicies", func() {
	// shared: an init Job that fills the dataset and workers that read it
	// and write checkpoints, kept after the JobSet.
	shared := func() *jobset.JobSet {
		return wrappers.MakeJobSet("shared", ns).
			VolumeClaimPolicy("", "dataset").
			VolumeClaimPolicy(jobset.RetentionPolicyRetain, "checkpoints").
			ReplicatedJob(wrappers.MakeReplicatedJob("init").MountVolumes("dataset").Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).MountVolumes("dataset", "checkpoints").Obj()).Obj()
	}
	claim := func(name string) *corev1.PersistentVolumeClaim {
		var c corev1.PersistentVolumeClaim
		Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &c) }).Should(Succeed())
		return &c
	}
	claimsOf := func(job batchv1.Job) map[string]string {
		out := map[string]string{}
		for _, v := range job.Spec.Template.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				out[v.Name] = v.PersistentVolumeClaim.ClaimName
			}
		}
		return out
	}

	It("creates each shared claim and mounts it in the Pods that use it; the JobSet owns the claims it deletes, not those it retains", func() {
		js := create(shared())
		dataset, checkpoints := claim("dataset-shared"), claim("checkpoints-shared")
		Expect(metav1.IsControlledBy(dataset, js)).To(BeTrue(), "whenDeleted Delete (default): the garbage collector deletes it with the JobSet")
		Expect(checkpoints.OwnerReferences).To(BeEmpty(), "whenDeleted Retain: nothing deletes it")
		Expect(checkpoints.Labels).To(HaveKeyWithValue(jobset.JobSetNameKey, "shared"))
		Expect(checkpoints.Spec.Resources.Requests.Storage().String()).To(Equal("1Gi"))

		jobs := eventuallyJobs(ctx, js, "0", "shared-init-0", "shared-workers-0", "shared-workers-1")
		Expect(claimsOf(jobs[0])).To(Equal(map[string]string{"dataset": "dataset-shared"}))
		for _, job := range jobs[1:] {
			Expect(claimsOf(job)).To(Equal(map[string]string{"dataset": "dataset-shared", "checkpoints": "checkpoints-shared"}))
		}
	})

	It("mounts again the claim a retained policy kept from an earlier JobSet of the same name", func() {
		first := create(shared())
		kept := claim("checkpoints-shared")
		oldJobs := eventuallyJobs(ctx, first, "0", "shared-init-0", "shared-workers-0", "shared-workers-1")
		Expect(k8sClient.Delete(ctx, first)).To(Succeed())
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKeyFromObject(first), &jobset.JobSet{})
		}).ShouldNot(Succeed())
		// What the garbage collector does on a cluster (envtest runs none).
		for i := range oldJobs {
			Expect(k8sClient.Delete(ctx, &oldJobs[i], client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
		}

		second := create(shared())
		Expect(claim("checkpoints-shared").UID).To(Equal(kept.UID), "the same claim, data and all")
		jobs := eventuallyJobs(ctx, second, "0", "shared-init-0", "shared-workers-0", "shared-workers-1")
		Expect(claimsOf(jobs[1])).To(HaveKeyWithValue("checkpoints", "checkpoints-shared"))
	})
})
