package jobsetcontroller

import (
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// tallyPod is a live worker of attempt 0 of JobSet uid-1, at epoch (""
// before it joins), changed by mutate.
func tallyPod(name, epoch string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{
		jobset.JobSetNameKey: "js", jobset.JobSetUIDKey: "uid-1", jobset.RestartsKey: "0", jobset.ReplicatedJobNameKey: "workers",
	}, Finalizers: []string{jobset.GroupMemberFinalizer}}}
	if epoch != "" {
		pod.Annotations = map[string]string{jobset.EpochKey: epoch}
	}
	pod.Status.Phase = corev1.PodRunning
	for _, m := range mutate {
		m(pod)
	}
	return pod
}

// left is what a reconcile left the group in, as the pacer publishes it
// (nil: not known).
type left struct{ gather *inplace.Gather }

// gatheringAt: the group of attempt 0 (replicatedJob "workers") gathers at
// epoch.
func gatheringAt(epoch int32) *left {
	return &left{gather: &inplace.Gather{Attempt: attemptOf("uid-1", "0"), Group: sets.New("workers"), Epoch: epoch}}
}

// inSync: the group is in sync.
var inSync = &left{}

// publish tells the tally what a reconcile left, as the pacer does.
func publish(t *inplace.Tally, l *left) bool {
	if l == nil {
		return t.Forget()
	}
	return t.Publish(l.gather)
}

// failing: the Pod's agent runs, and its worker exited 1 since: a failure
// signal.
func failing(p *corev1.Pod) {
	agentUp := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	p.Spec.InitContainers = []corev1.Container{sidecar.Container(sidecar.Options{Image: "agent"})}
	p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: agentspec.ContainerName,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(agentUp)}}}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.NewTime(agentUp.Add(time.Second))}}}}
}

func TestPodTally(t *testing.T) {
	failed := func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }
	deleting := func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} }
	succeeded := func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }
	holding := func(p *corev1.Pod) { p.Finalizers = []string{jobset.GroupMemberFinalizer} }
	unheld := func(p *corev1.Pod) { p.Finalizers = nil }
	restarting := func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: "AllContainersRestarting", Status: corev1.ConditionTrue})
	}
	attempt1 := func(p *corev1.Pod) { p.Labels[jobset.RestartsKey] = "1" }
	markedOffNode := func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: jobset.PodConditionReplacedOffNode, Status: corev1.ConditionTrue})
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	stopped := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137}}
	containers := func(state corev1.ContainerState) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", State: state}}
		}
	}
	initializer := func(p *corev1.Pod) { p.Labels[jobset.ReplicatedJobNameKey] = "initializer" }

	type event struct {
		name string
		pod  *corev1.Pod // nil: gone
		want bool        // may change the decision
	}
	cases := []struct {
		name string
		// pods are the Pods at the group's synced epoch before the gather
		// is published.
		pods   []*corev1.Pod
		epochs *left
		events []event
	}{
		{
			name: "not known (no reconcile yet, or it failed): every event may",
			pods: []*corev1.Pod{tallyPod("a", "1")},
			events: []event{
				{"a", tallyPod("a", "1", restarting), true},
				{"a", tallyPod("a", "1"), true},
			},
		},
		{
			name:   "in sync: a failure signal or an epoch change may, other status writes not",
			pods:   []*corev1.Pod{tallyPod("a", "1"), tallyPod("b", "1"), tallyPod("c", "1")},
			epochs: inSync,
			events: []event{
				{"a", tallyPod("a", "1", restarting), false}, // the condition alone, with no running agent: no signal
				{"a", tallyPod("a", "1", failing), true},
				{"b", tallyPod("b", "2"), true},
				{"c", tallyPod("c", "1", failed), true},
			},
		},
		{
			name:   "a group restart: only the join that leaves no Pod waiting",
			pods:   []*corev1.Pod{tallyPod("a", "1"), tallyPod("b", "1"), tallyPod("c", "1")},
			epochs: gatheringAt(2),
			events: []event{
				{"a", tallyPod("a", "1", restarting), false},
				{"a", tallyPod("a", "2"), false},
				{"b", tallyPod("b", "1", restarting), false},
				{"b", tallyPod("b", "2"), false},
				{"b", tallyPod("b", "2", restarting), false}, // the sign of a joined Pod is not read while the group gathers
				{"c", tallyPod("c", "2"), true},
			},
		},
		{
			name:   "a Pod marked Failed to replace it off its node: its kubelet writing the running phase back is not, stopping it is",
			pods:   []*corev1.Pod{tallyPod("a", "1"), tallyPod("b", "1")},
			epochs: gatheringAt(2),
			events: []event{
				{"a", tallyPod("a", "2", markedOffNode, failed, containers(running)), true},
				{"a", tallyPod("a", "2", markedOffNode, containers(running)), false},
				{"b", tallyPod("b", "2"), true}, // leaves no live Pod waiting (the replacement comes later)
				{"a", tallyPod("a", "2", markedOffNode, failed, containers(stopped)), true},
			},
		},
		{
			name:   "the first gather: creations may, joins only the last",
			epochs: gatheringAt(1),
			events: []event{
				{"a", tallyPod("a", ""), true},
				{"b", tallyPod("b", ""), true},
				{"a", tallyPod("a", "1"), false},
				{"b", tallyPod("b", "1"), true},
			},
		},
		{
			name:   "the first gather of Pods not held yet: the last hold or join that leaves none waiting",
			epochs: gatheringAt(1),
			events: []event{
				{"a", tallyPod("a", "", unheld), true},
				{"b", tallyPod("b", "", unheld), true},
				{"a", tallyPod("a", ""), false},
				{"a", tallyPod("a", "1"), false},
				{"b", tallyPod("b", "1", unheld), false},
				{"b", tallyPod("b", "1"), true},
			},
		},
		{
			name:   "who is in the group changes: a Pod fails, is deleted, is replaced",
			pods:   []*corev1.Pod{tallyPod("a", "1"), tallyPod("b", "1")},
			epochs: gatheringAt(2),
			events: []event{
				{"a", tallyPod("a", "1", failed), true},
				{"b", tallyPod("b", "1", deleting), true},
				{"b", nil, true},
				{"b2", tallyPod("b2", ""), true},
				{"b2", tallyPod("b2", "2"), true}, // a failed, b gone: b2 was the last waiting
			},
		},
		{
			name:   "how a Pod ends: a deleted worker that exits 0 (a lost index, once its Job counts it)",
			pods:   []*corev1.Pod{tallyPod("a", "1"), tallyPod("b", "1")},
			epochs: gatheringAt(2),
			events: []event{
				{"a", tallyPod("a", "1", deleting, holding), true},
				{"a", tallyPod("a", "1", deleting, holding, succeeded), true},
			},
		},
		{
			name:   "in sync: a failure signal that goes before a reconcile saw it",
			pods:   []*corev1.Pod{tallyPod("a", "1"), tallyPod("b", "1")},
			epochs: inSync,
			events: []event{
				{"a", tallyPod("a", "1", failing), true},
				{"a", tallyPod("a", "1"), true},
				{"a", tallyPod("a", "1", restarting), false},
			},
		},
		{
			name:   "Pods of another attempt or outside the group do not wait",
			pods:   []*corev1.Pod{tallyPod("a", "1"), tallyPod("old", "1", attempt1), tallyPod("init", "", initializer)},
			epochs: gatheringAt(2),
			events: []event{
				{"old", tallyPod("old", "2", attempt1), false},
				{"init", tallyPod("init", "", initializer, restarting), false},
				{"a", tallyPod("a", "2"), true},
			},
		},
		{
			name:   "a Pod relabelled into another attempt",
			pods:   []*corev1.Pod{tallyPod("a", "1"), tallyPod("b", "1")},
			epochs: gatheringAt(2),
			events: []event{
				{"a", tallyPod("a", "1", attempt1), true},
				{"b", tallyPod("b", "2"), true},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tally := inplace.NewTally()
			for _, pod := range tc.pods {
				tally.Observe(pod.Name, markOf(pod, tally.ReadsSignals()))
			}
			publish(tally, tc.epochs)
			for i, e := range tc.events {
				if got := tally.Observe(e.name, markOf(e.pod, tally.ReadsSignals())); got != e.want {
					t.Errorf("event %d (Pod %s): may change the decision = %t, want %t", i, e.name, got, e.want)
				}
			}
		})
	}
}

func TestPodTallyPublish(t *testing.T) {
	cases := []struct {
		name          string
		pods          []*corev1.Pod
		before, after *left
		// events come after before is published.
		events        []*corev1.Pod
		wantLookAgain bool
	}{
		{name: "a gather with Pods waiting", pods: []*corev1.Pod{tallyPod("a", "1")}, before: inSync, after: gatheringAt(2)},
		// Their joins were weighed while the group was in sync, where
		// every event counts; but a gather published after them, with
		// every Pod joined already, would otherwise wait for an event.
		{name: "a gather every Pod joined already", pods: []*corev1.Pod{tallyPod("a", "2")}, before: inSync, after: gatheringAt(2), wantLookAgain: true},
		{name: "the same gather again, after quiet events", pods: []*corev1.Pod{tallyPod("a", "1"), tallyPod("b", "1")},
			before: gatheringAt(2), events: []*corev1.Pod{tallyPod("a", "2")}, after: gatheringAt(2)},
		// A failure signal is quiet while the group gathers, and news once
		// it syncs: the reconcile that synced may have read the Pod before it.
		{name: "in sync after quiet events", pods: []*corev1.Pod{tallyPod("a", "1"), tallyPod("b", "1")},
			before: gatheringAt(2), events: []*corev1.Pod{tallyPod("a", "2", failing)}, after: inSync, wantLookAgain: true},
		{name: "in sync, every event weighed as it may matter", pods: []*corev1.Pod{tallyPod("a", "2")},
			before: gatheringAt(2), after: inSync},
		{name: "not known anymore", pods: []*corev1.Pod{tallyPod("a", "2")}, before: inSync},
		{name: "a gather with no Pod yet: nothing waits, so look again (once)", after: gatheringAt(1), wantLookAgain: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tally := inplace.NewTally()
			for _, pod := range tc.pods {
				tally.Observe(pod.Name, markOf(pod, tally.ReadsSignals()))
			}
			publish(tally, tc.before)
			for _, pod := range tc.events {
				tally.Observe(pod.Name, markOf(pod, tally.ReadsSignals()))
			}
			if got := publish(tally, tc.after); got != tc.wantLookAgain {
				t.Errorf("publish: look again = %t, want %t", got, tc.wantLookAgain)
			}
		})
	}
}

// The tally keeps a sign its events showed in sync, for the decision that
// reads the Pod after the sign went from its status, until the Pod moves
// to another epoch or goes, or the group gathers.
func TestPodTallySigns(t *testing.T) {
	cases := []struct {
		name   string
		before *left
		events []*corev1.Pod // by Pod "a"; nil: gone
		after  *left         // published after the events, when set
		forget bool          // a reconcile failed after the events
		want   map[string]string
	}{
		{name: "a sign in sync, gone from the Pod's status", before: inSync,
			events: []*corev1.Pod{tallyPod("a", "1", failing), tallyPod("a", "1")}, want: map[string]string{"a": "1"}},
		{name: "no sign", before: inSync, events: []*corev1.Pod{tallyPod("a", "1")}},
		{name: "a sign while the group gathers: not read", before: gatheringAt(2),
			events: []*corev1.Pod{tallyPod("a", "1", failing), tallyPod("a", "1")}},
		{name: "the Pod joined the next epoch since", before: inSync,
			events: []*corev1.Pod{tallyPod("a", "1", failing), tallyPod("a", "2")}},
		{name: "the Pod is gone", before: inSync, events: []*corev1.Pod{tallyPod("a", "1", failing), nil}},
		{name: "the group gathers since: the sign was answered", before: inSync,
			events: []*corev1.Pod{tallyPod("a", "1", failing)}, after: gatheringAt(2)},
		{name: "a failed reconcile: the sign stays true of the Pod", before: inSync,
			events: []*corev1.Pod{tallyPod("a", "1", failing)}, forget: true, want: map[string]string{"a": "1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tally := inplace.NewTally()
			tally.Observe("a", markOf(tallyPod("a", "1"), tally.ReadsSignals()))
			publish(tally, tc.before)
			for _, pod := range tc.events {
				tally.Observe("a", markOf(pod, tally.ReadsSignals()))
			}
			if tc.after != nil {
				publish(tally, tc.after)
			}
			if tc.forget {
				tally.Forget()
			}
			if got := tally.Signs(); !maps.Equal(got, tc.want) {
				t.Errorf("Signs() = %v, want %v", got, tc.want)
			}
		})
	}
}

// The signal the tally tests rely on.
func TestFailingShowsAFailureSignal(t *testing.T) {
	if sign := inplace.FailureSignal(tallyPod("a", "1", failing)); sign == "" {
		t.Fatal("FailureSignal of a failing Pod is empty")
	}
}
