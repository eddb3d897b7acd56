package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/demo/workload"
	"github.com/fastjobset/jobset/tools/testing/peers"
)

// runResult is one fault's measurement, times in seconds from the fault.
type runResult struct {
	node      string
	lostRanks int
	// lostPerJob: the most Pods of one Job on the faulted node.
	lostPerJob int
	// recovered: every rank trained again, seconds after the fault;
	// waited is how long the harness waited when none did.
	recovered       bool
	seconds, waited float64
	at              map[string]float64
	back            float64
	// cut off, frozen, or its kubelet stopped: what the node's own
	// containerd showed.
	workers *oldWorkers
	wall    float64
}

// oldWorkers is what the faulted node's containerd showed of the workers
// the fault took from the group.
type oldWorkers struct {
	// stopped: seconds from the fault until the last of them stopped for
	// good (none: one still ran when the polls ended).
	stopped    float64
	allStopped bool
	// ranTwice counts the ranks whose old worker was seen running once
	// their replacement ran its worker; overlap is the longest such time.
	ranTwice int
	overlap  float64
}

// runOnce starts the way's JobSet in a namespace of its own, faults the
// node of half its workers, measures until every rank trains again, and
// brings the node back.
func (b *bench) runOnce(ctx context.Context, w way, fault string, run int) (r runResult, err error) {
	wallStart := time.Now()
	ns := fmt.Sprintf("bench-nodeloss-%s-%s-%d", w.namespace(), fault, run)
	js, err := b.start(ctx, w, ns)
	// The namespace goes once the node is back: only then does a killed
	// or cut-off node's kubelet let its deleted Pods go.
	defer func() {
		deleteCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
		defer cancel()
		if gone := b.c.DeleteNamespace(deleteCtx, ns); gone != nil {
			err = errors.Join(err, gone)
		}
	}()
	if err != nil {
		return r, err
	}
	base, err := b.baseline(ctx, w, js)
	if err != nil {
		return r, err
	}
	r.node, r.lostRanks, r.lostPerJob = base.node, len(base.lost), base.lostPerJob()
	obs, err := observe(ctx, b.c.Clientset, b.dyn, js, base)
	if err != nil {
		return r, err
	}
	defer obs.stop()
	// A killed node runs nothing; without the wrapper, a node whose kubelet
	// alone stopped keeps the worker container running until the kubelet
	// is back, whatever the agent did. A frozen node is watched from the
	// thaw on, below.
	var old *workerWatch
	if cutOff(fault) || fault == kubelet && w.process {
		if old, err = b.cluster.watchWorkers(ctx, base.node, base.lost, w.process); err != nil {
			return r, err
		}
		defer func() { _, _, _ = old.stop() }()
	}

	b.logf("%s: %s node %s, which runs %d of the %d workers", w.key, fault, base.node, len(base.lost), b.o.workers)
	faultAt := time.Now()
	if err := b.cluster.fault(ctx, fault, base.node); err != nil {
		return r, err
	}
	faulted := true
	var adminTainted atomic.Bool
	defer func() {
		// Whatever happened, the next run finds the node whole.
		if faulted {
			err = errors.Join(err, b.cluster.fault(context.WithoutCancel(ctx), "back", base.node))
		}
		if adminTainted.Load() {
			err = errors.Join(err, waitNodeReady(context.WithoutCancel(ctx), b.c.Client, base.node),
				setOutOfService(context.WithoutCancel(ctx), b.c.Client, base.node, false))
		}
	}()
	runCtx, endRun := context.WithCancel(ctx)
	defer endRun()
	adminErr := make(chan error, 1)
	if w.admin {
		go func() {
			select {
			case <-obs.notReady:
			case <-runCtx.Done():
				adminErr <- nil
				return
			}
			adminTainted.Store(true)
			err := setOutOfService(runCtx, b.c.Client, base.node, true)
			if err == nil {
				obs.mark(tainted, time.Now())
				b.logf("%s: %s is NotReady: the administrator taints it %s=%s:%s", w.key, base.node, outOfService.Key, outOfService.Value, outOfService.Effect)
			}
			adminErr <- err
		}()
	}
	wait := b.o.runTimeout
	if !w.admin && w.strategy == jobset.Recreate {
		wait = b.o.unattendedWait
	}
	select {
	case <-obs.training:
	case <-time.After(wait):
	case <-ctx.Done():
		return r, ctx.Err()
	}
	obs.stop()
	endRun()
	if w.admin {
		if err := <-adminErr; err != nil && !errors.Is(err, context.Canceled) {
			return r, fmt.Errorf("applying the out-of-service taint: %w", err)
		}
	}
	at, seconds, recovered, replacementWorkers := obs.seen(faultAt)
	r.at, r.seconds, r.recovered = at, seconds, recovered
	if recovered {
		b.logf("%s: every rank trains again %.1f s after the fault", w.key, seconds)
	} else {
		r.waited = time.Since(faultAt).Seconds()
		b.logf("%s: not every rank trains again %.0f s after the fault; the node comes back", w.key, r.waited)
	}

	backAt := time.Now()
	if err := b.cluster.fault(ctx, "back", base.node); err != nil {
		return r, err
	}
	faulted = false
	r.back = backAt.Sub(faultAt).Seconds()
	if fault == freeze {
		if old, err = b.cluster.watchWorkers(ctx, base.node, base.lost, w.process); err != nil {
			return r, err
		}
	}
	if old != nil {
		// The kubelet, back in touch, stops what it runs of deleted Pods;
		// ten quiet seconds show it started none of them again.
		if err := old.waitQuiet(ctx, 10*time.Second, 2*time.Minute); err != nil {
			b.logf("%s: %v", w.key, err)
		}
		lastRunning, stopped, err := old.stop()
		if err != nil {
			return r, fmt.Errorf("polling the containerd of %s: %w", base.node, err)
		}
		from := faultAt
		if fault == freeze {
			from = backAt
		}
		r.workers = judgeOldWorkers(base.lost, from, lastRunning, stopped, replacementWorkers)
	}
	if adminTainted.Load() {
		// The administrator takes the taint off once the node is whole.
		if err := waitNodeReady(ctx, b.c.Client, base.node); err != nil {
			return r, err
		}
		if err := setOutOfService(ctx, b.c.Client, base.node, false); err != nil {
			return r, err
		}
		adminTainted.Store(false)
	}
	if err := waitHealthy(ctx, b.c.Client); err != nil {
		return r, err
	}
	r.wall = time.Since(wallStart).Seconds()
	return r, nil
}

// judgeOldWorkers reads the polls of the node's containerd: when the last
// old worker stopped, counted from from, and which ranks ran twice.
func judgeOldWorkers(lost map[string]types.UID, from time.Time, lastRunning, stopped, replacementWorkers map[string]time.Time) *oldWorkers {
	o := &oldWorkers{allStopped: true}
	for r := range lost {
		if s, ok := stopped[r]; ok {
			o.stopped = max(o.stopped, s.Sub(from).Seconds())
		} else {
			o.allStopped = false
		}
		if started, ok := replacementWorkers[r]; ok && !lastRunning[r].Before(started) {
			o.ranTwice++
			o.overlap = max(o.overlap, lastRunning[r].Sub(started).Seconds())
		}
	}
	return o
}

// start runs the way's JobSet in a fresh namespace until every worker
// runs.
func (b *bench) start(ctx context.Context, w way, ns string) (*jobset.JobSet, error) {
	if err := b.c.RecreateNamespace(ctx, ns); err != nil {
		return nil, err
	}
	if w.community {
		if err := b.c.CommunityAgentRBAC(ctx, ns); err != nil {
			return nil, err
		}
	}
	var js *jobset.JobSet
	var err error
	if w.process {
		js, err = b.c.InjectedJobSet(ns, b.o.workers, "")
	} else {
		js, err = b.c.JobSet(ns, w.strategy, b.o.workers)
	}
	if err != nil {
		return nil, err
	}
	spread(js, b.o.systemNode)
	if w.community {
		if err := workload.CommunityInPlace(js, b.o.communityAgentImage); err != nil {
			return nil, err
		}
	}
	if err := b.c.CreateJobSet(ctx, js); err != nil {
		return nil, err
	}
	startCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if _, err := b.c.WaitForWorkers(startCtx, js, b.o.workers, func(map[string]workload.PodState) bool { return true }); err != nil {
		return nil, err
	}
	return js, nil
}

// spread keeps the workers off the system node and spreads each Job's
// Pods evenly over the others, so that the fault takes the same share of
// every Job: Kubernetes' Job controller holds a Job's replacements back
// by a backoff that doubles with each Pod of that Job that failed (10 s
// for one, 20 s for two), and an uneven split would measure that instead
// of the fault. Tainted nodes do not count toward the spread, so that a
// replacement may join the healthy node while the lost one is tainted
// (ours: node-lost; Kubernetes: unreachable; the administrator:
// out-of-service).
func spread(js *jobset.JobSet, systemNode string) {
	for i := range js.Spec.ReplicatedJobs {
		pod := &js.Spec.ReplicatedJobs[i].Template.Spec.Template.Spec
		pod.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpNotIn, Values: []string{systemNode}}},
			}}},
		}}
		honor := corev1.NodeInclusionPolicyHonor
		pod.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew:           1,
			TopologyKey:       corev1.LabelHostname,
			WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{jobset.JobSetNameKey: js.Name}},
			MatchLabelKeys:    []string{batchv1.JobNameLabel},
			NodeTaintsPolicy:  &honor,
		}}
	}
}

// baseline reads the group as it trains, and picks the node to fault: the
// one that runs the most workers (the first by name of equals).
func (b *bench) baseline(ctx context.Context, w way, js *jobset.JobSet) (baseline, error) {
	base := baseline{workers: b.o.workers, restarts: map[types.UID]int32{}, lost: map[string]types.UID{},
		recreate: w.strategy == jobset.Recreate, process: w.process, counter: -1, counterField: w.counter}
	var pods corev1.PodList
	if err := b.c.Client.List(ctx, &pods, client.InNamespace(js.Namespace), client.MatchingLabels{jobset.JobSetNameKey: js.Name}); err != nil {
		return base, err
	}
	perNode := map[string]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			base.restarts[p.UID] = workload.WorkerRestarts(&p)
			perNode[p.Spec.NodeName]++
		}
	}
	var nodes []string
	for n := range perNode {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	for _, n := range nodes {
		if n != b.o.systemNode && perNode[n] > perNode[base.node] {
			base.node = n
		}
	}
	if base.node == "" {
		return base, fmt.Errorf("no worker of %s/%s runs off %s", js.Namespace, js.Name, b.o.systemNode)
	}
	for _, p := range pods.Items {
		if _, ok := base.restarts[p.UID]; ok && p.Spec.NodeName == base.node {
			base.lost[rank(&p)] = p.UID
		}
	}
	if w.counter != "" {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(jobset.GroupVersion.WithKind("JobSet"))
		if err := b.c.Client.Get(ctx, client.ObjectKeyFromObject(js), u); err != nil {
			return base, err
		}
		if v, ok, _ := unstructured.NestedInt64(u.Object, "status", w.counter); ok {
			base.counter = v
		}
	}
	return base, nil
}

// pin puts every Deployment of the manifests on node (a node selector by
// hostname, added to any it has), out of the faults' reach.
func pin(m *peers.Manifests, node string) error {
	for _, u := range m.Objects {
		if u.GetKind() != "Deployment" {
			continue
		}
		selector, _, err := unstructured.NestedStringMap(u.Object, "spec", "template", "spec", "nodeSelector")
		if err != nil {
			return fmt.Errorf("pinning Deployment %s: %w", u.GetName(), err)
		}
		if selector == nil {
			selector = map[string]string{}
		}
		selector[corev1.LabelHostname] = node
		if err := unstructured.SetNestedStringMap(u.Object, selector, "spec", "template", "spec", "nodeSelector"); err != nil {
			return fmt.Errorf("pinning Deployment %s: %w", u.GetName(), err)
		}
	}
	return nil
}
