package jobsetcontroller

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"sync/atomic"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/api/scheme"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// BenchmarkReconcileInPlace measures one reconcile of a synced
// InPlaceRestart JobSet of N Pods (4 per Job): list Jobs and Pods, decide,
// write nothing. Lists are served from memory as the manager's cache serves
// them to the reconciler, which lists with UnsafeDisableDeepCopy: no copies.
// (controller-runtime's fake client would measure its own JSON round trips
// instead: about 90% of the time.)
func BenchmarkReconcileInPlace(b *testing.B) {
	for _, pods := range []int32{1000, 5000} {
		b.Run(fmt.Sprintf("pods=%d", pods), func(b *testing.B) {
			r, req, writes := syncedInPlaceJobSet(b, pods/4, 4)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Reconcile(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			// A write here would be measured as part of the reconcile:
			// the objects would not be what the controller leaves them as.
			if n := writes.Load(); n > 0 {
				b.Fatalf("the reconciles of a synced JobSet wrote %d times", n)
			}
		})
	}
}

// syncedInPlaceJobSet also returns how many writes the reconciler made
// since its first reconcile.
func syncedInPlaceJobSet(b *testing.B, jobs, podsPerJob int32) (*Reconciler, ctrl.Request, *atomic.Int64) {
	r, req, _ := inPlaceJobSet(b, jobs, podsPerJob, 3, 2)
	return r, req, r.client.(cachedLists).writes
}

// inPlaceJobSet is a reconciler of an InPlaceRestart JobSet at the given
// epochs, its Jobs and Pods (the Pods at the synced epoch, labelled from
// their Jobs' templates) served from memory, after its first reconcile.
func inPlaceJobSet(tb testing.TB, jobs, podsPerJob, synced, deprecated int32) (*Reconciler, ctrl.Request, []*corev1.Pod) {
	tb.Helper()
	s, err := scheme.New()
	if err != nil {
		tb.Fatal(err)
	}
	js := wrappers.MakeJobSet("trainer", "ns").RestartStrategy(jobset.InPlaceRestart).MaxRestarts(10).
		EnableDNSHostnames(false).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(jobs).Pods(podsPerJob).InPlaceReady().Obj()).Obj()
	js.UID = types.UID("uid-1")
	js.Status.SyncedEpoch, js.Status.DeprecatedEpoch = ptr.To(synced), ptr.To(deprecated)

	objects := []client.Object{js}
	for _, at := range desiredJobs(js) {
		job := constructJob(js, at)
		job.Status.Active, job.Status.Ready = podsPerJob, ptr.To(podsPerJob)
		objects = append(objects, job)
		for p := range podsPerJob {
			// As the Job controller creates them: its Pods name their Job
			// and completion index.
			labels := maps.Clone(job.Spec.Template.Labels)
			labels[batchv1.JobNameLabel] = job.Name
			objects = append(objects, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
				Name:      job.Name + "-" + strconv.Itoa(int(p)),
				Namespace: js.Namespace,
				Labels:    labels,
				Annotations: map[string]string{jobset.EpochKey: strconv.Itoa(int(synced)),
					batchv1.JobCompletionIndexAnnotation: strconv.Itoa(int(p))},
				Finalizers: []string{jobset.GroupMemberFinalizer}, // held, as the controller holds every member
			}, Spec: job.Spec.Template.Spec, Status: corev1.PodStatus{Phase: corev1.PodRunning}})
		}
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objects...).
		WithStatusSubresource(js, &corev1.Pod{}).
		WithIndex(&batchv1.Job{}, JobOwnerUIDIndex, indexJobByOwnerUID).
		WithIndex(&corev1.Pod{}, PodJobSetNameIndex, indexPodByJobSetName).
		Build()
	var jobList batchv1.JobList
	var podList corev1.PodList
	var pods []*corev1.Pod
	for _, o := range objects[1:] {
		switch o := o.(type) {
		case *batchv1.Job:
			jobList.Items = append(jobList.Items, *o)
		case *corev1.Pod:
			podList.Items = append(podList.Items, *o)
			pods = append(pods, o)
		}
	}
	writes := &atomic.Int64{}
	counted := interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			writes.Add(1)
			return c.Create(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			writes.Add(1)
			return c.Delete(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			writes.Add(1)
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			writes.Add(1)
			return c.Patch(ctx, obj, patch, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			writes.Add(1)
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			writes.Add(1)
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	})
	r := NewReconciler(cachedLists{Client: counted, jobs: jobList, pods: podList, writes: writes}, events.NewFakeRecorder(100))
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(js)}
	// The first reconcile writes replicatedJobsStatus; the benchmark measures
	// the steady state after it.
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		tb.Fatal(err)
	}
	writes.Store(0)
	return r, req, pods
}

// cachedLists answers Job and Pod lists from memory without copies, as the
// informer cache does for UnsafeDisableDeepCopy lists; everything else goes
// to the wrapped client.
type cachedLists struct {
	client.Client
	jobs batchv1.JobList
	pods corev1.PodList
	// writes counts every write through Client.
	writes *atomic.Int64
}

func (c cachedLists) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	switch list := list.(type) {
	case *batchv1.JobList:
		list.Items = c.jobs.Items
	case *corev1.PodList:
		list.Items = c.pods.Items
	default:
		return c.Client.List(ctx, list, opts...)
	}
	return nil
}
