package nodeloss

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The controller's decisions, node by node, on a fake clock: when it looks
// again, what it sends the JobSet reconciler, which taints it removes.
func TestControllerReconcile(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := testingclock.NewFakePassiveClock(start)
	taintedByAnEarlierLeader := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "old"},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "other", Effect: corev1.TaintEffectNoSchedule}, {Key: Taint, Effect: corev1.TaintEffectNoSchedule}}}}
	quiet := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	c := fake.NewClientBuilder().WithObjects(taintedByAnEarlierLeader, quiet).Build()
	ctl := NewController(c, c, NewTracker(clock, QuietGap))

	renewals := 0
	renew := func(node string) {
		renewals++
		ctl.term.Observe(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node},
			Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: start.Add(time.Duration(renewals) * time.Second)}, LeaseDurationSeconds: ptr.To[int32](40)}})
	}
	// step lets time pass while node "old" renews every few seconds, so
	// that the controller stays in contact.
	step := func(d time.Duration) {
		for ; d > 0; d -= 3 * time.Second {
			clock.SetTime(clock.Now().Add(min(d, 3*time.Second)))
			renew("old")
		}
	}
	reconcileNode := func(node string) reconcile.Result {
		t.Helper()
		result, err := ctl.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Name: node}})
		if err != nil {
			t.Fatalf("Reconcile(%s): %v", node, err)
		}
		return result
	}
	sent := func() []string {
		var nodes []string
		for {
			select {
			case e := <-ctl.suspects:
				nodes = append(nodes, e.Object.GetName())
			default:
				return nodes
			}
		}
	}
	taints := func(node string) []string {
		t.Helper()
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: node}, n); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, taint := range n.Spec.Taints {
			keys = append(keys, taint.Key)
		}
		return keys
	}
	expectSent := func(want ...string) {
		t.Helper()
		if got := sent(); len(got) != len(want) || (len(want) == 1 && got[0] != want[0]) {
			t.Errorf("sent %v to the JobSet reconciler, want %v", got, want)
		}
	}

	renew("old")
	renew("a")
	// A node renewing is looked at again when it would turn suspect.
	step(4 * time.Second)
	if got, want := reconcileNode("a").RequeueAfter, SuspectAfter(DefaultRenewInterval)-4*time.Second+checkSlack; got != want {
		t.Errorf("a renewing node is looked at again after %s, want %s", got, want)
	}
	expectSent()
	// The node an earlier leader tainted renews: its taint goes, the
	// others' stay.
	reconcileNode("old")
	if got := taints("old"); len(got) != 1 || got[0] != "other" {
		t.Errorf("taints of a node that renews again = %v, want [other]", got)
	}

	// Silent past a renew interval and a half: sent, once a spell.
	step(SuspectAfter(DefaultRenewInterval) - 4*time.Second + checkSlack)
	if got := reconcileNode("a"); got.RequeueAfter != 0 {
		t.Errorf("a suspect node is looked at again after %s, want only on its next renewal", got.RequeueAfter)
	}
	expectSent("a")
	reconcileNode("a")
	expectSent()

	// Declared lost and tainted by the JobSet reconciler; it renews again.
	if err := SetTaint(ctx, c, c, "a", true); err != nil {
		t.Fatal(err)
	}
	renew("a")
	reconcileNode("a")
	if got := taints("a"); len(got) != 0 {
		t.Errorf("taints of a lost node that renews again = %v, want none", got)
	}
	// A new spell of silence is sent anew.
	step(SuspectAfter(DefaultRenewInterval) + checkSlack)
	reconcileNode("a")
	expectSent("a")

	// A Lease deleted: the node is forgotten, nothing sent.
	ctl.term.Forget("a")
	if got := reconcileNode("a"); got.RequeueAfter != 0 {
		t.Errorf("a node without a Lease is looked at again after %s, want never", got.RequeueAfter)
	}
	expectSent()
}
