package jobsetcontroller

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/fastjobset/jobset/api/scheme"
)

func TestRecordFailureInPlace(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	policy := repeatedFailures{Limit: 3, Window: 10 * time.Minute}
	pod := func(annotation string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "w-0"}, Spec: corev1.PodSpec{NodeName: "gpu-7"}}
		if annotation != "" {
			p.Annotations = map[string]string{FailuresInPlaceAnnotation: annotation}
		}
		return p
	}
	ago := func(d time.Duration) string { return now.Add(-d).Format(time.RFC3339) }
	cases := []struct {
		name, annotation, want string
		replace                bool
	}{
		{"the first failure", "", now.Format(time.RFC3339), false},
		{"the second", ago(time.Minute), ago(time.Minute) + "," + now.Format(time.RFC3339), false},
		{"the third within the window: replaced off the node", ago(5*time.Minute) + "," + ago(time.Minute),
			ago(5*time.Minute) + "," + ago(time.Minute) + "," + now.Format(time.RFC3339), true},
		{"older failures leave the window", ago(time.Hour) + "," + ago(11*time.Minute) + "," + ago(time.Minute),
			ago(time.Minute) + "," + now.Format(time.RFC3339), false},
		{"only the last limit are kept", ago(4*time.Minute) + "," + ago(3*time.Minute) + "," + ago(2*time.Minute),
			ago(3*time.Minute) + "," + ago(2*time.Minute) + "," + now.Format(time.RFC3339), true},
		{"an unreadable annotation counts nothing", "yesterday", now.Format(time.RFC3339), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := recordFailureInPlace(pod(tc.annotation), now, policy)
			if f.annotation != tc.want || f.replace != tc.replace {
				t.Errorf("annotation %q, replace %v; want %q, %v", f.annotation, f.replace, tc.want, tc.replace)
			}
			if f.replace && !strings.Contains(f.why, "failed in place 3 times within 10m0s on node gpu-7") {
				t.Errorf("why %q does not name the count, the window and the node", f.why)
			}
		})
	}
	if f := failedInPlace("w-0", []corev1.Pod{*pod("")}, now, repeatedFailures{}); f != nil {
		t.Errorf("with the policy off: %+v", f)
	}
}

func TestPhaseWrittenBack(t *testing.T) {
	marked := corev1.PodCondition{Type: ConditionReplacedOffNode, Status: corev1.ConditionTrue, Reason: ReasonRepeatedFailures}
	lost := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: ReasonNodeLost}
	pod := func(name string, phase corev1.PodPhase, conditions ...corev1.PodCondition) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: phase, Conditions: conditions}}
	}
	deleting := pod("marked-deleting", corev1.PodRunning, marked)
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	pods := []corev1.Pod{
		pod("marked-failed", corev1.PodFailed, marked),
		pod("marked-written-back-running", corev1.PodRunning, marked),
		pod("marked-written-back-pending", corev1.PodPending, marked),
		pod("marked-succeeded", corev1.PodSucceeded, marked),
		deleting,
		pod("unmarked-running", corev1.PodRunning),
		pod("marked-false", corev1.PodRunning, corev1.PodCondition{Type: ConditionReplacedOffNode, Status: corev1.ConditionFalse}),
		pod("lost-failed", corev1.PodFailed, lost),
		pod("lost-written-back-running", corev1.PodRunning, lost),
		pod("evicted-running", corev1.PodRunning, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"}),
	}
	var got []string
	for _, p := range phaseWrittenBack(pods) {
		got = append(got, p.Name)
	}
	want := []string{"marked-written-back-running", "marked-written-back-pending", "lost-written-back-running"}
	if !slices.Equal(got, want) {
		t.Errorf("marked Failed again: %v; want %v", got, want)
	}
}

// A Pod whose kubelet wrote its phase back over the controller's mark is
// marked Failed again with the reason and message of its own mark.
func TestFailAgainWritesTheMarksReason(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	for name, mark := range map[string]corev1.PodCondition{
		"replaced off its node": {Type: ConditionReplacedOffNode, Status: corev1.ConditionTrue, Reason: ReasonRepeatedFailures,
			Message: "Pod w-0 failed in place 3 times within 10m0s on node gpu-7"},
		"its node lost": {Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: ReasonNodeLost,
			Message: "node gpu-7 has not renewed its Lease for 31s"},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "w-0", Namespace: "ns"},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{mark}}}
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(pod).WithStatusSubresource(&corev1.Pod{}).Build()
			r := NewReconciler(c, events.NewFakeRecorder(10))
			if err := r.failAgain(ctx, phaseWrittenBack([]corev1.Pod{*pod})); err != nil {
				t.Fatal(err)
			}
			got := &corev1.Pod{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Phase != corev1.PodFailed || got.Status.Reason != mark.Reason || got.Status.Message != mark.Message {
				t.Errorf("phase %s, reason %q, message %q; want Failed, %q, %q", got.Status.Phase, got.Status.Reason, got.Status.Message, mark.Reason, mark.Message)
			}
		})
	}
}
