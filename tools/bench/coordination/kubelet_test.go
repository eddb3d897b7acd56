package main

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/fastjobset/jobset/agent"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

func benchPodSpec(t *testing.T) corev1.PodSpec {
	t.Helper()
	js := newJobSet("ns", podsPerJob, jobset.InPlaceRestart, false)
	return js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
}

// The stand-in's updates tell the controller what a kubelet's do: the
// worker's failure is a failure signal (the trigger); the steps of the
// restart are not, even posted long after the agent joined (nothing in
// them dates them against the join: the agent rejoining tells), and
// neither is an agent's exit with the restart code.
func TestStatusStepsAsTheControllerReadsThem(t *testing.T) {
	spec := benchPodSpec(t)
	agentName := spec.InitContainers[0].Name
	worker := spec.Containers[0].Name
	at := func(s int) metav1.Time { return metav1.NewTime(time.Unix(1_700_000_000+int64(s), 0)) }
	// pod is posted by the kubelet a minute after its agent joined.
	pod := func(s corev1.PodStatus) *corev1.Pod {
		return &corev1.Pod{Spec: spec, Status: s, ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "jobset-agent", Operation: metav1.ManagedFieldsOperationUpdate, Time: ptrTo(at(0)),
				FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:` + agentspec.EpochAnnotation + `":{}}}}`)},
			{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: ptrTo(at(60)),
				FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:containerStatuses":{},"f:initContainerStatuses":{}}}`)},
		}}}
	}

	running := runningStatus(&spec, at(0))
	if got := inplace.FailureSignal(pod(running)); got != "" {
		t.Errorf("running: failure signal %q, want none", got)
	}
	failed := exited(running, worker, 1, at(5))
	if got := inplace.FailureSignal(pod(failed)); got == "" {
		t.Error("the worker's exit with code 1: no failure signal")
	}
	restarting := removed(failed, at(5))
	for _, c := range append(restarting.InitContainerStatuses, restarting.ContainerStatuses...) {
		if c.RestartCount != 1 || c.State.Waiting == nil || c.LastTerminationState.Terminated == nil {
			t.Errorf("removed: container %s: %+v, want waiting, restarted once", c.Name, c)
		}
	}
	agentBack := agentRunning(restarting, agentName, at(6))
	steps := []struct {
		name   string
		status corev1.PodStatus
	}{
		{"removed", restarting},
		{"agent running", agentBack},
		{"agent started", agentStarted(agentBack, agentName, at(7))},
		{"workers running", workersRunning(agentStarted(agentBack, agentName, at(7)), at(7))},
		{"agent exited with the restart code", exited(running, agentName, agentspec.DefaultRestartExitCode, at(9))},
	}
	for _, step := range steps {
		if got := inplace.FailureSignal(pod(step.status)); got != "" {
			t.Errorf("%s: failure signal %q, want none", step.name, got)
		}
	}
	if again := agentRunning(agentBack, agentName, at(8)); !apiequality.Semantic.DeepEqual(again, agentBack) {
		t.Error("agent running, seen again at a later relist: the status changed")
	}
	if c := condition(failed, jobset.PodConditionAllContainersRestarting); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("after the exit: %s is %+v, want True", jobset.PodConditionAllContainersRestarting, c)
	}
	if c := condition(restarting, jobset.PodConditionAllContainersRestarting); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("once removed: %s is %+v, want False", jobset.PodConditionAllContainersRestarting, c)
	}
}

// Each node relists within a period, at a phase of its own that it keeps.
func TestUntilRelist(t *testing.T) {
	now := time.Unix(1_700_000_000, 123_456_789)
	phases := map[time.Duration]bool{}
	for node := range 50 {
		d := untilRelist(node, now)
		if d <= 0 || d > relistPeriod {
			t.Fatalf("node %d: next relist in %v, want within (0, %v]", node, d, relistPeriod)
		}
		if next := untilRelist(node, now.Add(d)); next != relistPeriod {
			t.Errorf("node %d: at its relist, the next one in %v, want %v", node, next, relistPeriod)
		}
		phases[now.Add(d).Sub(now.Truncate(relistPeriod))%relistPeriod] = true
	}
	if len(phases) < 40 {
		t.Errorf("50 nodes relist at %d phases, want them spread", len(phases))
	}
}

func condition(s corev1.PodStatus, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// The writer writes a kept update, then only the latest of those queued
// behind it, and ends with the API holding the latest status.
func TestPodStatusWriterMergesButKeepsTheExit(t *testing.T) {
	spec := benchPodSpec(t)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-1"}, Spec: spec}
	clientset := fake.NewClientset(p)
	var requests atomic.Int64
	w := newPodStatusWriter(clientset.CoreV1().Pods("ns"), "p", p.UID, p.Status, &requests)
	ctx := context.Background()
	now := metav1.NewTime(time.Unix(1_700_000_000, 0))
	w.set(ctx, false, func(corev1.PodStatus) corev1.PodStatus { return runningStatus(&spec, now) })
	if err := w.wait(); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock() // hold the writer: what follows queues up
	w.busy = true
	w.mu.Unlock()
	w.set(ctx, true, func(s corev1.PodStatus) corev1.PodStatus { return exited(s, spec.Containers[0].Name, 1, now) })
	w.set(ctx, false, func(s corev1.PodStatus) corev1.PodStatus { return removed(s, now) })
	w.set(ctx, false, func(s corev1.PodStatus) corev1.PodStatus { return agentRunning(s, spec.InitContainers[0].Name, now) })
	w.mu.Lock()
	queued := len(w.pending)
	w.mu.Unlock()
	if queued != 2 {
		t.Errorf("%d updates queued, want 2 (the exit, and the latest)", queued)
	}
	go w.run(ctx)
	if err := w.wait(); err != nil {
		t.Fatal(err)
	}
	if got := requests.Load(); got != 3 {
		t.Errorf("%d writes, want 3", got)
	}
	got, err := clientset.CoreV1().Pods("ns").Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := got.Status.InitContainerStatuses[0]; s.State.Running == nil || s.RestartCount != 1 {
		t.Errorf("the agent's status in the API: %+v, want running after one restart", s)
	}
}

// The process tier's JobSet is one the agent restarts in place through
// its wrapper, as it reads the JobSet from its watch, and whose Pods the
// kubelet stand-in starts as a kubelet would: the wrapper's installer
// completed, no failure signal.
func TestProcessTierJobSetAsTheAgentReadsIt(t *testing.T) {
	js := newJobSet("ns", podsPerJob, jobset.InPlaceRestart, true)
	if !agent.ProcessTier(true, js.Annotations) {
		t.Error("the JobSet asks for the Pod tier")
	}
	raw, err := json.Marshal(js.Spec)
	if err != nil {
		t.Fatal(err)
	}
	// The agent's reading of the spec is its own (unexported) type.
	judge := reflect.ValueOf(agent.ExitRestartsInPlace)
	spec := reflect.New(judge.Type().In(0))
	if err := json.Unmarshal(raw, spec.Interface()); err != nil {
		t.Fatal(err)
	}
	for code, want := range map[int]bool{0: false, 1: true} {
		if got := judge.Call([]reflect.Value{spec.Elem(), reflect.ValueOf(code)})[0].Bool(); got != want {
			t.Errorf("exit code %d restarts the worker in place: %v, want %v", code, got, want)
		}
	}

	podSpec := js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
	agentIndex := sidecar.Index(podSpec)
	if !slices.ContainsFunc(podSpec.InitContainers[agentIndex].Env, func(e corev1.EnvVar) bool { return e.Name == agentspec.EnvWrapperControl }) {
		t.Errorf("the agent has no %s", agentspec.EnvWrapperControl)
	}
	at := metav1.NewTime(time.Unix(1_700_000_000, 0))
	pod := &corev1.Pod{Spec: podSpec}
	for name, s := range map[string]corev1.PodStatus{
		"running": runningStatus(&podSpec, at),
		"started": running(initialized(accepted(corev1.PodStatus{}, &podSpec, at), podSpec.InitContainers[agentIndex].Name, at), at),
	} {
		for _, c := range s.InitContainerStatuses {
			if c.Name == agentspec.WrapperInstallerName && (c.State.Terminated == nil || c.State.Terminated.Reason != "Completed") {
				t.Errorf("%s: the wrapper's installer is %+v, want completed", name, c.State)
			}
		}
		pod.Status = s
		if got := inplace.FailureSignal(pod); got != "" {
			t.Errorf("%s: failure signal %q, want none", name, got)
		}
		if !runningAndReady(pod) {
			t.Errorf("%s: not running and ready", name)
		}
	}
}
