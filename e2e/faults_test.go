package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/images/manifest"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// The fault specs take control-plane processes of the local cluster away
// in the middle of a group restart, through tools/cluster/cluster.sh, and
// check the group restart still happens once, in place, with no
// controller or webhook restart; they report how long recovery took
// (measured, and asserted only with a generous bound).
var _ = Describe("Control-plane faults", Serial, Label("local-cluster", "faults"), func() {
	var (
		ns    string
		plane *localControlPlane
	)
	BeforeEach(func(ctx context.Context) {
		plane = localPlane()
		ns = agentNamespace(ctx)
	})

	outages := []time.Duration{10 * time.Second, 60 * time.Second}
	// A longer one, by hand (docs/operations.md reports 5 min):
	// JOBSET_E2E_LONG_OUTAGE=5m.
	if d, err := time.ParseDuration(os.Getenv("JOBSET_E2E_LONG_OUTAGE")); err == nil {
		outages = append(outages, d)
	}
	for _, outage := range outages {
		It(fmt.Sprintf("rides out a %d s API server outage in the middle of a group restart", int(outage.Seconds())), func(ctx context.Context) {
			r := groupRestartThroughFault(ctx, ns, fault{
				after: 500 * time.Millisecond,
				inject: func(ctx context.Context) time.Time {
					// Killed, as a crash or a lost machine would: a graceful
					// stop also takes the API server out of the kubernetes
					// Service, which Pods reach it by, and kube-proxy puts it
					// back only when its own backoff ends (up to 30 s with
					// one API server; see docs/local-cluster.md).
					By(fmt.Sprintf("killing the API server, for %s", outage))
					plane.run(ctx, "kill", "kube-apiserver")
					time.Sleep(outage) // the outage is the scenario, not a wait for something
					plane.run(ctx, "start", "kube-apiserver")
					return waitForAPIServer(ctx)
				},
			})
			report(fmt.Sprintf("fault=apiserver-outage-%ds", int(outage.Seconds())), r)
			// Not ours, but the next spec's: kube-controller-manager, the
			// scheduler and the kubelet come back when their watches' backoff
			// ends (up to 30 s after a long outage), and only then do new
			// Pods start.
			settled := time.Since(waitForNewPod(ctx, ns))
			AddReportEntry("new Pods start again", ReportEntryVisibilityAlways,
				fmt.Sprintf("a Pod created when the group had re-synced ran %.1f s later", settled.Seconds()))
			// Also the next spec's: after a long outage the node lifecycle
			// controller marks the node Unknown and every Pod not ready, the
			// webhook's included, and the kubelet, whose own watches are
			// still in backoff, reports them ready again only later: until
			// then the webhook's Service has no endpoints.
			By("waiting until the webhook admits JobSets again")
			Eventually(func() error { return dryRunJobSet(ctx) }).WithTimeout(5 * time.Minute).Should(Succeed())
			waitForNodesSettled(ctx)
			// The target is 5 s (docs/benchmarks.md); the bound is generous
			// because the machine's load varies, and the figure is reported.
			Expect(r.recovery).To(BeNumerically("<", 30*time.Second),
				"the group re-synced %s after the API server was back", r.recovery)
		})
	}

	// Nothing failed: an API server outage that every node shares must
	// stop no worker and cost no restart, however long the agents' fence
	// time (their peers on the other node vouch that the silence is
	// shared). The long one takes the cluster's DNS with it, and CoreDNS
	// starts again while the API server is still away, so it knows no
	// name: the agents reach their witnesses where they learned them.
	// The group is injected, as most are: its agents fence on their node's
	// Lease too, find it unrenewed for the whole outage once they are back
	// in contact, as every peer finds its own, and must stop nothing
	// either. Agents by hand that fence on their own silence alone ride
	// out the long one too.
	type trainingOutage struct {
		outage              time.Duration
		dnsToo, contactOnly bool
	}
	var trainingOutages []trainingOutage
	for _, outage := range outages {
		trainingOutages = append(trainingOutages, trainingOutage{outage: outage, dnsToo: outage >= time.Minute})
	}
	trainingOutages = append(trainingOutages, trainingOutage{outage: time.Minute, contactOnly: true})
	for _, o := range trainingOutages {
		outage, dnsToo := o.outage, o.dnsToo
		group := "a group"
		if o.contactOnly {
			group = "a group whose agents fence on their own silence alone"
		}
		title := fmt.Sprintf("keeps every worker running while %s trains through an API server outage of %d s", group, int(outage.Seconds()))
		if dnsToo {
			title += ", the cluster's DNS down and started again during it"
		}
		It(title, func(ctx context.Context) {
			// A group whose Pods all run on one node has no peer to vouch
			// for it, and fences as a node cut off would (docs/operations.md):
			// the nodes an earlier fault left tainted must take Pods again.
			waitForNodesSettled(ctx)
			// The injected agents' access to kube-node-lease is the
			// controller's grant: without it they would hold their workers
			// back. Those of story1-inplace.yaml do not read the Lease.
			js := example(ns, "story1-injected.yaml")
			if o.contactOnly {
				js = example(ns, "story1-inplace.yaml")
			}
			Expect(k8sClient.Create(ctx, js)).To(Succeed())
			before := waitForSyncedWorkers(ctx, js, 4)
			Expect(len(nodesOf(ctx, js))).To(BeNumerically(">=", 2), "the group spans two nodes or more, so that peers on other nodes can vouch")
			// The agents find their witnesses by name: after an earlier
			// outage the cluster DNS may not have caught up with the API
			// server yet, and knows no name of this new group's.
			waitForPeersResolvable(ctx, js)
			if dnsToo {
				waitForWitnessesLearned(ctx, js)
			}
			status := getJobSet(ctx, js).Status

			By(fmt.Sprintf("killing the API server, for %s", outage))
			plane.run(ctx, "kill", "kube-apiserver")
			// The outage is the scenario, not a wait for something.
			if dnsToo {
				By("killing CoreDNS too, and starting it again halfway, while the API server is still away")
				plane.run(ctx, "kill", "coredns")
				time.Sleep(outage / 2)
				plane.run(ctx, "start", "coredns")
				time.Sleep(outage / 2)
			} else {
				time.Sleep(outage)
			}
			plane.run(ctx, "start", "kube-apiserver")
			readyAt := waitForAPIServer(ctx)
			leads := leadsAgainAfter(ctx, readyAt)

			By("every worker still runs, never restarted; no epoch moved and nothing is counted")
			// A fenced worker would have shown its restart by the time its
			// kubelet's status writes came back; the window covers that.
			Consistently(func(g Gomega) {
				g.Expect(runningWorkers(g, ctx, js)).To(Equal(before))
			}).WithTimeout(20 * time.Second).WithPolling(2 * time.Second).Should(Succeed())
			after := getJobSet(ctx, js).Status
			Expect(after.SyncedEpoch).To(Equal(status.SyncedEpoch), "synced epoch")
			Expect(after.DeprecatedEpoch).To(Equal(status.DeprecatedEpoch), "deprecated epoch")
			Expect(after.InPlaceRestarts).To(Equal(status.InPlaceRestarts), "group restarts counted")
			Expect(after.Restarts).To(Equal(status.Restarts), "full restarts")
			AddReportEntry("outage while training", ReportEntryVisibilityAlways, fmt.Sprintf("fault=apiserver-outage-training-%ds contact_only=%t workers_restarted=0 epochs_moved=0 restarts_counted=0 controller_leads_s=%.1f",
				int(outage.Seconds()), o.contactOnly, leads.Seconds()))
		})
	}

	It("replaces a leader killed 0.4 s into a group restart", func(ctx context.Context) {
		By("an undisturbed group restart first, for comparison")
		js := example(ns, "story1-inplace.yaml")
		Expect(k8sClient.Create(ctx, js)).To(Succeed())
		undisturbed := timedGroupRestart(ctx, js, fault{})

		var victim, killedLeader string
		r := timedGroupRestart(ctx, js, fault{
			after:         400 * time.Millisecond,
			crashedLeader: true,
			inject: func(ctx context.Context) time.Time {
				killedLeader = leaderIdentity(ctx)
				victim = podOfLeader(killedLeader)
				By("SIGKILL to the leader, " + victim)
				plane.killContainer(ctx, victim, "jobset-controller")
				return time.Now()
			},
		})
		r.baseline = undisturbed.restart
		report("fault=leader-sigkill", r)
		Expect(getJobSet(ctx, js).Status.InPlaceRestarts).To(Equal(int32(2)), "two group restarts, each counted once")
		// The standby, or the killed leader's own container restarted by
		// its kubelet, whichever acquires the lease first: a process that
		// did not lead before.
		Eventually(leaderIdentity).WithContext(ctx).ShouldNot(Equal(killedLeader), "a new process leads")
		// The target is 2x an undisturbed restart. The bound is generous
		// because the machine's load varies, and still fails a failover
		// that waits out controller-runtime's default 15 s lease.
		Expect(r.restart).To(BeNumerically("<", undisturbed.restart+12*time.Second),
			"group restart with the leader killed: %s, undisturbed %s", r.restart, undisturbed.restart)
	})
})

// rollingUpgrade is the upgrade spec's scenario: both Deployments move to
// a new image tag while a group restarts and a client creates JobSets.
var _ = Describe("Rolling upgrade", Serial, Label("local-cluster", "faults"), func() {
	It("rolls the controller and the webhook to a new image during a group restart and JobSet creation", func(ctx context.Context) {
		plane := localPlane()
		ns := testNamespace(ctx)
		Expect(manifest.Apply(ctx, k8sClient, agentRBAC, ns)).To(Succeed())
		js := example(ns, "story1-inplace.yaml")
		Expect(k8sClient.Create(ctx, js)).To(Succeed())

		By("a client creating a JobSet every 200 ms, with client-go's retries only, as kubectl")
		created, failures := createJobSetsUntil(ctx, ns)

		var rolled time.Time
		r := timedGroupRestart(ctx, js, fault{
			after:    400 * time.Millisecond,
			replaced: true,
			inject: func(ctx context.Context) time.Time {
				for _, name := range []string{"jobset-controller", "jobset-webhook"} {
					By("rolling " + name + " to a new image tag")
					plane.rollToNewTag(ctx, name)
				}
				rolled = time.Now()
				return rolled
			},
		})
		for _, name := range []string{"jobset-controller", "jobset-webhook"} {
			waitForRollout(ctx, name)
		}
		upgraded := time.Since(rolled)
		stop := created()
		report("fault=rolling-upgrade", r)
		AddReportEntry("rollout", ReportEntryVisibilityAlways,
			fmt.Sprintf("both Deployments rolled in %.1f s; %d JobSets created meanwhile, none refused", upgraded.Seconds(), stop))
		Expect(failures()).To(BeEmpty(), "admission failures a kubectl-like client saw during the rollout")
		Expect(stop).To(BeNumerically(">", 0))
		By("no lost status: the group's status is whole after the rollout")
		got := getJobSet(ctx, js)
		Expect(got.Status.InPlaceRestarts).To(Equal(int32(1)))
		Expect(ptr.Deref(got.Status.DeprecatedEpoch, 0)).To(BeNumerically("<", ptr.Deref(got.Status.SyncedEpoch, 0)),
			"synced, no group restart under way")
		Consistently(func() int32 { return getJobSet(ctx, js).Status.InPlaceRestarts }).WithTimeout(5*time.Second).Should(Equal(int32(1)),
			"the new leader must not restart the group again")
	})
})

// createJobSetsUntil creates a suspended JobSet every 200 ms (admission
// runs, nothing is scheduled) until the returned stop is called, which
// returns how many were created; failures lists what went wrong.
func createJobSetsUntil(ctx context.Context, ns string) (stop func() int, failures func() []string) {
	ctx, cancel := context.WithCancel(ctx)
	var (
		mu     sync.Mutex
		errs   []string
		n      int
		closed = make(chan struct{})
	)
	go func() {
		defer GinkgoRecover()
		defer close(closed)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			js := wrappers.MakeJobSet(fmt.Sprintf("created-%d", i), ns).Suspend(true).
				ReplicatedJob(workerReplicatedJob("workers").Obj()).Obj()
			err := k8sClient.Create(ctx, js)
			mu.Lock()
			if err == nil {
				n++
			} else if ctx.Err() == nil {
				errs = append(errs, fmt.Sprintf("%s: %v", time.Now().Format("15:04:05.000"), err))
			}
			mu.Unlock()
		}
	}()
	return func() int {
			cancel()
			<-closed
			mu.Lock()
			defer mu.Unlock()
			return n
		}, func() []string {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(errs)
		}
}

// waitForRollout waits until every replica of the Deployment runs its
// latest template and no old Pod is left.
func waitForRollout(ctx context.Context, name string) {
	Eventually(func(g Gomega) {
		var d appsv1.Deployment
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "jobset-system", Name: name}, &d)).To(Succeed())
		g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
		want := ptr.Deref(d.Spec.Replicas, 1)
		g.Expect(d.Status.UpdatedReplicas).To(Equal(want))
		g.Expect(d.Status.AvailableReplicas).To(Equal(want))
		g.Expect(d.Status.Replicas).To(Equal(want), "old Pods still there")
	}).WithTimeout(3 * time.Minute).Should(Succeed())
}

// fault is what a fault spec does during a group restart.
type fault struct {
	// after is how long after the worker's failure the fault comes.
	after time.Duration
	// inject brings the fault and returns when the control plane is whole
	// again, the moment recovery is measured from.
	inject func(context.Context) time.Time
	// crashedLeader: the fault kills one controller container, which
	// restarts once; every other one must not restart.
	crashedLeader bool
	// replaced: the fault replaces the controller's and the webhook's Pods
	// (a rolling update); the new ones must not restart.
	replaced bool
}

// faultResult are the measured figures of one group restart.
type faultResult struct {
	// restart: from the worker's failure until every worker runs again at
	// the next epoch; recovery: from the control plane's return until then;
	// resync: from the control plane's return until the controller wrote
	// the next synced epoch (the rest of recovery is the kubelet reporting
	// the workers' containers running).
	restart, recovery, resync, baseline time.Duration
}

// groupRestartThroughFault runs story 1 until its workers are synced and
// makes one fail, with f in the middle.
func groupRestartThroughFault(ctx context.Context, ns string, f fault) faultResult {
	js := example(ns, "story1-inplace.yaml")
	Expect(k8sClient.Create(ctx, js)).To(Succeed())
	return timedGroupRestart(ctx, js, f)
}

// timedGroupRestart makes one worker of the running js fail, brings f (if
// any) f.after later, and checks the group restarted in place exactly once:
// same Pod UIDs, every container's restart count + 1, syncedEpoch + 1,
// inPlaceRestarts + 1, and no controller or webhook container restarted
// (but the one a crashed-leader fault killed).
func timedGroupRestart(ctx context.Context, js *jobset.JobSet, f fault) faultResult {
	before := waitForSyncedWorkers(ctx, js, 4)
	epoch := syncedEpoch(ctx, js)
	counted := getJobSet(ctx, js).Status.InPlaceRestarts
	components := componentRestarts(ctx)

	By("one worker exits with code 1")
	exitWorker(ctx, js.Namespace, anyPod(before), 1)
	failed := time.Now()
	whole := failed
	if f.inject != nil {
		time.Sleep(f.after) // the fault's timing is the scenario
		whole = f.inject(ctx)
	}

	By("the group restarts in place and re-syncs at the next epoch")
	Eventually(func() int32 { return syncedEpoch(ctx, js) }).WithTimeout(5 * time.Minute).Should(Equal(epoch + 1))
	synced := time.Now()
	waitForRestartedInPlace(ctx, js, before)
	done := time.Now()
	Expect(getJobSet(ctx, js).Status.InPlaceRestarts).To(Equal(counted+1), "one group restart, counted once")

	now := componentRestarts(ctx)
	crashed := 0
	for pod, n := range now {
		was, existed := components[pod]
		if f.replaced && !existed {
			Expect(n).To(BeZero(), "new Pod %s restarted", pod)
			continue
		}
		Expect(existed).To(BeTrue(), "new Pod %s in jobset-system: a controller or webhook Pod was replaced", pod)
		switch {
		case n == was:
		case f.crashedLeader && n == was+1 && strings.HasPrefix(pod, "jobset-controller-"):
			crashed++
		default:
			Fail(fmt.Sprintf("%s restarted %d times during the fault (was %d)", pod, n, was))
		}
	}
	if f.crashedLeader {
		Expect(crashed).To(Equal(1), "the killed leader restarts once")
	}
	reportJoins(ctx, js, whole)
	return faultResult{restart: done.Sub(failed), recovery: done.Sub(whole), resync: synced.Sub(whole)}
}

// reportJoins writes where the time until the sync went, Pod by Pod: when
// its agent started and when it wrote its epoch (the time of the managed
// fields entry that holds the annotation), from the control plane's return
// (negative: before it). Both are dated with one-second resolution.
func reportJoins(ctx context.Context, js *jobset.JobSet, from time.Time) {
	var pods corev1.PodList
	Expect(k8sClient.List(ctx, &pods, client.InNamespace(js.Namespace), client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
	var lines []string
	for _, p := range pods.Items {
		started, joined := "?", "?"
		for _, c := range p.Status.InitContainerStatuses {
			if c.State.Running != nil {
				started = fmt.Sprintf("%+.0fs", c.State.Running.StartedAt.Sub(from).Seconds())
			}
		}
		for _, f := range p.ManagedFields {
			if f.FieldsV1 != nil && f.Time != nil && strings.Contains(f.FieldsV1.GetRawString(), jobset.EpochKey) {
				joined = fmt.Sprintf("%+.0fs (%s)", f.Time.Sub(from).Seconds(), f.Manager)
			}
		}
		lines = append(lines, fmt.Sprintf("%s agent started %s, joined %s", p.Name, started, joined))
	}
	slices.Sort(lines)
	AddReportEntry("joins", ReportEntryVisibilityAlways, strings.Join(lines, "\n"))
}

// report prints the figures as the suite's output and report entries.
func report(name string, r faultResult) {
	line := fmt.Sprintf("%s group_restart_s=%.1f recovery_s=%.1f resync_s=%.1f", name, r.restart.Seconds(), r.recovery.Seconds(), r.resync.Seconds())
	if r.baseline > 0 {
		line += fmt.Sprintf(" undisturbed_s=%.1f ratio=%.2f", r.baseline.Seconds(), r.restart.Seconds()/r.baseline.Seconds())
	}
	GinkgoWriter.Println(line)
	AddReportEntry(name, ReportEntryVisibilityAlways, line)
}

// componentRestarts are the restart counts of the controller's and the
// webhook's containers, by Pod.
func componentRestarts(ctx context.Context) map[string]int32 {
	var pods corev1.PodList
	Expect(k8sClient.List(ctx, &pods, client.InNamespace("jobset-system"))).To(Succeed())
	out := map[string]int32{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		var n int32
		for _, cs := range p.Status.ContainerStatuses {
			n += cs.RestartCount
		}
		out[p.Name] = n
	}
	return out
}

// podOfLeader is the Pod of a lease holder's identity: identities are
// <hostname>_<uuid>, and the hostname is the Pod's name.
func podOfLeader(identity string) string {
	pod, _, _ := strings.Cut(identity, "_")
	return pod
}

// leaderLease is the controller's leader election lease.
var leaderLease = client.ObjectKey{Namespace: "jobset-system", Name: "jobset-controller.jobset.x-k8s.io"}

// leaderIdentity is the lease holder's identity: its Pod's name and an ID
// of the process, new at each start.
func leaderIdentity(ctx context.Context) string {
	var lease coordinationv1.Lease
	Expect(k8sClient.Get(ctx, leaderLease, &lease)).To(Succeed())
	return ptr.Deref(lease.Spec.HolderIdentity, "")
}

// leadsAgainAfter returns how long after readyAt the controller's leader
// first renewed its lease.
func leadsAgainAfter(ctx context.Context, readyAt time.Time) time.Duration {
	GinkgoHelper()
	var renewed time.Time
	Eventually(func(g Gomega) {
		var lease coordinationv1.Lease
		g.Expect(k8sClient.Get(ctx, leaderLease, &lease)).To(Succeed())
		g.Expect(lease.Spec.RenewTime).NotTo(BeNil())
		renewed = lease.Spec.RenewTime.Time
		g.Expect(renewed).To(BeTemporally(">", readyAt), "the leader's lease renewed since the API server is back")
	}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
	return renewed.Sub(readyAt)
}

// waitForAPIServer returns when the API server is ready again.
func waitForAPIServer(ctx context.Context) time.Time {
	Eventually(func() error {
		return clientset.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
	}).WithTimeout(2 * time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
	return time.Now()
}

// localControlPlane drives the processes of the local cluster
// (tools/cluster/cluster.sh stop|kill|start COMPONENT, which stop by PID and
// return once the process is gone).
type localControlPlane struct {
	script, dir string
}

// localPlane skips the spec unless the suite runs on the local cluster:
// tools/e2e.sh passes JOBSET_CLUSTER_SH and JOBSET_CLUSTER_DIR when it
// brought that cluster up, and leaves these specs out by their label
// local-cluster otherwise. (On kind or another cluster, no test may stop
// the control plane.)
func localPlane() *localControlPlane {
	p := &localControlPlane{script: os.Getenv("JOBSET_CLUSTER_SH"), dir: os.Getenv("JOBSET_CLUSTER_DIR")}
	if p.script == "" || p.dir == "" {
		Skip("control-plane faults need the local cluster of tools/cluster (JOBSET_CLUSTER_SH and JOBSET_CLUSTER_DIR, set by tools/e2e.sh)")
	}
	return p
}

func (p *localControlPlane) run(ctx context.Context, args ...string) {
	GinkgoWriter.Printf("cluster.sh %s: %s", strings.Join(args, " "), p.output(ctx, args...))
}

// output runs cluster.sh and returns what it printed on its standard
// output.
func (p *localControlPlane) output(ctx context.Context, args ...string) string {
	cmd := exec.CommandContext(ctx, p.script, args...)
	cmd.Env = append(os.Environ(), "JOBSET_CLUSTER_DIR="+p.dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), "cluster.sh %s: %s%s", strings.Join(args, " "), out, stderr.String())
	return string(out)
}

// socket is the address of the node's containerd.
func (p *localControlPlane) socket(ctx context.Context, node string) string {
	return strings.TrimSpace(p.output(ctx, "socket", "--node", node))
}

// ctr runs ctr in the node's namespaces, on its containerd's images and
// containers (namespace k8s.io), and returns what it printed.
func (p *localControlPlane) ctr(ctx context.Context, node string, args ...string) string {
	return p.output(ctx, append([]string{"exec", "--node", node, "ctr", "--address", p.socket(ctx, node), "--namespace", "k8s.io"}, args...)...)
}

// killContainer SIGKILLs a container through the node's containerd: a
// crash, with no chance to release anything.
func (p *localControlPlane) killContainer(ctx context.Context, pod, container string) {
	var po corev1.Pod
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "jobset-system", Name: pod}, &po)).To(Succeed())
	var id string
	for _, cs := range po.Status.ContainerStatuses {
		if cs.Name == container {
			_, id, _ = strings.Cut(cs.ContainerID, "://")
		}
	}
	Expect(id).NotTo(BeEmpty(), "container %s of %s", container, pod)
	p.ctr(ctx, po.Spec.NodeName, "tasks", "kill", "--signal", "SIGKILL", id)
}

// rollToNewTag tags the image a Deployment runs with a new tag in every
// node's containerd (nothing is pulled here) and sets the Deployment to it.
func (p *localControlPlane) rollToNewTag(ctx context.Context, name string) {
	var d appsv1.Deployment
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "jobset-system", Name: name}, &d)).To(Succeed())
	c := &d.Spec.Template.Spec.Containers[0]
	repo, _, _ := strings.Cut(c.Image, "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	next := repo + ":upgraded-" + time.Now().UTC().Format("150405.000")
	var nodes corev1.NodeList
	Expect(k8sClient.List(ctx, &nodes)).To(Succeed())
	for _, n := range nodes.Items {
		p.ctr(ctx, n.Name, "images", "tag", "--force", c.Image, next)
	}
	patch := client.MergeFrom(d.DeepCopy())
	c.Image = next
	Expect(k8sClient.Patch(ctx, &d, patch)).To(Succeed())
}

// waitForNewPod creates a Pod and waits until it runs: the cluster's own
// controllers, scheduler and kubelet work again. It returns when it created
// the Pod.
func waitForNewPod(ctx context.Context, ns string) time.Time {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "settled-"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{
				Name: "worker", Image: "ghcr.io/fastjobset/e2e-worker:dev", ImagePullPolicy: corev1.PullIfNotPresent,
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
	Expect(k8sClient.Create(ctx, pod)).To(Succeed())
	created := time.Now()
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning))
	}).WithTimeout(5 * time.Minute).Should(Succeed())
	return created
}

// waitForNodesSettled waits until every node is Ready and carries no
// taint that keeps new Pods off it: after a long API server outage the
// node lifecycle controller taints the nodes unreachable, and each kubelet
// reports Ready again only once its own watches' backoff ends. It also
// waits until each kubelet renews its node's Lease on schedule: a kubelet
// back from a cut may keep a dead connection for a while, and its node
// still reads Ready while the Lease the controller counts a node lost by
// ages.
func waitForNodesSettled(ctx context.Context) {
	By("waiting until every node is Ready, renews its Lease and takes new Pods")
	Eventually(func(g Gomega) {
		var nodes corev1.NodeList
		g.Expect(k8sClient.List(ctx, &nodes)).To(Succeed())
		for _, n := range nodes.Items {
			var lease coordinationv1.Lease
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: corev1.NamespaceNodeLease, Name: n.Name}, &lease)).To(Succeed())
			g.Expect(lease.Spec.RenewTime).NotTo(BeNil(), "node %s has renewed its Lease", n.Name)
			renewEvery := time.Duration(ptr.Deref(lease.Spec.LeaseDurationSeconds, 40)) * time.Second / 4
			g.Expect(time.Since(lease.Spec.RenewTime.Time)).To(BeNumerically("<", renewEvery+2*time.Second),
				"node %s renews its Lease every %s", n.Name, renewEvery)
			ready := slices.ContainsFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool {
				return c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
			})
			g.Expect(ready).To(BeTrue(), "node %s is Ready", n.Name)
			g.Expect(n.Spec.Unschedulable).To(BeFalse(), "node %s is cordoned", n.Name)
			for _, t := range n.Spec.Taints {
				g.Expect(t.Effect).To(Equal(corev1.TaintEffectPreferNoSchedule), "node %s is tainted %s", n.Name, t.ToString())
			}
		}
	}).WithTimeout(5 * time.Minute).Should(Succeed())
}

// nodesOf: the nodes the JobSet's Pods run on.
func nodesOf(ctx context.Context, js *jobset.JobSet) sets.Set[string] {
	var pods corev1.PodList
	Expect(k8sClient.List(ctx, &pods, client.InNamespace(js.Namespace),
		client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
	nodes := sets.New[string]()
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			nodes.Insert(p.Spec.NodeName)
		}
	}
	return nodes
}

// waitForPeersResolvable waits until every Pod of the JobSet resolves
// every other's DNS hostname through the cluster DNS, as their agents do
// to ask one another during an outage.
func waitForPeersResolvable(ctx context.Context, js *jobset.JobSet) {
	GinkgoHelper()
	By("waiting until every Pod resolves every other Pod's hostname")
	Eventually(func(g Gomega) { expectPeersResolve(ctx, g, js) }).WithTimeout(2 * time.Minute).Should(Succeed())
}

// waitForWitnessesLearned waits until every agent of the JobSet has
// learned where its witnesses are (agent/peer_addresses.go), which each
// does at a random point of 30 s after it joins an epoch.
func waitForWitnessesLearned(ctx context.Context, js *jobset.JobSet) {
	GinkgoHelper()
	By("waiting until every agent has learned its witnesses' addresses")
	Eventually(func(g Gomega) {
		var pods corev1.PodList
		g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(js.Namespace), client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
		for _, pod := range pods.Items {
			out, err := clientset.CoreV1().Pods(js.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "jobset-agent"}).DoRaw(ctx)
			g.Expect(err).NotTo(HaveOccurred(), "the agent's log of %s", pod.Name)
			g.Expect(string(out)).To(ContainSubstring("Learned where this agent's witnesses are"), "the agent of %s", pod.Name)
		}
	}).WithTimeout(time.Minute).WithPolling(2 * time.Second).Should(Succeed())
}

// expectPeersResolve: every Pod of the JobSet resolves every other's DNS
// hostname (<hostname>.<subdomain>) to its Pod IP, asked through its
// worker.
func expectPeersResolve(ctx context.Context, g Gomega, js *jobset.JobSet) {
	var pods corev1.PodList
	g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(js.Namespace), client.MatchingLabels{jobset.JobSetNameKey: js.Name})).To(Succeed())
	for _, from := range pods.Items {
		for _, to := range pods.Items {
			host := to.Spec.Hostname + "." + to.Spec.Subdomain
			out, err := clientset.CoreV1().Pods(js.Namespace).ProxyGet("http", from.Name, "8081", "/resolve",
				map[string]string{"host": host}).DoRaw(ctx)
			g.Expect(err).NotTo(HaveOccurred(), "%s resolving %s: %s", from.Name, host, out)
			g.Expect(strings.TrimSpace(string(out))).To(Equal(to.Status.PodIP), "%s resolving %s", from.Name, host)
		}
	}
}
