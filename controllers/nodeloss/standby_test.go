package nodeloss

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/fastjobset/jobset/tools/testing/framework"
)

// A replica that does not lead follows the nodes' Leases all the same, on
// envtest's API server: when a leader's term ends under load and it takes
// over, it knows how long each node has been silent, instead of counting
// from then and holding a lost node's members a whole bound longer.
func TestStandbyTracksLeases(t *testing.T) {
	env, err := framework.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	// Another replica leads for the whole test.
	const lock = "jobset-controller.jobset.x-k8s.io"
	now := metav1.NowMicro()
	held := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: lock, Namespace: "default"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("the-leader"), LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime: &now, RenewTime: &now}}
	if err := env.Client.Create(ctx, held); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:         env.Scheme,
		LeaderElection: true, LeaderElectionID: lock, LeaderElectionNamespace: "default",
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&coordinationv1.Lease{}: {Namespaces: map[string]cache.Config{"kube-node-lease": {}}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	standby := NewController(mgr.GetClient(), mgr.GetAPIReader(), nil)
	if err := standby.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()

	renewed := metav1.NowMicro()
	node := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "gpu-7", Namespace: "kube-node-lease"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("gpu-7"), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &renewed}}
	if err := env.Client.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	var interval time.Duration
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		var known bool
		_, interval, known = standby.Tracker.Silence("gpu-7")
		return known, nil
	}); err != nil {
		t.Fatalf("the standby's tracker never saw node gpu-7's Lease (%v): it would count the node's silence only from when it leads", err)
	}
	if interval != 10*time.Second {
		t.Errorf("renew interval %s, want 10s: a quarter of the Lease's duration", interval)
	}
	select {
	case <-mgr.Elected():
		t.Fatal("the replica led: the test's lock was not held by another")
	default:
	}
}
