package inplace

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

func TestEndsJob(t *testing.T) {
	terminated := func(container string, code int32) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{Name: container, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}},
		}}}
	}
	exitCodes := func(action batchv1.PodFailurePolicyAction, container *string, op batchv1.PodFailurePolicyOnExitCodesOperator, codes ...int32) batchv1.PodFailurePolicyRule {
		return batchv1.PodFailurePolicyRule{Action: action, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{ContainerName: container, Operator: op, Values: codes}}
	}
	failOn42 := &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		exitCodes(batchv1.PodFailurePolicyActionFailJob, ptr.To("worker"), batchv1.PodFailurePolicyOnExitCodesOpIn, 42),
	}}
	cases := map[string]struct {
		pod    *corev1.Pod
		policy *batchv1.PodFailurePolicy
		want   bool
	}{
		"no policy":                        {pod: terminated("worker", 42)},
		"the fatal code":                   {pod: terminated("worker", 42), policy: failOn42, want: true},
		"another code":                     {pod: terminated("worker", 43), policy: failOn42},
		"the code, from another container": {pod: terminated("jobset-agent", 42), policy: failOn42},
		"still running":                    {pod: &corev1.Pod{}, policy: failOn42},
		"exit 0 never matches, even NotIn": {
			pod: terminated("worker", 0),
			policy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				exitCodes(batchv1.PodFailurePolicyActionFailJob, nil, batchv1.PodFailurePolicyOnExitCodesOpNotIn, 1),
			}},
		},
		"the first matching rule decides: Ignore before FailJob": {
			pod: terminated("worker", 42),
			policy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				exitCodes(batchv1.PodFailurePolicyActionIgnore, nil, batchv1.PodFailurePolicyOnExitCodesOpIn, 42),
				exitCodes(batchv1.PodFailurePolicyActionFailJob, nil, batchv1.PodFailurePolicyOnExitCodesOpIn, 42),
			}},
		},
		"FailIndex ends the index, and so the group's run": {
			pod: terminated("worker", 42),
			policy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				exitCodes(batchv1.PodFailurePolicyActionFailIndex, nil, batchv1.PodFailurePolicyOnExitCodesOpIn, 42),
			}},
			want: true,
		},
		"a Pod condition": {
			pod: &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}}},
			policy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:          batchv1.PodFailurePolicyActionFailJob,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
			}}},
			want: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := EndsJob(tc.pod, tc.policy); got != tc.want {
				t.Errorf("EndsJob = %v, want %v", got, tc.want)
			}
		})
	}
}

// Every sign is dated against the start of the Pod's agent, by the same
// node clock; the controller's own clock plays no part.
// managedFields are the API server's times (seconds into a minute) of the
// kubelet's last status write and the agent's last epoch write; 0: none.
type managedFields struct{ status, epoch int }

// writes records m in the Pod's managedFields, as the API server does.
func writes(p *corev1.Pod, m managedFields) *corev1.Pod {
	at := func(second int) *metav1.Time {
		t := metav1.NewTime(time.Date(2026, 11, 24, 17, 6, second, 0, time.UTC))
		return &t
	}
	if m.status > 0 {
		p.ManagedFields = append(p.ManagedFields, metav1.ManagedFieldsEntry{
			Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: at(m.status),
			FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{},"f:containerStatuses":{},"f:initContainerStatuses":{}}}`),
		})
	}
	if m.epoch > 0 {
		p.ManagedFields = append(p.ManagedFields, metav1.ManagedFieldsEntry{
			Manager: "jobset-agent", Operation: metav1.ManagedFieldsOperationUpdate, Time: at(m.epoch),
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:` + agentspec.EpochAnnotation + `":{}}}}`),
		})
	}
	// The scheduler's and the node lifecycle controller's status writes
	// (conditions only) are not the kubelet's.
	p.ManagedFields = append(p.ManagedFields, metav1.ManagedFieldsEntry{
		Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: at(59),
		FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{}}}`),
	})
	return p
}

func TestFailureSignal(t *testing.T) {
	// Node time: the agent started at agentUp and joined the Pod's epoch.
	agentUp := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	before, after := metav1.NewTime(agentUp.Add(-time.Second)), metav1.NewTime(agentUp.Add(time.Second))
	pod := func(agentRunning bool, mutate func(*corev1.PodStatus)) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{sidecar.Container(sidecar.Options{Image: "agent"})},
			Containers:     []corev1.Container{{Name: "worker"}},
		}}
		agent := corev1.ContainerStatus{Name: agentspec.ContainerName}
		if agentRunning {
			agent.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(agentUp)}
		}
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{agent}
		if mutate != nil {
			mutate(&p.Status)
		}
		return p
	}
	restarting := func(at metav1.Time) func(*corev1.PodStatus) {
		return func(s *corev1.PodStatus) {
			s.Conditions = []corev1.PodCondition{{Type: jobset.PodConditionAllContainersRestarting, Status: corev1.ConditionTrue, LastTransitionTime: at}}
		}
	}
	worker := func(cs corev1.ContainerStatus) func(*corev1.PodStatus) {
		return func(s *corev1.PodStatus) { cs.Name = "worker"; s.ContainerStatuses = []corev1.ContainerStatus{cs} }
	}
	exited := func(code int32, reason string, at metav1.Time) corev1.ContainerStatus {
		return corev1.ContainerStatus{LastTerminationState: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, FinishedAt: at}}}
	}
	terminated := func(code int32, at metav1.Time) corev1.ContainerStatus {
		return corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: at}}}
	}
	// restarting in place, as the kubelet posts it once it has removed
	// every container to start them all again: each waits, with reason
	// RestartingAllContainers, last terminated so, restarted once more.
	removedToRestart := func(s *corev1.PodStatus) {
		removed := func(name string) corev1.ContainerStatus {
			return corev1.ContainerStatus{Name: name, RestartCount: 1,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: jobset.ReasonRestartingAllContainers}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 137, Reason: jobset.ReasonRestartingAllContainers}}}
		}
		s.InitContainerStatuses = []corev1.ContainerStatus{removed(agentspec.ContainerName)}
		s.ContainerStatuses = []corev1.ContainerStatus{removed("worker")}
	}
	// then: the agent runs again, the worker waits for the barrier.
	agentBack := func(s *corev1.PodStatus) {
		removedToRestart(s)
		s.InitContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: after}}
		s.ContainerStatuses[0].State.Waiting.Reason = "PodInitializing"
	}
	cases := map[string]struct {
		pod  *corev1.Pod
		want bool
	}{
		"a running Pod": {pod: pod(true, nil)},
		"restarting since its agent started, its worker stopped": {pod: pod(true, func(s *corev1.PodStatus) {
			restarting(after)(s)
			worker(corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, StartedAt: after, FinishedAt: after}}})(s)
		}), want: true},
		// Seen after a 60 s API server outage in the middle of a group
		// restart: the kubelet posted the restart's condition dated after
		// the new agent's start while the worker still waited for the
		// barrier; at the sync, that looked like a new failure (a second
		// group restart).
		"a restart condition dated after the agent's start, the worker not run since (waiting for the barrier)": {pod: pod(true, func(s *corev1.PodStatus) {
			restarting(after)(s)
			worker(corev1.ContainerStatus{
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: jobset.ReasonRestartingAllContainers, StartedAt: before}},
			})(s)
		})},
		"a restart condition dated after the agent's start, no worker status yet": {pod: pod(true, restarting(after))},
		"the restart that started the agent, reported late":                       {pod: pod(true, restarting(before))},
		"restarting, set in the second the agent started":                         {pod: pod(true, restarting(metav1.NewTime(agentUp)))},
		"the worker exited 1 in the second the agent started":                     {pod: pod(true, worker(terminated(1, metav1.NewTime(agentUp)))), want: true},
		"the worker just exited 1":                                                {pod: pod(true, worker(terminated(1, after))), want: true},
		"the worker restarted after exiting 1 since":                              {pod: pod(true, worker(exited(1, "Error", after))), want: true},
		"the worker's exit that restarted the Pod":                                {pod: pod(true, worker(exited(1, "Error", before)))},
		"killed for a restart: no time, no sign":                                  {pod: pod(true, worker(exited(137, jobset.ReasonRestartingAllContainers, metav1.Time{})))},
		"the agent is not running: no reference, no sign":                         {pod: pod(false, worker(exited(1, "Error", after)))},
		"a restart condition dated after the agent's start, every container running again (seen after an API server outage)": {
			pod: pod(true, func(s *corev1.PodStatus) {
				restarting(after)(s)
				worker(corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: after}}})(s)
			})},
		// Seen after 10 s and 60 s API server outages in the middle of a
		// group restart: the failed Pod's restarted agent joined the next
		// epoch (17:06:47) before the kubelet, in backoff, posted the
		// restart (17:06:48); the status then current, posted before the
		// outage (17:06:32), still showed the old agent and its failed
		// worker, dated after that agent's start: a second group restart.
		"a status the kubelet posted before the agent joined the Pod's current epoch": {pod: writes(
			pod(true, func(s *corev1.PodStatus) { restarting(after)(s); worker(terminated(1, after))(s) }),
			managedFields{status: 32, epoch: 47})},
		"a status the kubelet posted after the join": {pod: writes(
			pod(true, func(s *corev1.PodStatus) { restarting(after)(s); worker(terminated(1, after))(s) }),
			managedFields{status: 48, epoch: 47}), want: true},
		// The API server dates writes to the second. A tie is read as a
		// status from before the join: counting a stale one starts a
		// group restart the budget counts, for a failure answered already,
		// while ignoring a new one waits only for the kubelet's next
		// status write (or the Pod's rejoin).
		"a status posted in the second of the join is taken as before it": {pod: writes(
			pod(true, func(s *corev1.PodStatus) { restarting(after)(s); worker(terminated(1, after))(s) }),
			managedFields{status: 47, epoch: 47})},
		"a status posted the second after the join counts": {pod: writes(
			pod(true, worker(terminated(1, after))), managedFields{status: 48, epoch: 47}), want: true},
		"no epoch written yet: the status alone tells": {pod: writes(
			pod(true, worker(terminated(1, after))), managedFields{status: 32}), want: true},
		// The marks of a restart in place, posted long after the join:
		// those of the restart that brought the Pod to its epoch, posted
		// late, look the same.
		"restarting in place, every container removed and waiting, posted long after the join": {pod: writes(
			pod(false, removedToRestart), managedFields{status: 58, epoch: 47})},
		"restarted in place, the agent back (restart counts one higher, last terminations undated)": {pod: writes(
			pod(true, agentBack), managedFields{status: 58, epoch: 47})},
		"the agent exited, the restart of every container begun, posted long after the join": {pod: writes(
			pod(false, func(s *corev1.PodStatus) {
				restarting(after)(s)
				s.InitContainerStatuses[0].State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 2, StartedAt: before, FinishedAt: after}
			}), managedFields{status: 58, epoch: 47})},
		"no agent at all": {pod: &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: jobset.PodConditionAllContainersRestarting, Status: corev1.ConditionTrue}}}}},
		// With the controller's sync time as the
		// reference, a node clock 2 s ahead dated the restart that led to
		// the sync after it: a new group restart after every sync.
		"a node clock ahead of the controller's changes nothing": {pod: pod(true, func(s *corev1.PodStatus) {
			worker(exited(1, "Error", before))(s)
			restarting(metav1.NewTime(agentUp.Add(-2 * time.Second)))(s)
		})},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := FailureSignal(tc.pod); (got != "") != tc.want {
				t.Errorf("FailureSignal = %q, want a sign: %v", got, tc.want)
			}
			// A cache keeps only the managedFields the decisions read.
			trimmed := tc.pod.DeepCopy()
			trimmed.ManagedFields = ManagedFieldsRead(trimmed.ManagedFields)
			if got, want := FailureSignal(trimmed), FailureSignal(tc.pod); got != want {
				t.Errorf("FailureSignal with the managedFields a cache keeps = %q, with all of them %q", got, want)
			}
		})
	}
}

func TestManagedFieldsRead(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 24, 17, 6, 47, 0, time.UTC))
	entry := func(manager, subresource, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			Time: &at, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields), Subresource: subresource}
	}
	epoch := `{"f:metadata":{"f:annotations":{"f:` + agentspec.EpochAnnotation + `":{}}}}`
	cases := map[string]struct {
		in, want []metav1.ManagedFieldsEntry
	}{
		"none": {},
		"the agent's epoch write, cut to the epoch": {
			in: []metav1.ManagedFieldsEntry{entry("jobset-agent", "",
				`{"f:metadata":{"f:annotations":{"f:`+agentspec.EpochAnnotation+`":{},"f:`+agentspec.FencedAnnotation+`":{}}}}`)},
			want: []metav1.ManagedFieldsEntry{entry("jobset-agent", "", epoch)},
		},
		"the kubelet's status write, cut to the containers' statuses": {
			in: []metav1.ManagedFieldsEntry{entry("kubelet", "status",
				`{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"Ready\"}":{}},"f:containerStatuses":{},"f:initContainerStatuses":{},"f:podIP":{}}}`)},
			want: []metav1.ManagedFieldsEntry{entry("kubelet", "status", `{"f:status":{"f:containerStatuses":{},"f:initContainerStatuses":{}}}`)},
		},
		"a status write of init containers only": {
			in:   []metav1.ManagedFieldsEntry{entry("kubelet", "status", `{"f:status":{"f:initContainerStatuses":{},"f:phase":{}}}`)},
			want: []metav1.ManagedFieldsEntry{entry("kubelet", "status", `{"f:status":{"f:initContainerStatuses":{}}}`)},
		},
		"what no decision reads goes": {
			in: []metav1.ManagedFieldsEntry{
				entry("kube-controller-manager", "", `{"f:metadata":{"f:labels":{},"f:ownerReferences":{}},"f:spec":{"f:containers":{}}}`),
				entry("kube-scheduler", "status", `{"f:status":{"f:conditions":{}}}`),
				entry("jobset-controller", "", `{"f:metadata":{"f:finalizers":{}}}`),
				// containers' statuses written as the Pod, not its status:
				// not the kubelet's post
				entry("someone", "", `{"f:status":{"f:containerStatuses":{}}}`),
				// the epoch annotation in a status write: not the agent's join
				entry("someone", "status", epoch),
			},
		},
		"undated entries go: no decision reads them": {
			in: []metav1.ManagedFieldsEntry{{Manager: "jobset-agent", FieldsV1: metav1.NewFieldsV1(epoch)}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ManagedFieldsRead(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ManagedFieldsRead (-want +got):\n%s", diff)
			}
			if again := ManagedFieldsRead(got); !cmp.Equal(got, again) {
				t.Errorf("ManagedFieldsRead is not idempotent: %v, then %v", got, again)
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ManagedFields: tc.in}}
			trimmed := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ManagedFields: got}}
			if !EpochWritten(pod).Equal(EpochWritten(trimmed)) || statusPredatesJoin(pod) != statusPredatesJoin(trimmed) {
				t.Errorf("the decisions read the trimmed managedFields differently")
			}
		})
	}
}

// BenchmarkFailureSignal: every reconcile asks it of every Pod. A running
// Pod with the managedFields of a kubelet and an agent (the common case:
// no sign) must not pay for decoding them.
func BenchmarkFailureSignal(b *testing.B) {
	started := metav1.NewTime(time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC))
	running := writes(&corev1.Pod{
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{sidecar.Container(sidecar.Options{Image: "agent"})},
			Containers:     []corev1.Container{{Name: "worker"}},
		},
		Status: corev1.PodStatus{
			InitContainerStatuses: []corev1.ContainerStatus{{Name: agentspec.ContainerName,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "worker",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}},
		},
	}, managedFields{status: 32, epoch: 47})
	b.ReportAllocs()
	for b.Loop() {
		if FailureSignal(running) != "" {
			b.Fatal("a running Pod shows a failure")
		}
	}
}

// A Pod the controller marked Failed is out of its group by its mark,
// whatever phase its kubelet wrote back over the mark (its status manager
// merges the phase it computed over a terminal one it did not set, and
// keeps the conditions it does not own), and stopping until its kubelet
// reports every container stopped: the mark of a Pod replaced off its
// node, and the mark of a member whose node was lost alike.
func TestLiveAndStoppingReadTheControllersMark(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	stopped := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137}}
	replacedOffNode := corev1.PodCondition{Type: jobset.PodConditionReplacedOffNode, Status: corev1.ConditionTrue, Reason: "RepeatedFailures"}
	nodeLost := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: jobset.PodReasonNodeLost}
	pod := func(phase corev1.PodPhase, worker corev1.ContainerState, conditions ...corev1.PodCondition) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: phase, Conditions: conditions,
			InitContainerStatuses: []corev1.ContainerStatus{{Name: agentspec.ContainerName, State: worker}},
			ContainerStatuses:     []corev1.ContainerStatus{{Name: "worker", State: worker}}}}
	}
	cases := map[string]struct {
		pod            *corev1.Pod
		live, stopping bool
	}{
		"replaced off its node, written back Running":        {pod(corev1.PodRunning, running, replacedOffNode), false, true},
		"replaced off its node, stopped":                     {pod(corev1.PodFailed, stopped, replacedOffNode), false, false},
		"its node lost, written back Running":                {pod(corev1.PodRunning, running, nodeLost), false, true},
		"its node lost, written back Pending":                {pod(corev1.PodPending, running, nodeLost), false, true},
		"its node lost, Failed, its kubelet silent":          {pod(corev1.PodFailed, running, nodeLost), false, true},
		"its node lost, its kubelet stopped every container": {pod(corev1.PodFailed, stopped, nodeLost), false, false},
		// Another's disruption (the Pod garbage collector's, an
		// eviction's) is no mark of the controller's: the phase says.
		"another's DisruptionTarget, Running": {pod(corev1.PodRunning, running,
			corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "DeletionByPodGC"}), true, false},
		"the NodeLost reason on a condition that is not True": {pod(corev1.PodRunning, running,
			corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionFalse, Reason: jobset.PodReasonNodeLost}), true, false},
		"unmarked, Running": {pod(corev1.PodRunning, running), true, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Live(tc.pod); got != tc.live {
				t.Errorf("Live = %v, want %v", got, tc.live)
			}
			if got := Stopping(tc.pod); got != tc.stopping {
				t.Errorf("Stopping = %v, want %v", got, tc.stopping)
			}
		})
	}
}
