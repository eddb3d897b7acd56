package jobsetcontroller

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
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

// The mark that replaces a Pod off its node is part of the group restart
// its last failure starts. Should writing it fail (a write that timed out
// under load), the next reconcile still makes it: the group must not sync
// again around a Pod it meant to move, and the restart counts once.
func TestReplacedOffNodeAfterAFailedMark(t *testing.T) {
	ctx := context.Background()
	r, req, _ := inPlaceJobSet(t, 2, 1, 3, 2) // in sync at 3
	lists := r.client.(cachedLists)
	failing := &lists.pods.Items[0]
	stored := &corev1.Pod{}
	if err := lists.Get(ctx, client.ObjectKeyFromObject(failing), stored); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, pod := range []*corev1.Pod{failing, stored} {
		pod.Annotations[jobset.EpochKey] = "4" // its worker failed, and its agent joined the next epoch
		pod.Annotations[FailuresInPlaceAnnotation] = now.Add(-2*time.Minute).UTC().Format(time.RFC3339) + "," +
			now.Add(-time.Minute).UTC().Format(time.RFC3339)
		pod.Finalizers = append(pod.Finalizers, batchv1.JobTrackingFinalizer)
		pod.Spec.NodeName = "gpu-7"
	}
	if err := lists.Update(ctx, stored); err != nil {
		t.Fatal(err)
	}
	refusing := &refuseJobTrackingRelease{Client: lists}
	r.client = refusing
	if _, err := r.Reconcile(ctx, req); err == nil || !refusing.refused.Load() {
		t.Fatalf("Reconcile: %v; want the refused write's error", err)
	}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatalf("Reconcile after the refused write: %v", err)
	}
	got := &corev1.Pod{}
	if err := lists.Get(ctx, client.ObjectKeyFromObject(failing), got); err != nil {
		t.Fatal(err)
	}
	if mark := jobset.ControllerMark(got); got.Status.Phase != corev1.PodFailed || mark == nil || mark.Type != ConditionReplacedOffNode {
		t.Errorf("Pod %s: phase %s, mark %v; want Failed, replaced off its node", got.Name, got.Status.Phase, mark)
	}
	js := &jobset.JobSet{}
	if err := lists.Get(ctx, req.NamespacedName, js); err != nil {
		t.Fatal(err)
	}
	if js.Status.InPlaceRestarts != 1 {
		t.Errorf("inPlaceRestarts %d; want 1: one failure, one group restart", js.Status.InPlaceRestarts)
	}
}

// refuseJobTrackingRelease fails the first release of a Pod's Job tracking
// finalizer, the first of the two writes of a mark.
type refuseJobTrackingRelease struct {
	client.Client
	refused atomic.Bool
}

func (c *refuseJobTrackingRelease) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if patch == jobTrackingRelease && c.refused.CompareAndSwap(false, true) {
		return context.DeadlineExceeded
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}
