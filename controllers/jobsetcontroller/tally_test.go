package jobsetcontroller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// tallyPod is a live worker of attempt 0 of JobSet uid-1, at epoch (""
// before it joins), changed by mutate.
func tallyPod(name, epoch string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{
		jobset.JobSetNameKey: "js", jobset.JobSetUIDKey: "uid-1", jobset.RestartsKey: "0", jobset.ReplicatedJobNameKey: "workers",
	}}}
	if epoch != "" {
		pod.Annotations = map[string]string{jobset.EpochKey: epoch}
	}
	pod.Status.Phase = corev1.PodRunning
	for _, m := range mutate {
		m(pod)
	}
	return pod
}

// gatheringAt is the gather of attempt 0 at epoch, group "workers".
func gatheringAt(epoch string) *gather {
	return &gather{jobSetUID: "uid-1", restarts: "0", epoch: epoch, group: sets.New("workers")}
}

func TestPodTally(t *testing.T) {
	failed := func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }
	deleting := func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} }
	restarting := func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: "AllContainersRestarting", Status: corev1.ConditionTrue})
	}
	attempt1 := func(p *corev1.Pod) { p.Labels[jobset.RestartsKey] = "1" }
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
		gather *gather
		events []event
	}{
		{
			name: "in sync: every event may change the decision (a failure sign, say)",
			pods: []*corev1.Pod{tallyPod("a", "1"), tallyPod("b", "1")},
			events: []event{
				{"a", tallyPod("a", "1", restarting), true},
				{"b", tallyPod("b", "1"), true},
			},
		},
		{
			name:   "a group restart: only the join that leaves no Pod waiting",
			pods:   []*corev1.Pod{tallyPod("a", "1"), tallyPod("b", "1"), tallyPod("c", "1")},
			gather: gatheringAt("2"),
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
			name:   "the first gather: creations may, joins only the last",
			gather: gatheringAt("1"),
			events: []event{
				{"a", tallyPod("a", ""), true},
				{"b", tallyPod("b", ""), true},
				{"a", tallyPod("a", "1"), false},
				{"b", tallyPod("b", "1"), true},
			},
		},
		{
			name:   "who is in the group changes: a Pod fails, is deleted, is replaced",
			pods:   []*corev1.Pod{tallyPod("a", "1"), tallyPod("b", "1")},
			gather: gatheringAt("2"),
			events: []event{
				{"a", tallyPod("a", "1", failed), true},
				{"b", tallyPod("b", "1", deleting), true},
				{"b", nil, true},
				{"b2", tallyPod("b2", ""), true},
				{"b2", tallyPod("b2", "2"), true}, // a failed, b gone: b2 was the last waiting
			},
		},
		{
			name:   "Pods of another attempt or outside the group do not wait",
			pods:   []*corev1.Pod{tallyPod("a", "1"), tallyPod("old", "1", attempt1), tallyPod("init", "", initializer)},
			gather: gatheringAt("2"),
			events: []event{
				{"old", tallyPod("old", "2", attempt1), false},
				{"init", tallyPod("init", "", initializer, restarting), false},
				{"a", tallyPod("a", "2"), true},
			},
		},
		{
			name:   "a Pod relabelled into another attempt",
			pods:   []*corev1.Pod{tallyPod("a", "1"), tallyPod("b", "1")},
			gather: gatheringAt("2"),
			events: []event{
				{"a", tallyPod("a", "1", attempt1), true},
				{"b", tallyPod("b", "2"), true},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tally := newPodTally()
			for _, pod := range tc.pods {
				tally.observe(pod.Name, pod)
			}
			tally.publish(tc.gather)
			for i, e := range tc.events {
				if got := tally.observe(e.name, e.pod); got != e.want {
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
		before, after *gather
		wantLookAgain bool
	}{
		{name: "a new gather with Pods waiting", pods: []*corev1.Pod{tallyPod("a", "1")}, after: gatheringAt("2")},
		// Their joins were weighed while the group was in sync, where
		// every event counts; but a gather published after them, with
		// every Pod joined already, would otherwise wait for an event.
		{name: "a new gather every Pod joined already", pods: []*corev1.Pod{tallyPod("a", "2")}, after: gatheringAt("2"), wantLookAgain: true},
		{name: "the same gather again", pods: []*corev1.Pod{tallyPod("a", "2")}, before: gatheringAt("2"), after: gatheringAt("2")},
		{name: "in sync", pods: []*corev1.Pod{tallyPod("a", "2")}, before: gatheringAt("2")},
		{name: "a gather with no Pod yet: nothing waits, so look again (once)", after: gatheringAt("1"), wantLookAgain: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tally := newPodTally()
			for _, pod := range tc.pods {
				tally.observe(pod.Name, pod)
			}
			tally.publish(tc.before)
			if got := tally.publish(tc.after); got != tc.wantLookAgain {
				t.Errorf("publish: look again = %t, want %t", got, tc.wantLookAgain)
			}
		})
	}
}
