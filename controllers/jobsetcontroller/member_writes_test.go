package jobsetcontroller

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/api/scheme"
)

// Holding or releasing the members of a large group is a patch a Pod: one
// after another, 10000 of them would keep a new group from syncing, and
// a deleted JobSet's Pods from going, for minutes. Each patch here waits
// until several are in flight at once, so members written one at a time
// never get past the first.
func TestMemberWritesRunSideBySide(t *testing.T) {
	const pods, together = 8, 4
	for name, write := range map[string]func(r *Reconciler, ctx context.Context, pods []*corev1.Pod) error{
		"hold":    (*Reconciler).holdMembers,
		"release": (*Reconciler).releaseMembers,
	} {
		t.Run(name, func(t *testing.T) {
			s, err := scheme.New()
			if err != nil {
				t.Fatal(err)
			}
			var objects []client.Object
			var members []*corev1.Pod
			for i := range pods {
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("worker-%d", i), Namespace: "ns"}}
				if name == "release" {
					pod.Finalizers = []string{jobset.GroupMemberFinalizer}
				}
				objects = append(objects, pod)
				members = append(members, pod)
			}
			var mu sync.Mutex
			inFlight := 0
			enough := make(chan struct{})
			c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(s).WithObjects(objects...).Build(), interceptor.Funcs{
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					mu.Lock()
					inFlight++
					if inFlight == together {
						close(enough)
					}
					mu.Unlock()
					select {
					case <-enough:
					case <-ctx.Done():
						return ctx.Err()
					}
					return c.Patch(ctx, obj, patch, opts...)
				},
			})
			r := NewReconciler(c, events.NewFakeRecorder(10))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := write(r, ctx, members); err != nil {
				t.Fatalf("%d members written one at a time at most: %v", together-1, err)
			}
			for _, member := range members {
				var pod corev1.Pod
				if err := c.Get(ctx, client.ObjectKeyFromObject(member), &pod); err != nil {
					t.Fatal(err)
				}
				if held := slices.Contains(pod.Finalizers, jobset.GroupMemberFinalizer); held != (name == "hold") {
					t.Errorf("Pod %s holds the group-member finalizer: %v", pod.Name, held)
				}
			}
		})
	}
}
