package jobsetcontroller

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	"github.com/fastjobset/jobset/api/jobset/keepoff"
	"github.com/fastjobset/jobset/api/jobset/placement"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

var cachedPodNow = time.Date(2026, 11, 24, 17, 6, 0, 0, time.UTC)

func at(seconds int) metav1.Time {
	return metav1.NewTime(cachedPodNow.Add(time.Duration(seconds) * time.Second))
}

// servedPod is a member Pod as the API server serves it: the agent
// injected, a worker with its command, env, volumes and resources, the
// Job controller's and the scheduler's marks, the kubelet's status, and
// the managedFields of every writer.
func servedPod(mutate ...func(*corev1.Pod)) *corev1.Pod {
	job := &batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: "worker", Image: "registry.example/trainer:v3", Command: []string{"python", "train.py"}, Args: []string{"--steps=1000"},
			Env: []corev1.EnvVar{{Name: "WORLD_SIZE", Value: "8"}, {Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}},
			Resources:    corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}},
			VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
		}},
		Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
	}}}
	sidecar.Inject(job, sidecar.Options{Image: "registry.example/jobset-agent:v1"})
	spec := job.Template.Spec
	spec.NodeName = "node-3"
	spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists}}
	spec.Affinity = &corev1.Affinity{
		NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"node-1"}}}}}},
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1}},
		},
		PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "zone"}}},
	}
	spec.NodeSelector = map[string]string{"zone": "a"}
	running := func(seconds int) corev1.ContainerState {
		return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(seconds)}}
	}
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "js-workers-0-1-abcde", Namespace: "team", UID: "uid-1", ResourceVersion: "4711", Generation: 1,
			CreationTimestamp: at(-60), GenerateName: "js-workers-0-1-",
			Labels: map[string]string{jobset.JobSetNameKey: "js", jobset.JobSetUIDKey: "js-uid", jobset.RestartsKey: "0",
				jobset.ReplicatedJobNameKey: "workers", batchv1.JobNameLabel: "js-workers-0", jobset.JobKey: "key",
				batchv1.JobCompletionIndexAnnotation: "1"},
			Annotations: map[string]string{jobset.EpochKey: "3", batchv1.JobCompletionIndexAnnotation: "1",
				agentspec.WorkerStoppedAnnotation: "2", FailuresInPlaceAnnotation: "2026-11-24T17:00:00Z"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "js-workers-0", UID: "job-uid", Controller: ptr.To(true)}},
			Finalizers:      []string{batchv1.JobTrackingFinalizer, jobset.GroupMemberFinalizer},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: ptr.To(at(-60)),
					FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{},"f:ownerReferences":{}},"f:spec":{"f:containers":{"k:{\"name\":\"worker\"}":{".":{},"f:command":{},"f:image":{}}}}}`)},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: ptr.To(at(5)), Subresource: "status",
					FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{},"f:containerStatuses":{},"f:initContainerStatuses":{},"f:podIP":{}}}`)},
				{Manager: "jobset-agent", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: ptr.To(at(3)),
					FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:` + agentspec.EpochAnnotation + `":{}}}}`)},
			},
		},
		Spec: spec,
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: "10.0.0.3", PodIP: "10.1.0.7", StartTime: ptr.To(at(-50)), QOSClass: corev1.PodQOSBurstable,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(2)}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: agentspec.ContainerName, State: running(1), Ready: true, Started: ptr.To(true),
				Image: "registry.example/jobset-agent:v1", ImageID: "sha256:aaaa", ContainerID: "containerd://1111", RestartCount: 2,
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error",
					Message: "a long termination message", StartedAt: at(-40), FinishedAt: at(0), ContainerID: "containerd://0000"}}}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "worker", State: running(2), Ready: true, Image: "registry.example/trainer:v3",
				ImageID: "sha256:bbbb", ContainerID: "containerd://2222"}},
		},
	}
	for _, m := range mutate {
		m(pod)
	}
	return pod
}

// The cache keeps what the decisions read, and drops the rest.
func TestCachedPod(t *testing.T) {
	served := servedPod()
	want := &corev1.Pod{
		TypeMeta: served.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: served.Name, Namespace: served.Namespace, UID: served.UID, ResourceVersion: served.ResourceVersion,
			CreationTimestamp: served.CreationTimestamp, Labels: served.Labels, Annotations: served.Annotations, Finalizers: served.Finalizers,
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: ptr.To(at(5)), Subresource: "status",
					FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:containerStatuses":{},"f:initContainerStatuses":{}}}`)},
				served.ManagedFields[2],
			},
		},
		Spec: corev1.PodSpec{
			NodeName: "node-3", NodeSelector: map[string]string{"zone": "a"},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: served.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution}},
			InitContainers: []corev1.Container{{Name: agentspec.ContainerName, Image: "registry.example/jobset-agent:v1",
				Env: served.Spec.InitContainers[0].Env, RestartPolicy: served.Spec.InitContainers[0].RestartPolicy,
				RestartPolicyRules: served.Spec.InitContainers[0].RestartPolicyRules}},
			Containers: []corev1.Container{{Name: "worker"}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, Conditions: served.Status.Conditions,
			InitContainerStatuses: []corev1.ContainerStatus{{Name: agentspec.ContainerName, State: served.Status.InitContainerStatuses[0].State, RestartCount: 2,
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, StartedAt: at(-40), FinishedAt: at(0)}}}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "worker", State: served.Status.ContainerStatuses[0].State}},
		},
	}
	deleting := func(p *corev1.Pod) {
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = ptr.To(at(9)), ptr.To[int64](0)
	}
	plainInit := func(p *corev1.Pod) {
		p.Spec.InitContainers = append([]corev1.Container{{Name: "fetch", Image: "busybox", Command: []string{"wget"},
			Env: []corev1.EnvVar{{Name: "URL", Value: "http://example"}}}}, p.Spec.InitContainers...)
	}
	cases := map[string]struct {
		pod, want *corev1.Pod
	}{
		"a running member": {pod: served, want: want},
		"being deleted: its deletion and grace kept": {pod: servedPod(deleting), want: func() *corev1.Pod {
			w := want.DeepCopy()
			deleting(w)
			return w
		}()},
		"an init container that is no agent: its name and restart policy only": {pod: servedPod(plainInit), want: func() *corev1.Pod {
			w := want.DeepCopy()
			w.Spec.InitContainers = append([]corev1.Container{{Name: "fetch"}}, w.Spec.InitContainers...)
			return w
		}()},
		"no required node affinity: no affinity": {pod: servedPod(func(p *corev1.Pod) {
			p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = nil
		}), want: func() *corev1.Pod {
			w := want.DeepCopy()
			w.Spec.Affinity = nil
			return w
		}()},
		"a Pod not yet scheduled": {
			pod:  &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{jobset.JobSetNameKey: "js"}}},
			want: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{jobset.JobSetNameKey: "js"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := cachedPod(tc.pod)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("cachedPod (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(got, cachedPod(got.DeepCopy())); diff != "" {
				t.Errorf("cachedPod applied again changed the Pod (-once +twice):\n%s", diff)
			}
		})
	}
}

// readings is what every decision reads of a Pod on its own, by the
// functions that read it.
func readings(pod *corev1.Pod) map[string]any {
	js := &jobset.JobSet{ObjectMeta: metav1.ObjectMeta{Name: "js", UID: "js-uid"}}
	exitCode := &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionFailJob,
		OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}}}}}
	condition := &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionFailJob,
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}}}}
	topologyKey, exclusive := placement.TopologyKey(pod)
	bound, wrapped := lostWorkerBound(pod)
	mayRun, left := lostWorkerMayRun(pod, cachedPodNow)
	failure := recordFailureInPlace(pod, cachedPodNow, repeatedFailures{Limit: 2, Window: time.Hour})
	return map[string]any{
		"ReadPod":             inplace.ReadPod(pod, true),
		"markOf":              markOf(pod, true),
		"Live":                inplace.Live(pod),
		"Stopping":            inplace.Stopping(pod),
		"ContainersStopped":   inplace.ContainersStopped(pod),
		"FailureSignal":       inplace.FailureSignal(pod),
		"EpochWritten":        inplace.EpochWritten(pod),
		"WhyNotJoined":        inplace.WhyNotJoined(pod),
		"Held":                inplace.Held(pod),
		"LeftWhileRunning":    inplace.LeftWhileRunning(pod),
		"OfCurrentAttempt":    inplace.OfCurrentAttempt(js, pod),
		"EndsJob on the code": inplace.EndsJob(pod, exitCode),
		"EndsJob on the mark": inplace.EndsJob(pod, condition),
		"ControllerMark":      jobset.ControllerMark(pod),
		"NodeToKeepOff":       jobset.NodeToKeepOff(pod),
		"agentFence":          fmt.Sprintf("%+v", agentFence(pod)),
		"lostWorkerBound":     fmt.Sprint(bound, wrapped),
		"lostWorkerMayRun":    fmt.Sprint(mayRun, left),
		"workerStopConfirmed": workerStopConfirmed(pod),
		"markedLost":          markedLost(pod),
		"going":               going(pod),
		"failure in place":    fmt.Sprint(failure.annotation, failure.replace, failure.why),
		"placement":           fmt.Sprint(topologyKey, exclusive, placement.IsLeader(pod), placement.Leads(pod), placement.FollowsLeader(pod, "zone", "a")),
		"keepoff.Nodes":       keepoff.Nodes(pod),
		"CreationTimestamp":   pod.CreationTimestamp,
		"UID":                 pod.UID,
	}
}

// Every decision reads the same of a Pod the cache keeps as of the Pod the
// API server served, in every state the decisions tell apart.
func TestCachedPodDecidesAlike(t *testing.T) {
	terminated := func(container string, code int32, seconds int) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			for _, statuses := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
				for i := range statuses {
					if statuses[i].Name == container {
						statuses[i].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
							ExitCode: code, Reason: "Error", Message: "boom", StartedAt: at(2), FinishedAt: at(seconds)}}
					}
				}
			}
		}
	}
	kubeletPostsAt := func(seconds int) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.ManagedFields[1].Time = ptr.To(at(seconds)) }
	}
	mark := func(c corev1.PodCondition) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			c.Status, c.LastTransitionTime = corev1.ConditionTrue, at(-5)
			p.Status.Conditions = append(p.Status.Conditions, c)
		}
	}
	env := func(name, value string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			i := sidecar.Index(p.Spec)
			p.Spec.InitContainers[i].Env = append(p.Spec.InitContainers[i].Env, corev1.EnvVar{Name: name, Value: value})
		}
	}
	cases := map[string][]func(*corev1.Pod){
		"running, joined":                             nil,
		"its worker failed after the agent's join":    {terminated("worker", 1, 4), kubeletPostsAt(5)},
		"its worker failed, posted before the join":   {terminated("worker", 1, 4), kubeletPostsAt(2)},
		"its worker exited with the Job's fatal code": {terminated("worker", 42, 4)},
		"restarting all containers": {func(p *corev1.Pod) {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: jobset.PodConditionAllContainersRestarting,
				Status: corev1.ConditionTrue, LastTransitionTime: at(4)})
		}, terminated("worker", 137, 4)},
		"its node lost, fenced agent, wrapped worker": {mark(corev1.PodCondition{Type: corev1.DisruptionTarget, Reason: jobset.PodReasonNodeLost}),
			env(agentspec.EnvFenceAfterSeconds, "10"), env(agentspec.EnvWrapperControl, "/run/wrapper/control")},
		"its node lost, the worker's stop confirmed": {mark(corev1.PodCondition{Type: corev1.DisruptionTarget, Reason: jobset.PodReasonNodeLost}),
			func(p *corev1.Pod) { p.Annotations[agentspec.WorkerStoppedAnnotation] = p.Annotations[jobset.EpochKey] }},
		"replaced off its node":      {mark(corev1.PodCondition{Type: jobset.PodConditionReplacedOffNode, Reason: ReasonRepeatedFailures})},
		"replaced with its Job":      {mark(corev1.PodCondition{Type: jobset.PodConditionReplacedOffNode, Reason: jobset.PodReasonReplacedWithItsJob})},
		"an agent that never fences": {env(agentspec.EnvFenceAfterSeconds, "0")},
		"being deleted with no grace left": {func(p *corev1.Pod) {
			p.DeletionTimestamp, p.DeletionGracePeriodSeconds = ptr.To(at(6)), ptr.To[int64](0)
		}},
		"succeeded while deleted, held": {func(p *corev1.Pod) {
			p.Status.Phase, p.DeletionTimestamp = corev1.PodSucceeded, ptr.To(at(6))
		}, terminated("worker", 0, 5)},
		"the agent waiting": {func(p *corev1.Pod) {
			p.Status.InitContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s"}}
		}},
		"the agent exits with a configuration error": {func(p *corev1.Pod) {
			p.Status.InitContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
			p.Status.InitContainerStatuses[0].LastTerminationState.Terminated.ExitCode = agentspec.ExitConfigError
		}},
		"community's agent": {func(p *corev1.Pod) {
			p.Spec.InitContainers[sidecar.Index(p.Spec)].Image = "registry.k8s.io/jobset/" + sidecar.CommunityAgentImage + ":v0.12.0"
			p.Status.InitContainerStatuses = nil
		}},
		"unscheduled": {func(p *corev1.Pod) {
			p.Spec.NodeName, p.Status = "", corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: "0/3 nodes are available"}}}
		}},
		"an exclusively placed follower": {func(p *corev1.Pod) { p.Annotations[jobset.ExclusiveKey] = "zone" }},
		"an exclusively placed leader": {func(p *corev1.Pod) {
			p.Annotations[jobset.ExclusiveKey] = "zone"
			p.Labels[batchv1.JobCompletionIndexAnnotation] = "0"
		}},
		"no agent": {func(p *corev1.Pod) { p.Spec.InitContainers, p.Status.InitContainerStatuses = nil, nil }},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			served := servedPod(mutate...)
			if diff := cmp.Diff(readings(served), readings(cachedPod(served.DeepCopy()))); diff != "" {
				t.Errorf("read of the cached Pod (-served +cached):\n%s", diff)
			}
		})
	}
}
