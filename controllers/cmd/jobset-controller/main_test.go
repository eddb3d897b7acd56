package main

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/jobsetcontroller"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/outage"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// The lease of these tests: shorter than install.yaml's, so that the
// outages that must outlast it stay short.
var testLease = options{
	leaderElect: true, probeAddr: "0", metricsAddr: "0", qps: 50, burst: 100, concurrency: 2,
	leaseDuration: 2 * time.Second, renewDeadline: 1500 * time.Millisecond, retryPeriod: 200 * time.Millisecond,
}

// TestSurvivesAPIServerOutage takes the API server away for three renew
// deadlines: the controller loses its lease, must not exit, and must
// reconcile again soon after the API server is back.
func TestSurvivesAPIServerOutage(t *testing.T) {
	c := startCluster(t)
	proxy := c.proxy(t)
	r := c.startReplica(t, proxy)
	c.waitForLeader(t, r)
	c.expectReconciled(t, r, "before")

	outageLength := 3 * testLease.renewDeadline
	proxy.Down()
	select {
	case err := <-r.done:
		t.Fatalf("the controller exited %s into an API server outage: %v", outageLength, err)
	case <-time.After(outageLength):
	}
	if err := proxy.Up(); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	c.expectReconciled(t, r, "after")
	t.Logf("recovery: a JobSet created when the API server came back after %s was reconciled %.2f s later", outageLength, time.Since(back).Seconds())
	if got := c.holder(t); got != r.identity {
		t.Errorf("lease held by %q after the outage, want the same replica %q", got, r.identity)
	}
}

// TestPartitionedLeaderStandsDown cuts only the leader off the API server:
// the standby takes the lease once it expires, and the old leader stays up,
// writes nothing more, and campaigns again as a standby when it is back.
func TestPartitionedLeaderStandsDown(t *testing.T) {
	c := startCluster(t)
	pa, pb := c.proxy(t), c.proxy(t)
	a := c.startReplica(t, pa)
	c.waitForLeader(t, a)
	b := c.startReplica(t, pb)

	pa.Down()
	cut := time.Now()
	c.waitForLeader(t, b, a)
	t.Logf("failover: the standby took the lease %.2f s after the leader was cut off (lease duration %s)", time.Since(cut).Seconds(), testLease.leaseDuration)
	c.expectReconciled(t, b, "by-standby")

	if err := pa.Up(); err != nil {
		t.Fatal(err)
	}
	c.expectReconciled(t, b, "after-partition")
	select {
	case err := <-a.done:
		t.Fatalf("the partitioned leader exited: %v", err)
	default:
	}
	if got := c.holder(t); got != b.identity {
		t.Errorf("lease held by %q, want the new leader %q", got, b.identity)
	}
}

// TestGracefulStopHandsOverAtOnce stops the leader as a rolling update
// does: it releases the lease, and the standby leads without waiting for
// it to expire.
func TestGracefulStopHandsOverAtOnce(t *testing.T) {
	c := startCluster(t)
	a := c.startReplica(t, nil)
	c.waitForLeader(t, a)
	b := c.startReplica(t, nil)

	stopped := time.Now()
	a.stop()
	err := <-a.done
	a.done <- err // for the cleanup
	if err != nil {
		t.Errorf("the stopped leader returned %v", err)
	}
	c.waitForLeader(t, b, a)
	took := time.Since(stopped)
	t.Logf("handover: the standby led %.2f s after the leader was told to stop", took.Seconds())
	if took >= testLease.leaseDuration {
		t.Errorf("the standby waited %s, as long as the lease lasts (%s): the leader did not release it", took, testLease.leaseDuration)
	}
	c.expectReconciled(t, b, "after-handover")
}

type cluster struct {
	env *framework.Environment
	ns  string
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	env, err := framework.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ns, err := framework.CreateNamespace(context.Background(), env.Client, "jobset-system")
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{env: env, ns: ns}
}

func (c *cluster) proxy(t *testing.T) *outage.Proxy {
	t.Helper()
	p, err := outage.Start(c.env.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// replica is one controller process's run.
type replica struct {
	identity string
	stop     context.CancelFunc
	done     chan error
}

// startReplica runs the controller binary's run against the API server,
// through proxy if given.
func (c *cluster) startReplica(t *testing.T, proxy *outage.Proxy) *replica {
	t.Helper()
	if proxy == nil {
		return c.startReplicaVia(t, nil)
	}
	return c.startReplicaVia(t, proxy.Config)
}

// startReplicaVia runs the controller with the config via makes of the API
// server's, and the options of testLease as adjust changes them.
func (c *cluster) startReplicaVia(t *testing.T, via func(*rest.Config) *rest.Config, adjust ...func(*options)) *replica {
	t.Helper()
	cfg := c.env.Config
	if via != nil {
		cfg = via(cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{stop: cancel, done: make(chan error, 1)}
	o := testLease
	o.leaderElectionNS = c.ns
	for _, a := range adjust {
		a(&o)
	}
	go func() { r.done <- run(ctx, cfg, o) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-r.done:
			// A stopped controller returns nil (an error is reported
			// again here if the test already saw it).
			if err != nil {
				t.Errorf("the controller returned %v when stopped", err)
			}
		case <-time.After(framework.Timeout):
			t.Errorf("the controller did not stop within %s", framework.Timeout)
		}
	})
	return r
}

func (c *cluster) holder(t *testing.T) string {
	t.Helper()
	var l coordinationv1.Lease
	if err := c.env.Client.Get(context.Background(), client.ObjectKey{Namespace: c.ns, Name: leaseName}, &l); err != nil {
		return ""
	}
	return ptr.Deref(l.Spec.HolderIdentity, "")
}

// waitForLeader waits until r holds the lease. A replica's identity is
// learnt from the lease: the first to start leads first, and the lease
// changes hands only to the one other replica.
func (c *cluster) waitForLeader(t *testing.T, r *replica, others ...*replica) {
	t.Helper()
	poll(t, r, "the lease", func() bool {
		h := c.holder(t)
		if h == "" {
			return false
		}
		for _, o := range others {
			if h == o.identity {
				return false
			}
		}
		if r.identity == "" {
			r.identity = h
		}
		return h == r.identity
	})
}

// expectReconciled creates a JobSet and waits until the controller made
// its Job, which only the leader does.
func (c *cluster) expectReconciled(t *testing.T, r *replica, name string) {
	t.Helper()
	ctx := context.Background()
	js := wrappers.MakeJobSet(name, c.ns).ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
	if err := c.env.Client.Create(ctx, js); err != nil {
		t.Fatal(err)
	}
	poll(t, r, "the Job of JobSet "+name, func() bool {
		var jobs batchv1.JobList
		err := c.env.Client.List(ctx, &jobs, client.InNamespace(c.ns), client.MatchingLabels{jobset.JobSetNameKey: name})
		return err == nil && len(jobs.Items) > 0
	})
}

// poll waits for cond, failing at once if the replica's run returns.
func poll(t *testing.T, r *replica, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), framework.Interval, framework.Timeout, true, func(context.Context) (bool, error) {
		select {
		case err := <-r.done:
			r.done <- err
			t.Fatalf("the controller exited while waiting for %s: %v", what, err)
		default:
		}
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func TestClientConfig(t *testing.T) {
	given := &rest.Config{Host: "https://127.0.0.1:6443", QPS: 5, Burst: 10}
	got := clientConfig(given, options{qps: 500, burst: 600})
	if !got.DisableCompression {
		t.Error("DisableCompression = false: the API server gzips the controller's lists of thousands of Pods, at both ends' CPU")
	}
	if got.QPS != 500 || got.Burst != 600 {
		t.Errorf("QPS, Burst = %v, %d; want the flags' 500, 600", got.QPS, got.Burst)
	}
	if given.DisableCompression || given.QPS != 5 {
		t.Errorf("the given config was changed: %+v", given)
	}
}

// TestReleaseGroupMembers is the rollback's step: with the controller
// stopped, every Pod it holds is let go, the Job controller's finalizer
// kept, and a Pod being deleted goes.
func TestReleaseGroupMembers(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	pod := func(name string, finalizers ...string) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: name, Labels: map[string]string{jobset.JobSetNameKey: "trainer"}, Finalizers: finalizers},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "worker"}}},
		}
		if err := c.env.Client.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	running := pod("running", jobset.GroupMemberFinalizer, batchv1.JobTrackingFinalizer)
	deleted := pod("deleted", jobset.GroupMemberFinalizer)
	free := pod("free", batchv1.JobTrackingFinalizer)
	if err := c.env.Client.Delete(ctx, deleted); err != nil {
		t.Fatal(err)
	}

	released, err := jobsetcontroller.ReleaseGroupMembers(ctx, c.env.Client)
	if err != nil || released != 2 {
		t.Fatalf("released %d Pods (%v), want 2", released, err)
	}
	for p, want := range map[*corev1.Pod][]string{running: {batchv1.JobTrackingFinalizer}, free: {batchv1.JobTrackingFinalizer}} {
		got := &corev1.Pod{}
		if err := c.env.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Finalizers, want) {
			t.Errorf("Pod %s has finalizers %v, want %v", p.Name, got.Finalizers, want)
		}
	}
	if err := c.env.Client.Get(ctx, client.ObjectKeyFromObject(deleted), &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("the deleted Pod is still there (%v): it should have gone once released", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	valid := options{nodeLossThreshold: 30 * time.Second, repeatedFailureLimit: 3, repeatedFailureWindow: 10 * time.Minute}
	if err := valid.validate(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
	off := options{}
	if err := off.validate(); err != nil {
		t.Errorf("everything off: %v", err)
	}
	bad := options{nodeLossThreshold: -time.Second, repeatedFailureLimit: 2}
	err := bad.validate()
	for _, want := range []string{"--node-loss-threshold=-1s", "--repeated-failure-window=0s"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
}
