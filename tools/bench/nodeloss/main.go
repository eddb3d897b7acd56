// Command nodeloss is benchmark B5 (docs/benchmark-definitions.md): on the
// local cluster of three nodes (tools/cluster), a JobSet of W workers
// spread over the second and third nodes loses the node of half of them,
// killed, frozen, cut off, or cut off from the API server alone, its Pod
// network to the other nodes kept (cluster.sh node
// kill|freeze|cut|cut-api), or its kubelet alone stopped (cluster.sh stop
// kubelet --node), and the time
// from the fault until every rank trains again is measured, per way, in
// one run on the same cluster:
//
//   - InPlaceRestart/process: ours with the defaults: story 1 with agent
//     injection, whose worker, naming its command, runs under the worker
//     wrapper (the process tier). The controller declares the node's
//     members lost from its Lease, marks them Failed, their Jobs replace
//     them on a healthy node, the rest restart their workers in place;
//   - InPlaceRestart: the same with story 1's agent by hand and no wrapper
//     (the Pod tier): the kubelet restarts the survivors' containers;
//   - CommunityInPlaceRestart: community JobSet v0.12.0 in place (as B1
//     runs it) on its best documented path: an administrator applies the
//     out-of-service taint once the Node is NotReady, which the harness
//     does the moment it sees the Ready condition leave True;
//   - Recreate: ours with the Recreate strategy, no agent. With the
//     defaults nothing replaces Pods whose kubelet is gone: they are
//     evicted after the 300 s toleration of an unreachable node, and their
//     deletion waits for that kubelet. So the harness plays the same
//     administrator as for community JobSet; RecreateUnattended (not run
//     by default) plays none and reports what happened by -unattended-wait.
//
// The first node runs our controller and webhook (or community JobSet's
// manager), pinned there by their Deployments' node selector; the control
// plane (API server, etcd, scheduler, controller manager, CoreDNS) runs
// outside every node. No fault touches them.
//
// Watches opened before the fault date where the time goes (progress.go):
// the Node NotReady, the taint applied, the lost Pods marked for
// replacement, their replacements created, bound, running a container,
// the barrier lifted, every worker running at the next epoch. For a node
// cut off (from everything or from the API server alone) the node's own
// containerd is polled from the fault on (cluster.sh exec --node, ctr):
// when its workers stopped (the fence), and whether one
// still ran once its rank's replacement worker did (a rank run twice). So
// is a node whose kubelet alone stopped, in the process tier, where the
// agent stops the worker and the wrapper, its container's first process,
// stays: a worker runs while its container has a process besides the
// wrapper. For a frozen node, the same from the thaw on. After each run the node comes
// back, the administrator's taint goes, and the next run waits until every
// node is Ready and untainted. Output, one line per configuration:
//
//	bench=node-loss way=InPlaceRestart admin=none fault=kill workers=4 p50_s=<s> runs=1 recovered=1 ...
//
// and a line per run (bench=node-loss-run).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/bench/internal/summary"
	"github.com/fastjobset/jobset/tools/demo/workload"
	"github.com/fastjobset/jobset/tools/testing/peers"
)

// way is one way of running the group through the fault.
type way struct {
	// key names it in -ways; name in the summary's way=.
	key, name string
	strategy  jobset.JobSetRestartStrategy
	community bool
	// admin: the harness applies the out-of-service taint once the Node
	// is NotReady, as an administrator would.
	admin bool
	// counter is the JobSet status field that counts the group's synced
	// restarts ("" for none).
	counter string
	// process: the JobSet is injected and its workers run under the worker
	// wrapper (the process tier).
	process bool
}

// namespace is the way's part of a run's namespace name.
func (w way) namespace() string {
	return strings.ToLower(strings.ReplaceAll(w.key, "/", "-"))
}

var ways = []way{
	{key: "InPlaceRestart/process", name: "InPlaceRestart/process", strategy: jobset.InPlaceRestart, counter: "syncedEpoch", process: true},
	{key: "InPlaceRestart", name: "InPlaceRestart", strategy: jobset.InPlaceRestart, counter: "syncedEpoch"},
	{key: "CommunityInPlaceRestart", name: "CommunityInPlaceRestart", strategy: jobset.InPlaceRestart, community: true, admin: true,
		counter: workload.CommunityCurrentAttempt},
	{key: "Recreate", name: "Recreate", strategy: jobset.Recreate, admin: true},
	{key: "RecreateUnattended", name: "Recreate", strategy: jobset.Recreate},
}

// The faults: the node faults as cluster.sh names them, and the node's
// kubelet stopped alone, its containers and network up.
const (
	kill    = "kill"
	freeze  = "freeze"
	cut     = "cut"
	cutAPI  = "cut-api"
	kubelet = "kubelet"
)

var faults = []string{kill, freeze, cut, cutAPI, kubelet}

// cutOff: the node runs on without the API server, so its own fence must
// stop its workers before their ranks are replaced.
func cutOff(fault string) bool { return fault == cut || fault == cutAPI }

type options struct {
	workers             int
	faults              []string
	ways                []way
	runs                int
	runTimeout          time.Duration
	unattendedWait      time.Duration
	systemNode          string
	communityAgentImage string
	// fenceNodeLease: the webhook injects agents that fence on their
	// node's Lease too (--agent-fence-node-lease, its default); without,
	// the process way is named ...-nodelease.
	fenceNodeLease  bool
	ours, community *peers.Manifests
}

func main() {
	var (
		kubeconfig, install, communityDir, clusterScript, faultList, wayList string
		timeout                                                              time.Duration
		o                                                                    options
	)
	// A flag set of its own: controller-runtime, linked in, puts its own
	// -kubeconfig on the default one.
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	fs.StringVar(&kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "The local cluster of three nodes, its images present.")
	fs.StringVar(&install, "install", "", "Our install.yaml, installed first (its Deployments pinned to -system-node).")
	fs.StringVar(&communityDir, "community", "", "Community JobSet's build directory (tools/peers/jobset.sh prints it); needed for CommunityInPlaceRestart.")
	fs.StringVar(&o.communityAgentImage, "community-agent-image", "localhost/jobset-community/in-place-restart-agent:v0.12.0", "Community JobSet's agent image (tools/peers/jobset.sh agent-image).")
	fs.StringVar(&clusterScript, "cluster", "tools/cluster/cluster.sh", "The local cluster's script, which brings the node faults.")
	fs.StringVar(&o.systemNode, "system-node", "jobset-node-1", "The node that runs the JobSet controller and webhook, and no worker.")
	fs.IntVar(&o.workers, "workers", 4, "Workers in the JobSet (even: 2 Jobs of W/2 Pods).")
	fs.StringVar(&faultList, "faults", strings.Join(faults, ","), "Comma-separated node faults: kill, freeze, cut, cut-api (cut off from the API server alone), kubelet (the node's kubelet stopped alone).")
	fs.StringVar(&wayList, "ways", "InPlaceRestart/process,InPlaceRestart,CommunityInPlaceRestart,Recreate", "Comma-separated ways: InPlaceRestart/process, InPlaceRestart, CommunityInPlaceRestart, Recreate, RecreateUnattended.")
	fs.BoolVar(&o.fenceNodeLease, "agent-fence-node-lease", true, "Our webhook injects agents that fence on their node's Lease too (its --agent-fence-node-lease, on by default); false: on their own silence alone, the process way reported as InPlaceRestart/process-nodelease.")
	fs.IntVar(&o.runs, "runs", 1, "Faults measured per way and fault kind.")
	fs.DurationVar(&o.runTimeout, "run-timeout", 5*time.Minute, "How long a run may take from the fault to every rank training again.")
	fs.DurationVar(&o.unattendedWait, "unattended-wait", 8*time.Minute, "How long RecreateUnattended waits, with nobody acting, before the node comes back.")
	fs.DurationVar(&timeout, "timeout", 90*time.Minute, "Give up after this long.")
	_ = fs.Parse(os.Args[1:])
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	err := parse(&o, faultList, wayList)
	if err == nil {
		err = load(&o, install, communityDir)
	}
	var b *bench
	if err == nil {
		b, err = connect(kubeconfig, o, localCluster{script: clusterScript})
	}
	if err == nil {
		err = b.run(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "nodeloss:", err)
		os.Exit(1)
	}
	summary.Print("node-loss-invocation", "wall_s", time.Since(start).Seconds())
}

func parse(o *options, faultList, wayList string) error {
	if o.workers < 2 || o.workers%2 != 0 {
		return fmt.Errorf("-workers=%d: an even number from 2 (2 Jobs of W/2 Pods)", o.workers)
	}
	for _, f := range strings.Split(faultList, ",") {
		if !slices.Contains(faults, f) {
			return fmt.Errorf("-faults: %q is none of %s", f, strings.Join(faults, ", "))
		}
		o.faults = append(o.faults, f)
	}
	for _, key := range strings.Split(wayList, ",") {
		i := slices.IndexFunc(ways, func(w way) bool { return w.key == key })
		if i < 0 {
			return fmt.Errorf("-ways: no way %q", key)
		}
		w := ways[i]
		if w.process && !o.fenceNodeLease {
			w.name += "-nodelease"
		}
		o.ways = append(o.ways, w)
	}
	if o.runs < 1 {
		return fmt.Errorf("-runs=%d: at least 1", o.runs)
	}
	return nil
}

// load reads both JobSet controllers' manifests, their Deployments pinned
// to the system node.
func load(o *options, install, communityDir string) error {
	if install == "" {
		return errors.New("-install: our install.yaml is needed (it is installed again after community JobSet)")
	}
	var err error
	if o.ours, err = peers.LoadFile(peers.OurJobSet, install); err != nil {
		return err
	}
	if err := pin(o.ours, o.systemNode); err != nil {
		return err
	}
	if !o.fenceNodeLease {
		if err := o.ours.AppendFlags("jobset-webhook", "inject agents that fence on their own silence alone", "--agent-fence-node-lease=false"); err != nil {
			return err
		}
	}
	if !slices.ContainsFunc(o.ways, func(w way) bool { return w.community }) {
		return nil
	}
	if communityDir == "" {
		return errors.New("-community: community JobSet's build directory is needed for CommunityInPlaceRestart")
	}
	if o.community, err = peers.Load(peers.CommunityJobSet, communityDir); err != nil {
		return err
	}
	return pin(o.community, o.systemNode)
}

// bench is the harness's connection to the cluster and what it runs.
type bench struct {
	o       options
	c       *workload.Cluster
	dyn     dynamic.Interface
	cluster localCluster
	peers   peers.Cluster
}

func connect(kubeconfig string, o options, lc localCluster) (*bench, error) {
	c, err := workload.Connect(kubeconfig, ".")
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &bench{o: o, c: c, dyn: dyn, cluster: lc,
		peers: peers.Cluster{Client: c.Client, Clientset: c.Clientset, Out: os.Stderr}}, nil
}

// run installs ours, runs every way but community JobSet's, then switches
// to community JobSet for its own and back to ours, whatever happened.
func (b *bench) run(ctx context.Context) error {
	b.logf("installing our JobSet controller, pinned to %s (the control plane and CoreDNS run outside every node)", b.o.systemNode)
	if err := b.o.ours.Install(ctx, b.peers); err != nil {
		return err
	}
	if err := waitHealthy(ctx, b.c.Client); err != nil {
		return err
	}
	var results []result
	for _, w := range b.o.ways {
		if !w.community {
			rs, err := b.measure(ctx, w)
			if err != nil {
				return err
			}
			results = append(results, rs...)
		}
	}
	if i := slices.IndexFunc(b.o.ways, func(w way) bool { return w.community }); i >= 0 {
		err := peers.SwitchJobSet(ctx, b.peers, b.o.ours, b.o.community)
		if err == nil {
			var rs []result
			rs, err = b.measure(ctx, b.o.ways[i])
			results = append(results, rs...)
		}
		if back := peers.SwitchJobSet(context.WithoutCancel(ctx), b.peers, b.o.community, b.o.ours); back != nil {
			err = errors.Join(err, back)
		}
		if err != nil {
			return err
		}
	}
	for _, r := range results {
		r.print()
	}
	return nil
}

// measure runs every fault of the way, -runs times each.
func (b *bench) measure(ctx context.Context, w way) ([]result, error) {
	var results []result
	for _, f := range b.o.faults {
		r := result{way: w, fault: f, workers: b.o.workers}
		for i := range b.o.runs {
			rr, err := b.runOnce(ctx, w, f, i)
			if err != nil {
				return nil, fmt.Errorf("%s, node %s, run %d: %w", w.key, f, i, err)
			}
			rr.print(w, f, b.o.workers, i)
			r.runs = append(r.runs, rr)
		}
		results = append(results, r)
	}
	return results, nil
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s nodeloss: %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}
