package jobsetcontroller

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/api/scheme"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// A reconcile that runs before the cache shows the Jobs an earlier one
// created finds their names taken. Taken by this JobSet's own Jobs, that is
// no error (it logged "the name is taken by a Job this JobSet does not
// own" and backed off); taken by another's, it still is.
func TestCreatingJobsTheCacheDoesNotShowYet(t *testing.T) {
	for name, tc := range map[string]struct {
		owner     types.UID
		wantTaken bool
	}{
		"created by this JobSet":    {owner: "js-uid"},
		"held by an earlier JobSet": {owner: "earlier-uid", wantTaken: true},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, err := scheme.New()
			if err != nil {
				t.Fatal(err)
			}
			js := wrappers.MakeJobSet("js", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
			js.UID = "js-uid"
			owner := js.DeepCopy()
			owner.UID = tc.owner
			var existing []client.Object
			for _, job := range planChildren(js, childJobs{}, nil, false, nil).create {
				job.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, jobset.GroupVersion.WithKind("JobSet"))}
				existing = append(existing, job)
			}
			if len(existing) == 0 {
				t.Fatal("the JobSet wants no Job")
			}
			// The cache: the JobSet, and none of the Jobs the API server has.
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(append(existing, js)...).WithStatusSubresource(&jobset.JobSet{}).
				WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
					if _, ok := list.(*batchv1.JobList); ok {
						return nil
					}
					return c.List(ctx, list, opts...)
				}}).Build()
			r := NewReconciler(c, events.NewFakeRecorder(100))

			result, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(js)})
			if tc.wantTaken {
				if err == nil || !strings.Contains(err.Error(), "the name is taken by a Job this JobSet does not own") {
					t.Errorf("Reconcile: %v; want the name taken by a Job this JobSet does not own", err)
				}
				return
			}
			if err != nil {
				t.Errorf("Reconcile: %v; want no error: the Jobs are this JobSet's, the cache is behind", err)
			}
			if result.RequeueAfter == 0 {
				t.Errorf("Reconcile: %+v; want a requeue, should the Jobs' events not come", result)
			}
		})
	}
}
