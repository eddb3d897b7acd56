package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/features"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/differential"
	"github.com/fastjobset/jobset/tools/testing/peers"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// Differential specs: community JobSet v0.12.0's gated
// features, which its own e2e suite never turns on, run once under its
// controller with the gate on and once under ours with ours on: the same
// JobSet, in the same namespace under the same name (so that the keys
// derived from them agree), and the same failure; then what each made of
// it (tools/testing/differential: the stored status, the Jobs, the Pods,
// the JobSet's events) is compared field by field. TLSOptions' spec
// compares what each side's servers accept and refuse of TLS clients
// instead (differential_tls_test.go). Community JobSet is switched in as
// the migration specs do (label migration, as they need it built), and
// ours, as the suite deployed it, is back after the spec.
var _ = Describe("Differential against community JobSet", Serial, Label("migration"), func() {
	It("recreates only the failed Job under a RestartJob rule as community JobSet does", func(ctx context.Context) {
		d := startDifferential(ctx, features.RestartJob)
		ns := testNamespace(ctx)
		community := d.under(ctx, d.community, func(ctx context.Context) differential.Fields { return restartJobScenario(ctx, ns) })
		ours := d.under(ctx, d.oursGated, func(ctx context.Context) differential.Fields { return restartJobScenario(ctx, ns) })
		expectAgree(community, ours)
	})

	It("scales the Jobs of a running JobSet up by one Pod under ElasticJobSet as community JobSet does", func(ctx context.Context) {
		d := startDifferential(ctx, features.ElasticJobSet)
		ns := testNamespace(ctx)
		community := d.under(ctx, d.community, func(ctx context.Context) differential.Fields { return elasticScenario(ctx, ns) })
		ours := d.under(ctx, d.oursGated, func(ctx context.Context) differential.Fields { return elasticScenario(ctx, ns) })
		expectAgree(community, ours)
	})

	It("serves its webhook and metrics under a TLSOptions policy as community JobSet does", func(ctx context.Context) {
		tlsDifferential(ctx)
	})
})

// differentialRun is one spec's pair of controllers: community JobSet and
// ours, each with the spec's gates on, and ours as the suite deployed it,
// which is back after the spec.
type differentialRun struct {
	community, oursGated, ours *peers.Manifests
	// current is the one that runs.
	current *peers.Manifests
}

func startDifferential(ctx context.Context, gates ...features.Feature) *differentialRun {
	names := make([]string, len(gates))
	for i, g := range gates {
		names[i] = string(g)
	}
	d := &differentialRun{
		community: loadPeer(peers.CommunityJobSet.WithFeatureGates(names...)),
		oursGated: ourJobSet(names...),
		ours:      ourJobSet(),
	}
	d.current = d.ours
	DeferCleanup(func(ctx context.Context) { d.use(ctx, d.ours) }, NodeTimeout(10*time.Minute))
	return d
}

// use makes next the controller that runs: a switch from community JobSet
// to ours or back (peers.SwitchJobSet), or ours rolled to other flags.
func (d *differentialRun) use(ctx context.Context, next *peers.Manifests) {
	if d.current == next {
		return
	}
	step := "differential-" + next.Peer.Name
	if d.current.Peer.Name == next.Peer.Name {
		timedPeer(next.Peer.Name, "reconfigure", func() { Expect(next.Install(ctx, peerCluster())).To(Succeed(), step) })
	} else {
		switchJobSet(ctx, step, d.current, next)
	}
	d.current = next
}

// under runs scenario under side and returns what it made of it.
func (d *differentialRun) under(ctx context.Context, side *peers.Manifests, scenario func(context.Context) differential.Fields) differential.Fields {
	By("under " + side.Peer.Name + ", its gates on")
	d.use(ctx, side)
	return scenario(ctx)
}

// expectAgree fails with every field in which the two sides differ, but
// those of ignore (differential.Diff's patterns), which the caller expects
// and says why.
func expectAgree(community, ours differential.Fields, ignore ...string) {
	diff := differential.Diff(community, ours, ignore...)
	AddReportEntry("differential", fmt.Sprintf("fields=%d differences=%d", len(differential.Merge(community, ours)), len(diff)))
	Expect(diff).To(BeEmpty(), "community JobSet and ours disagree:\n%s", strings.Join(diff, "\n"))
}

// restartJobJobSet is two Jobs of one worker each (Recreate: no agent, no
// in-place group), whose failure policy recreates only a failed Job.
func restartJobJobSet(ns string) *jobset.JobSet {
	rj := workerReplicatedJob("workers").Replicas(2).Pods(1).Obj()
	rj.Template.Spec.BackoffLimit = ptr.To[int32](0)
	return wrappers.MakeJobSet("restart-job", ns).RestartStrategy(jobset.Recreate).MaxRestarts(3).
		FailurePolicyRule(jobset.FailurePolicyRule{Name: "restartFailedJob", Action: jobset.RestartJob}).
		ReplicatedJob(rj).Obj()
}

// restartJobScenario: the JobSet runs, the worker of Job index 1 exits 1,
// and once its Job is recreated and both workers run again, what the
// controller made of it; then the JobSet is deleted, with its Jobs and Pods.
func restartJobScenario(ctx context.Context, ns string) differential.Fields {
	js := restartJobJobSet(ns)
	Expect(k8sClient.Create(ctx, js)).To(Succeed())
	waitForSyncedWorkers(ctx, js, 2)
	before := jobUIDs(ctx, js)
	Expect(before).To(HaveLen(2))

	By("the worker of Job index 1 exits 1")
	exitWorker(ctx, ns, podOfJob(ctx, js, "restart-job-workers-1"), 1)

	By("its Job is recreated, the other kept, and both workers run")
	waitForSyncedWorkers(ctx, js, 2)
	out := settledOutcome(ctx, js, before, map[string]string{
		"job[restart-job-workers-1].recreated":    "true",
		"job[restart-job-workers-0].recreated":    "false",
		"job[restart-job-workers-0].status.ready": "1",
		"job[restart-job-workers-1].status.ready": "1",
		"pod[restart-job-workers-0/0].phase":      "Running",
		"pod[restart-job-workers-1/0].phase":      "Running",
		// The status has counted what the Jobs show.
		"status.replicatedJobsStatus[workers].active": "2",
		"status.replicatedJobsStatus[workers].ready":  "2",
	})
	deleteJobSet(ctx, js)
	return out
}

// settledOutcome waits until the outcome of js holds the fields of want,
// the state the scenario led to, and returns that look's outcome.
func settledOutcome(ctx context.Context, js *jobset.JobSet, before map[string]types.UID, want map[string]string) differential.Fields {
	var out differential.Fields
	Eventually(func(g Gomega) {
		out = outcome(ctx, g, js, before)
		for k, v := range want {
			g.Expect(out).To(HaveKeyWithValue(k, v))
		}
	}).Should(Succeed())
	return out
}

// elasticScenario: one Indexed Job of two workers runs; its parallelism
// and completions are raised to three in the JobSet; once the Job has
// scaled and three workers run, what the controller made of it; then the
// JobSet is deleted, with its Jobs and Pods.
func elasticScenario(ctx context.Context, ns string) differential.Fields {
	rj := workerReplicatedJob("workers").Replicas(1).Pods(2).Obj()
	rj.Template.Spec.BackoffLimit = ptr.To[int32](0)
	js := wrappers.MakeJobSet("elastic", ns).RestartStrategy(jobset.Recreate).ReplicatedJob(rj).Obj()
	Expect(k8sClient.Create(ctx, js)).To(Succeed())
	waitForSyncedWorkers(ctx, js, 2)
	before := jobUIDs(ctx, js)
	Expect(before).To(HaveLen(1))

	By("parallelism and completions raised from 2 to 3 on the running JobSet")
	Eventually(func() error {
		current := getJobSet(ctx, js)
		spec := &current.Spec.ReplicatedJobs[0].Template.Spec
		spec.Parallelism, spec.Completions = ptr.To[int32](3), ptr.To[int32](3)
		return k8sClient.Update(ctx, current)
	}).Should(Succeed())

	By("the Job scales in place and three workers run")
	waitForSyncedWorkers(ctx, js, 3)
	out := settledOutcome(ctx, js, before, map[string]string{
		"job[elastic-workers-0].recreated":    "false",
		"job[elastic-workers-0].parallelism":  "3",
		"job[elastic-workers-0].status.ready": "3",
		"pod[elastic-workers-0/0].phase":      "Running",
		"pod[elastic-workers-0/1].phase":      "Running",
		"pod[elastic-workers-0/2].phase":      "Running",
		// The status has counted what the Job shows.
		"status.replicatedJobsStatus[workers].ready": "1",
	})
	deleteJobSet(ctx, js)
	return out
}

// outcome is what the controller made of js: its stored status, its Jobs
// (recreated or not since before), its Pods and its events.
func outcome(ctx context.Context, g Gomega, js *jobset.JobSet, before map[string]types.UID) differential.Fields {
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(jobset.GroupVersion.WithKind("JobSet"))
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), stored)).To(Succeed())
	uid := stored.GetUID()
	var jobs batchv1.JobList
	g.Expect(k8sClient.List(ctx, &jobs, client.InNamespace(js.Namespace), client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
	var pods corev1.PodList
	g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(js.Namespace), client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
	podFields, err := differential.Pods(uid, pods.Items)
	g.Expect(err).NotTo(HaveOccurred())
	var events corev1.EventList
	g.Expect(k8sClient.List(ctx, &events, client.InNamespace(js.Namespace))).To(Succeed())
	return differential.Merge(differential.Status(stored), differential.Jobs(uid, jobs.Items, before), podFields,
		differential.Events(uid, events.Items))
}

// jobUIDs are js's Jobs' UIDs by name.
func jobUIDs(ctx context.Context, js *jobset.JobSet) map[string]types.UID {
	var jobs batchv1.JobList
	Expect(k8sClient.List(ctx, &jobs, client.InNamespace(js.Namespace), client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
	out := map[string]types.UID{}
	for _, j := range jobs.Items {
		out[j.Name] = j.UID
	}
	return out
}

// podOfJob is the name of the one running Pod of the Job.
func podOfJob(ctx context.Context, js *jobset.JobSet, job string) string {
	var name string
	Eventually(func(g Gomega) {
		var pods corev1.PodList
		g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(js.Namespace), client.MatchingLabels{batchv1.JobNameLabel: job})).To(Succeed())
		var running []string
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
				running = append(running, p.Name)
			}
		}
		g.Expect(running).To(HaveLen(1), "running Pods of Job %s", job)
		name = running[0]
	}).Should(Succeed())
	return name
}

// deleteJobSet deletes js and waits until it, its Jobs and its Pods are
// gone, so that the next side starts from nothing under the same names.
func deleteJobSet(ctx context.Context, js *jobset.JobSet) {
	Expect(k8sClient.Delete(ctx, js, client.PropagationPolicy(metav1.DeletePropagationForeground))).To(Succeed())
	Eventually(func(g Gomega) {
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(js), &jobset.JobSet{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "JobSet %s is gone (%v)", js.Name, err)
		var pods corev1.PodList
		g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(js.Namespace), client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
		g.Expect(pods.Items).To(BeEmpty())
		var jobs batchv1.JobList
		g.Expect(k8sClient.List(ctx, &jobs, client.InNamespace(js.Namespace), client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
		g.Expect(jobs.Items).To(BeEmpty())
	}).Should(Succeed())
}
