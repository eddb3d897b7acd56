package main

import (
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/demo/workload"
)

// The milestones of a recovery, in the order they usually come. Each is
// the seconds from the fault until it was first seen.
const (
	// notReady: the faulted Node's Ready condition is no longer True.
	notReady = "notready_s"
	// tainted: the harness, as the administrator, applied the
	// out-of-service taint (the ways that wait for one).
	tainted = "tainted_s"
	// detected: every Pod of the faulted node is marked for replacement:
	// Failed, with a DisruptionTarget condition, deleted or gone.
	detected = "detected_s"
	// removed: every Pod of the faulted node is gone from the API server
	// (a lost kubelet never confirms a deletion: the Pod garbage
	// collector removes them from an out-of-service node, and nothing
	// else does before the node is back).
	removed = "removed_s"
	// replaced: every rank of the faulted node has a new Pod.
	replaced = "replaced_s"
	// scheduled: every such Pod is bound to a node.
	scheduled = "scheduled_s"
	// started: every such Pod runs a container (in place: its agent,
	// waiting at the barrier; Recreate: its worker).
	started = "started_s"
	// synced: the group's barrier lifted at the next epoch (ours:
	// syncedEpoch; community: currentInPlaceRestartAttempt).
	synced = "synced_s"
)

var milestones = []string{notReady, tainted, detected, removed, replaced, scheduled, started, synced}

// baseline is the group as it trained before the fault.
type baseline struct {
	// node is the faulted node; workers the group's size.
	node    string
	workers int
	// restarts: each Pod's worker restarts, by UID; a Pod of the fault's
	// aftermath trains at the next epoch when it is new or its worker
	// restarted since (in place), or when it is new (recreate).
	restarts map[types.UID]int32
	recreate bool
	// process: the workers restart in the process tier, where no
	// container restarts: see workerRuns.
	process bool
	// lost: the UIDs of the faulted node's Pods, by rank.
	lost map[string]types.UID
	// counter is the way's synced counter before the fault (-1: none
	// yet); counterField names it in the JobSet's status ("" for
	// Recreate, which has none).
	counter      int64
	counterField string
}

// lostPerJob is the most ranks of one Job the fault took.
func (b baseline) lostPerJob() int {
	perJob := map[string]int{}
	most := 0
	for r := range b.lost {
		job, _, _ := strings.Cut(r, "/")
		perJob[job]++
		most = max(most, perJob[job])
	}
	return most
}

// scene is what the API server shows at one moment.
type scene struct {
	pods      []*corev1.Pod
	nodeReady bool
	counter   int64
}

// progress is what a scene shows of the recovery.
type progress struct {
	reached map[string]bool
	// training: every rank runs its worker at the next epoch, none on the
	// faulted node.
	training bool
	// replacementWorkers: the ranks of the faulted node whose new Pod runs
	// its worker.
	replacementWorkers map[string]bool
}

// rank names a worker's place in the group: its Job (a recreated Job
// keeps its name) and its completion index.
func rank(p *corev1.Pod) string {
	return p.Labels[batchv1.JobNameLabel] + "/" + p.Annotations[batchv1.JobCompletionIndexAnnotation]
}

// evaluate is the pure reading of a scene against the baseline.
func (b baseline) evaluate(s scene) progress {
	pr := progress{reached: map[string]bool{}, replacementWorkers: map[string]bool{}}
	pr.reached[notReady] = !s.nodeReady
	if b.counterField != "" {
		pr.reached[synced] = s.counter > b.counter
	}

	byUID := map[types.UID]*corev1.Pod{}
	newPods := map[string][]*corev1.Pod{}
	for _, p := range s.pods {
		byUID[p.UID] = p
		if _, old := b.restarts[p.UID]; !old {
			newPods[rank(p)] = append(newPods[rank(p)], p)
		}
	}
	marked, gone, replacedAll, scheduledAll, startedAll := true, true, true, true, true
	for r, uid := range b.lost {
		if p, ok := byUID[uid]; ok {
			gone = false
			marked = marked && markedForReplacement(p)
		}
		var bound, running bool
		for _, p := range newPods[r] {
			bound = bound || p.Spec.NodeName != ""
			running = running || anyContainerRunning(p)
			if b.workerRuns(p, s) {
				pr.replacementWorkers[r] = true
			}
		}
		replacedAll = replacedAll && len(newPods[r]) > 0
		scheduledAll = scheduledAll && bound
		startedAll = startedAll && running
	}
	pr.reached[detected] = marked
	pr.reached[removed] = gone
	pr.reached[replaced] = replacedAll
	pr.reached[scheduled] = scheduledAll
	pr.reached[started] = startedAll

	training := 0
	for _, p := range s.pods {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || p.Spec.NodeName == b.node || !workload.AllStarted(p) {
			continue
		}
		before, old := b.restarts[p.UID]
		switch {
		case b.process:
			if b.workerRuns(p, s) {
				training++
			}
		case !old:
			training++
		case !b.recreate && workload.WorkerRestarts(p) > before:
			training++
		}
	}
	pr.training = training == b.workers
	return pr
}

// markedForReplacement: the Pod will not run again, as its Job sees it.
func markedForReplacement(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed {
		return true
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func anyContainerRunning(p *corev1.Pod) bool {
	for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		if cs.State.Running != nil {
			return true
		}
	}
	return false
}

// workerRuns: p's worker runs, at the next epoch in the process tier. There
// the wrapper's container runs from the Pod's start, its worker waiting at
// the barrier, and a survivor's container does not restart: a worker runs
// once the group synced, past the epoch it trained at before the fault,
// the epoch p's agent joined, whose agent lifts the barrier as the sync
// reaches it.
func (b baseline) workerRuns(p *corev1.Pod, s scene) bool {
	if !workerRunning(p) {
		return false
	}
	if !b.process {
		return true
	}
	joined, err := agentspec.ParseEpoch(p.Annotations[jobset.EpochKey])
	return err == nil && s.counter > b.counter && int64(joined) == s.counter
}

func workerRunning(p *corev1.Pod) bool {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == workerContainer && cs.State.Running != nil && cs.Started != nil && *cs.Started {
			return true
		}
	}
	return false
}

// workerContainer is the name of story 1's worker container.
const workerContainer = "worker"
