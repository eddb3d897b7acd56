package command_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
	"github.com/fastjobset/jobset/plugin/command"
	"github.com/fastjobset/jobset/plugin/report"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// The specs play the controller and the agents: they write the JobSet's
// status, its Pods (with the agents' epoch writes, as the agent's field
// manager) and the controller's events, then run the plugin as a user
// would, with a kubeconfig file and a namespace flag.
var _ = Describe("kubectl jobset", func() {
	var (
		ctx        context.Context
		ns         string
		kubeconfig string
		base       time.Time
	)

	BeforeEach(func() {
		ctx = context.Background()
		ns = framework.TestNamespace(ctx, env.Client, "plugin")
		config, err := env.Kubeconfig("plugin-user", "system:masters")
		Expect(err).NotTo(HaveOccurred())
		kubeconfig = filepath.Join(GinkgoT().TempDir(), "kubeconfig")
		Expect(os.WriteFile(kubeconfig, config, 0o600)).To(Succeed())
		// Whole seconds: the API server dates managedFields to the second.
		base = time.Now().Add(-10 * time.Minute).Truncate(time.Second).UTC()
	})

	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := command.Run(ctx, append(args, "--kubeconfig", kubeconfig, "-n", ns), &out)
		return out.String(), err
	}

	// createJobSet creates an InPlaceRestart JobSet of one Job of four
	// Pods, and sets its status as the controller would have.
	createJobSet := func(name string, status jobset.JobSetStatus) *jobset.JobSet {
		js := wrappers.MakeJobSet(name, ns).RestartStrategy(jobset.InPlaceRestart).MaxRestarts(5).
			ReplicatedJob(wrappers.MakeReplicatedJob("w").Pods(4).InPlaceReady().Obj()).Obj()
		Expect(env.Client.Create(ctx, js)).To(Succeed())
		js.Status = status
		Expect(env.Client.Status().Update(ctx, js)).To(Succeed())
		return js
	}

	// createMember creates a running Pod of the JobSet's Job at a
	// completion index, held by the group-member finalizer, whose agent
	// then writes epoch as the agent does.
	createMember := func(js *jobset.JobSet, index, epoch string, status func(*corev1.PodStatus)) *corev1.Pod {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: js.Name + "-w-0-" + index, Namespace: ns,
				Labels: map[string]string{jobset.JobSetNameKey: js.Name, jobset.JobSetUIDKey: string(js.UID), jobset.RestartsKey: "0",
					jobset.ReplicatedJobNameKey: "w", batchv1.JobNameLabel: js.Name + "-w-0"},
				Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: index},
				Finalizers:  []string{jobset.GroupMemberFinalizer},
			},
			Spec: *js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.DeepCopy(),
		}
		pod.Spec.NodeName = "node-" + index
		Expect(env.Client.Create(ctx, pod)).To(Succeed())
		DeferCleanup(func() {
			// Without a controller to release it, the finalizer would keep
			// the Pod after the test.
			Expect(client.IgnoreNotFound(env.Client.Patch(ctx, pod, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`))))).To(Succeed())
		})
		if epoch != "" {
			patch := client.MergeFrom(pod.DeepCopy())
			pod.Annotations[jobset.EpochKey] = epoch
			Expect(env.Client.Patch(ctx, pod, patch, client.FieldOwner("jobset-agent"))).To(Succeed())
		}
		pod.Status.Phase = corev1.PodRunning
		pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: pod.Spec.InitContainers[0].Name, Image: wrappers.AgentImage,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(base)}}}}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", Image: pod.Spec.Containers[0].Image,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(base)}}}}
		if status != nil {
			status(&pod.Status)
		}
		Expect(env.Client.Status().Update(ctx, pod)).To(Succeed())
		return pod
	}

	// recordEvent writes an event of the controller's on the JobSet.
	recordEvent := func(js *jobset.JobSet, eventType, reason, note string, at time.Time, related *corev1.Pod) {
		e := &eventsv1.Event{
			ObjectMeta:          metav1.ObjectMeta{GenerateName: js.Name + "-", Namespace: ns},
			EventTime:           metav1.NewMicroTime(at),
			ReportingController: "jobset-controller",
			ReportingInstance:   "jobset-controller-0",
			Action:              "RestartInPlace",
			Reason:              reason,
			Type:                eventType,
			Note:                note,
			Regarding:           corev1.ObjectReference{APIVersion: jobset.GroupVersion.String(), Kind: "JobSet", Namespace: ns, Name: js.Name, UID: js.UID},
		}
		if related != nil {
			e.Related = &corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: related.Name, UID: related.UID}
		}
		Expect(env.Client.Create(ctx, e)).To(Succeed())
	}

	condition := func(t jobset.JobSetConditionType, status metav1.ConditionStatus, reason, message string, at time.Time) metav1.Condition {
		return metav1.Condition{Type: string(t), Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(at)}
	}

	Context("a group restart in progress: one member joined, one's agent crash-looping, one lost with its node, one Pod missing", func() {
		var js *jobset.JobSet

		BeforeEach(func() {
			trigger := "Pod restarting-w-0-1: container worker restarted after exiting with code 1"
			js = createJobSet("restarting", jobset.JobSetStatus{
				SyncedEpoch: ptr.To[int32](2), DeprecatedEpoch: ptr.To[int32](2), InPlaceRestarts: 2, RestartsCountTowardsMax: 1,
				Conditions: []metav1.Condition{
					condition(jobset.JobSetInPlaceRestarting, metav1.ConditionTrue, jobset.ReasonInPlaceRestartStarted,
						inplace.RestartStartedNote(2, trigger, 2), base.Add(5*time.Minute)),
					condition(jobset.JobSetGatherStalled, metav1.ConditionTrue, jobset.ReasonPodsNotJoined,
						"the Pods have been gathering at epoch 3 for 5m0s; 1 of 2 have not joined", base.Add(10*time.Minute)),
				},
			})
			createMember(js, "0", "3", nil)
			failing := createMember(js, "1", "2", func(s *corev1.PodStatus) {
				s.InitContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
				s.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 1, StartedAt: metav1.NewTime(base), FinishedAt: metav1.NewTime(base.Add(5*time.Minute - 2*time.Second))}}
			})
			lost := createMember(js, "2", "2", func(s *corev1.PodStatus) {
				s.Phase = corev1.PodFailed
				s.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: jobset.PodReasonNodeLost,
					Message: "node node-2 has not renewed its Lease"}}
			})
			recordEvent(js, corev1.EventTypeWarning, jobset.ReasonInPlaceRestartStarted,
				inplace.RestartStartedNote(1, "Pod restarting-w-0-3 failed", 1), base, nil)
			recordEvent(js, corev1.EventTypeNormal, jobset.ReasonInPlaceRestartCompleted,
				inplace.RestartCompletedInNote(1, 3*time.Second, 2), base.Add(3*time.Second), nil)
			recordEvent(js, corev1.EventTypeWarning, jobset.ReasonInPlaceRestartStarted, inplace.RestartStartedNote(2, trigger, 2), base.Add(5*time.Minute), failing)
			recordEvent(js, corev1.EventTypeWarning, "NodeLost", "node node-2 lost: marked its member Failed", base.Add(5*time.Minute+time.Second), lost)
		})

		It("shows the epochs, who joined, who is missing and why, the stall and the budget", func() {
			out, err := run("status", js.Name)
			Expect(err).NotTo(HaveOccurred())
			Expect(out).To(ContainSubstring("Epochs:                  synced 2, deprecated 2"))
			Expect(out).To(ContainSubstring("group restart 2 in progress: the Pods gather at epoch 3"))
			Expect(out).To(ContainSubstring("Restart budget:          3 of 5 used (1 full, 0 of one Job, 2 in place): 2 left"))
			Expect(out).To(ContainSubstring("wait for the group to gather at epoch 3: 2 Pods have not joined or have not stopped (restarting-w-0-1, restarting-w-0-2); 2 expected Pods do not exist"))
			Expect(out).To(MatchRegexp(`GatherStalled\s+PodsNotJoined\s+\S+\s+the Pods have been gathering at epoch 3`))
			Expect(out).To(MatchRegexp(`restarting-w-0-0\s+restarting-w-0/0\s+node-0\s+3\s+-\s+Joined`))
			Expect(out).To(MatchRegexp(`restarting-w-0-1\s+restarting-w-0/1\s+node-1\s+2\s+-\s+Missing\s+its agent is waiting: CrashLoopBackOff`))
			Expect(out).To(MatchRegexp(`restarting-w-0-2\s+restarting-w-0/2\s+node-2\s+2\s+-\s+NodeLost\s+node node-2 lost: node node-2 has not renewed its Lease`))

			out, err = run("status", js.Name, "-o", "json")
			Expect(err).NotTo(HaveOccurred())
			var status report.Status
			Expect(json.Unmarshal([]byte(out), &status)).To(Succeed())
			Expect(status.GatheringAt).To(Equal(int32(3)))
			Expect(status.MissingPods).To(Equal(int32(2)))
			Expect(status.Budget).To(Equal(report.Budget{MaxRestarts: 5, Used: 3, FullRestarts: 1, InPlaceRestarts: 2, Left: 2}))
			var states []string
			for _, m := range status.Members {
				states = append(states, m.State)
			}
			Expect(states).To(Equal([]string{report.MemberJoined, report.MemberMissing, report.MemberLost}))
		})

		It("shows the last restarts phase by phase", func() {
			out, err := run("timeline", js.Name, "-o", "json")
			Expect(err).NotTo(HaveOccurred())
			var restarts []report.Restart
			Expect(json.Unmarshal([]byte(out), &restarts)).To(Succeed())
			Expect(restarts).To(HaveLen(2))
			Expect(restarts[0].Number).To(Equal(int32(1)))
			Expect(restarts[0].Took).To(Equal(3 * time.Second))
			Expect(restarts[0].InProgress).To(BeFalse())
			last := restarts[1]
			Expect(last.InProgress).To(BeTrue())
			var phases []string
			for _, p := range last.Phases {
				phases = append(phases, p.Phase+" "+p.Pod)
			}
			Expect(phases).To(Equal([]string{"Failure restarting-w-0-1", "Deprecated ", "Event restarting-w-0-2", "Joined restarting-w-0-0"}))
			Expect(last.Phases[0].Time).To(Equal(base.Add(5*time.Minute - 2*time.Second)))
			Expect(last.Phases[1].Time).To(Equal(base.Add(5 * time.Minute)))

			out, err = run("timeline", js.Name, "--restarts", "1")
			Expect(err).NotTo(HaveOccurred())
			Expect(out).NotTo(MatchRegexp(`(?m)^1\s`))
			Expect(out).To(MatchRegexp(`2\s+\S+\s+-2\.000s\s+node\s+Failure\s+restarting-w-0-1\s+container worker exited with code 1`))
			Expect(out).To(MatchRegexp(`2\s+\S+\s+\+0\.000s\s+controller\s+Deprecated\s+-\s+epoch 2 and below restart in place: Pod restarting-w-0-1`))
			Expect(out).To(MatchRegexp(`2\s+\S+\s+\+1\.000s\s+controller\s+Event\s+restarting-w-0-2\s+NodeLost: node node-2 lost`))
			Expect(out).To(MatchRegexp(`2\s+\S+\s+\S+\s+apiserver\s+Joined\s+restarting-w-0-0\s+joined epoch 3`))
			Expect(out).To(MatchRegexp(`2\s+-\s+-\s+-\s+InProgress`))
		})
	})

	Context("a completed restart whose events expired", func() {
		var js *jobset.JobSet

		BeforeEach(func() {
			js = createJobSet("synced", jobset.JobSetStatus{
				SyncedEpoch: ptr.To[int32](3), DeprecatedEpoch: ptr.To[int32](2), InPlaceRestarts: 2,
				Conditions: []metav1.Condition{condition(jobset.JobSetInPlaceRestarting, metav1.ConditionFalse, jobset.ReasonInPlaceRestartCompleted,
					inplace.WithTiers(inplace.RestartCompletedInNote(2, 3500*time.Millisecond, 3), inplace.Tiers{Process: 3, Pod: 1}), base)},
			})
			for _, index := range []string{"0", "1", "2", "3"} {
				pod := createMember(js, index, "3", nil)
				restarts := "process=1,pod=0,epoch=3,tier=process"
				if index == "0" {
					restarts = "process=0,pod=1,epoch=3,tier=pod"
				}
				patch := client.MergeFrom(pod.DeepCopy())
				pod.Annotations[agentspec.WorkerRestartsAnnotation] = restarts
				Expect(env.Client.Patch(ctx, pod, patch, client.FieldOwner("jobset-agent"))).To(Succeed())
			}
		})

		It("shows the group in sync with every member joined", func() {
			out, err := run("status", js.Name)
			Expect(err).NotTo(HaveOccurred())
			Expect(out).To(ContainSubstring("in sync at epoch 3"))
			Expect(out).To(ContainSubstring("Restart budget:          2 of 5 used (0 full, 0 of one Job, 2 in place): 3 left"))
			Expect(out).To(ContainSubstring("Controller's next step:  nothing: the group runs"))
			Expect(out).NotTo(ContainSubstring("Missing"))
			Expect(out).To(MatchRegexp(`synced-w-0-3\s+synced-w-0/3\s+node-3\s+3\s+1 process, 0 pod\s+Joined`))
			Expect(out).To(MatchRegexp(`synced-w-0-0\s+synced-w-0/0\s+node-0\s+3\s+0 process, 1 pod\s+Joined`))
		})

		It("reads the last restart's sync from the JobSet's condition, and every member's join", func() {
			out, err := run("timeline", js.Name, "-o", "json")
			Expect(err).NotTo(HaveOccurred())
			var restarts []report.Restart
			Expect(json.Unmarshal([]byte(out), &restarts)).To(Succeed())
			Expect(restarts).To(HaveLen(1))
			Expect(restarts[0].Number).To(Equal(int32(2)))
			Expect(restarts[0].Synced).To(Equal(int32(3)))
			Expect(restarts[0].Took).To(Equal(3500 * time.Millisecond))
			var joined []string
			for _, p := range restarts[0].Phases {
				if p.Phase == report.PhaseJoined {
					joined = append(joined, p.Pod)
				}
			}
			Expect(joined).To(ConsistOf("synced-w-0-0", "synced-w-0-1", "synced-w-0-2", "synced-w-0-3"))
			Expect(restarts[0].Back).To(Equal(&inplace.Tiers{Process: 3, Pod: 1}))

			out, err = run("timeline", js.Name)
			Expect(err).NotTo(HaveOccurred())
			Expect(out).To(ContainSubstring("3 by restarting the worker's process, 1 by restarting its containers, 0 replaced"))
			Expect(out).To(MatchRegexp(`Joined\s+synced-w-0-0\s+joined epoch 3 by restarting its containers`))
			Expect(out).To(MatchRegexp(`Joined\s+synced-w-0-1\s+joined epoch 3 by restarting the worker's process`))
		})
	})

	It("names what is wrong with its input", func() {
		_, err := run("status")
		Expect(err).To(MatchError(ContainSubstring("expected a subcommand (status or timeline) and a JobSet's name")))
		_, err = run("status", "absent")
		Expect(err).To(MatchError(ContainSubstring("reading JobSet " + ns + "/absent")))
		_, err = run("status", "absent", "-o", "yaml")
		Expect(err).To(MatchError(ContainSubstring(`--output "yaml": use table or json`)))
	})
})
