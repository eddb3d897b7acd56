package placementcontroller

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

const rack = "example.com/rack"

func rackNode(name, domain string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{rack: domain}}}
}

// jobPod is Pod index of an exclusively placed Job, running on node;
// pinnedTo, for a follower, is the domain its admission pinned it to.
func jobPod(name string, index, node, pinnedTo string, phase corev1.PodPhase) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name),
			Labels:      map[string]string{jobset.JobKey: "key", batchv1.JobCompletionIndexAnnotation: index},
			Annotations: map[string]string{jobset.ExclusiveKey: rack}},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: phase},
	}
	if pinnedTo != "" {
		pod.Spec.NodeSelector = map[string]string{rack: pinnedTo}
	}
	return pod
}

// The leader's replacement runs in rack-b, its new follower pinned there.
// The reconcile of the failed leader in rack-a may read that leader from a
// cache that has not yet seen it fail, and its followers from the same
// cache a moment later: the follower must stay. The replacement still has
// the follower pinned to rack-a deleted.
func TestReconcileReadsTheLeaderWithItsFollowers(t *testing.T) {
	failedLeader := jobPod("leader-a", "0", "node-a", "", corev1.PodFailed)
	leader := jobPod("leader-b", "0", "node-b", "", corev1.PodRunning)
	follower := jobPod("follower-b", "1", "node-b", "rack-b", corev1.PodRunning)
	misplaced := jobPod("follower-a", "2", "node-a", "rack-a", corev1.PodRunning)
	beforeItFailed := failedLeader.DeepCopy()
	beforeItFailed.Status.Phase = corev1.PodRunning
	c := fake.NewClientBuilder().
		WithObjects(rackNode("node-a", "rack-a"), rackNode("node-b", "rack-b"), failedLeader, leader, follower, misplaced).
		WithInterceptorFuncs(interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if key.Name == failedLeader.Name {
					beforeItFailed.DeepCopyInto(obj.(*corev1.Pod))
					return nil
				}
				return c.Get(ctx, key, obj, opts...)
			},
		}).Build()
	r := NewReconciler(c, events.NewFakeRecorder(10))
	ctx := context.Background()

	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(failedLeader)}); err != nil {
		t.Fatal(err)
	}
	for _, pod := range []*corev1.Pod{follower, misplaced} {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}); err != nil {
			t.Errorf("after the failed leader's reconcile, follower %s: %v", pod.Name, err)
		}
	}

	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(leader)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(follower), &corev1.Pod{}); err != nil {
		t.Errorf("the follower pinned to its leader's domain: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(misplaced), &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("the follower pinned to the failed leader's domain is still there (%v); want it deleted", err)
	}
}
