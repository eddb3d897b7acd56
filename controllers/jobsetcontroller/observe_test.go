package jobsetcontroller

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/api/scheme"
)

// The fresh read takes the JobSet's Pods page by page, as the API server
// pages a list (limit and continue), and keeps each as the cache would:
// every Pod, none twice, none whole.
func TestReadFreshPodsPageByPage(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	js := &jobset.JobSet{ObjectMeta: metav1.ObjectMeta{Name: "js", Namespace: "ns", UID: "js-uid"}}
	const count = freshPageSize + 3
	var objects []client.Object
	for i := range count {
		pod := servedPod()
		pod.Name, pod.UID, pod.ResourceVersion = fmt.Sprintf("js-workers-%04d", i), "", ""
		pod.Namespace, pod.Labels[jobset.JobSetUIDKey] = js.Namespace, string(js.UID)
		objects = append(objects, pod)
	}
	objects = append(objects, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "another-jobsets", Namespace: "ns",
		Labels: map[string]string{jobset.JobSetUIDKey: "other-uid"}}})
	// The fake client lists everything at once: page its answers as the
	// API server does, the continue token naming the next Pod.
	var pages []string
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objects...).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			o := (&client.ListOptions{}).ApplyOptions(opts)
			if err := c.List(ctx, list, opts...); err != nil || o.Limit == 0 {
				return err
			}
			pods := list.(*corev1.PodList)
			slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
			from, _ := strconv.Atoi(o.Continue)
			to := min(from+int(o.Limit), len(pods.Items))
			pages = append(pages, fmt.Sprintf("%d-%d", from, to))
			pods.Items, pods.Continue = pods.Items[from:to], ""
			if to < len(objects)-1 {
				pods.Continue = strconv.Itoa(to)
			}
			return nil
		},
	}).Build()
	r := NewReconciler(c, events.NewFakeRecorder(1))

	pods, err := r.readFreshPods(context.Background(), js)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"0-500", "500-503"}; !slices.Equal(pages, want) {
		t.Errorf("pages read %v, want %v", pages, want)
	}
	if len(pods) != count {
		t.Fatalf("read %d Pods, want %d", len(pods), count)
	}
	for i, pod := range pods {
		if want := fmt.Sprintf("js-workers-%04d", i); pod.Name != want {
			t.Fatalf("Pod %d is %s, want %s", i, pod.Name, want)
		}
		if pod.Spec.Containers[0].Image != "" || pod.Status.PodIP != "" {
			t.Fatalf("Pod %s is kept whole, not as the cache keeps it", pod.Name)
		}
	}
}
