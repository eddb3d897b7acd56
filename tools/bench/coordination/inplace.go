package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

type inPlaceResult struct {
	seconds float64
	// The breakdown: when the controller deprecated the synced epoch (the
	// earlier of its log of the write and the first agent's restart), and
	// what the deprecating decision named (deprecatedBy: the failed Pod's
	// rejoin at the next epoch, or a failure signal), as it saw the Pods
	// on the fresh read that confirms a write; when the failed Pod
	// rejoined; when the first agent told of the deprecated epoch
	// restarted, when the last did, and when the last join was written.
	deprecation, failedPodRejoin        float64
	deprecatedBy                        string
	firstRestart, lastRestart, lastJoin float64
	// sync: when the controller wrote the synced epoch (its log), which
	// the agents' watches then deliver. Before it: when a watch of the
	// Pods (the harness's own, beside the controller's) showed the last
	// join, when the reconcile that synced began, how long its fresh read
	// of the Pods took, and when it had decided (its log at -v=2).
	sync, lastJoinSeen, syncBegan, syncFreshRead, syncDecided float64
	// The agents' requests: medians and maxima of a watch's opening and
	// of a join (a Pod patch).
	watchP50, watchMax, patchP50, patchMax float64
	// requests: what the API server served, from every client, until
	// the kubelets wrote every status update and 1 s more.
	requests                       apiRequestCounts
	agentRequests, kubeletRequests int64
	// events and eventBytes: what the agents' watches of the JobSet
	// delivered, in all, until the kubelets' writes were done and 1 s
	// more (the JobSet written n times is n events an agent), and until
	// the last barrier lifted.
	events, eventBytes, eventsUntilLifted int64
	// The agents' answers 429 (Priority and Fairness) and other errors.
	throttled, failed int64
	// lastLifted: when the harness saw every barrier lifted (polled).
	// lastWorkerStarted: in the process tier, when the last wrapper was
	// told to start the worker again, which its agent does once its
	// barrier lifted: the end of the process tier's restart.
	lastLifted, lastWorkerStarted float64
	// podRestarts: the agents that exited with the restart code, every
	// Pod in the Pod tier; in the process tier, those that fell back to
	// the Pod tier.
	podRestarts int64
	// controllerCPU is until every barrier lifted; controllerCPUDrained
	// until the kubelets wrote every status update of the restart and the
	// controller had 1 s to handle them.
	controllerCPU, controllerCPUDrained, controllerPeakMiB float64
}

// inPlace runs an InPlaceRestart JobSet of n Pods with n agents and their
// kubelets (and in the process tier, their workers' wrappers), and times
// runs group restarts, each triggered by the failure of the first Pod's
// worker. Each group restart is one epoch: restart r ends at epoch r + 1.
func (b *bench) inPlace(ctx context.Context, controller *process, n, runs int, t tier, report func(inPlaceResult)) error {
	w, err := b.newWorkload(ctx, t.String(), n, jobset.InPlaceRestart, t == processTier)
	defer w.close(b.c)
	if err != nil {
		return err
	}
	var requests requestCounter
	g, err := newGroup(ctx, w, &requests, b.agentStart, t)
	defer g.stop()
	if err != nil {
		return err
	}
	progress("%s: starting %d agents", w.ns, n)
	for i := range w.pods {
		if err := g.start(i); err != nil {
			return err
		}
	}
	if err := g.waitLifted(ctx, 1); err != nil {
		return fmt.Errorf("initial sync: %w", err)
	}
	if err := g.waitWorkers(ctx, time.Time{}); err != nil {
		return fmt.Errorf("initial sync: %w", err)
	}
	if err := g.drained(); err != nil {
		return err
	}
	for run := 1; run <= runs; run++ {
		// Status times have a one-second resolution: the failure comes in
		// a later second than the last restart's agent start.
		if err := sleep(ctx, 1500*time.Millisecond); err != nil {
			return err
		}
		progress("%s: group restart %d of %d", w.ns, run, runs)
		requestsBefore, err := apiRequestCountsNow(ctx, b.env.Config)
		if err != nil {
			return err
		}
		requests.reset()
		g.restarts.reset()
		g.workerStarts.reset()
		g.podRestarts.Store(0)
		kubeletBefore := b.kubelets.requests.Load()
		cpuBefore, err := controller.cpuSeconds()
		if err != nil {
			return err
		}
		joins := &joinWatch{epoch: strconv.Itoa(run + 1), pods: n, joined: map[types.UID]bool{}}
		w.nodes.setObserver(joins.observe)
		start := time.Now()
		// Its kubelet reports the exit and restarts the Pod; in the
		// process tier, its wrapper reports the exit to its agent.
		if err := g.fail(0); err != nil {
			return fmt.Errorf("group restart %d: %w", run, err)
		}
		if err := g.waitLifted(ctx, int32(run+1)); err != nil {
			return fmt.Errorf("group restart %d: %w", run, err)
		}
		lastLifted := time.Since(start).Seconds()
		eventsUntilLifted := requests.events.Load()
		if err := g.waitWorkers(ctx, start); err != nil {
			return fmt.Errorf("group restart %d: %w", run, err)
		}
		r := inPlaceResult{seconds: lastLifted, lastLifted: lastLifted, eventsUntilLifted: eventsUntilLifted,
			firstRestart: since(start, &g.restarts.first), lastRestart: since(start, &g.restarts.last),
			lastJoin: since(start, &requests.lastPatch.last), agentRequests: requests.count.Load(),
			// The first join after the failure is the failed Pod's: the
			// others restart only once the epoch is deprecated.
			failedPodRejoin: since(start, &requests.lastPatch.first)}
		at, by, err := deprecationLogged(controller, start)
		if err != nil {
			return fmt.Errorf("group restart %d: %w", run, err)
		}
		// The first agent to act on the deprecation saw it written, and
		// when the harness's agents take the CPUs, before the controller
		// could log it.
		r.deprecation, r.deprecatedBy = at.Sub(start).Seconds(), by
		if r.firstRestart > 0 {
			r.deprecation = min(r.deprecation, r.firstRestart)
		}
		synced, _, err := logged(controller, start, jobset.ReasonInPlaceRestartCompleted)
		if err != nil {
			return fmt.Errorf("group restart %d: %w", run, err)
		}
		r.sync = synced.Sub(start).Seconds()
		w.nodes.setObserver(nil)
		r.lastJoinSeen = joins.last(start)
		began, decided, freshRead, err := syncReconcile(controller, start, synced)
		if err != nil {
			return fmt.Errorf("group restart %d: %w", run, err)
		}
		r.syncBegan, r.syncDecided, r.syncFreshRead = began.Sub(start).Seconds(), decided.Sub(start).Seconds(), freshRead
		if t == processTier {
			// Each wrapper is told to start its worker after its agent
			// lifted the barrier: the last start is the later end, and
			// dated where it happens rather than by a poll.
			r.lastWorkerStarted = since(start, &g.workerStarts.last)
			r.seconds = r.lastWorkerStarted
		}
		r.watchP50, r.watchMax, r.patchP50, r.patchMax = requests.latencies()
		r.throttled, r.failed = requests.throttled.Load(), requests.failed.Load()
		cpuLifted, err := controller.cpuSeconds()
		if err != nil {
			return err
		}
		if err := g.drained(); err != nil {
			return err
		}
		if err := sleep(ctx, time.Second); err != nil {
			return err
		}
		cpuDrained, err := controller.cpuSeconds()
		if err != nil {
			return err
		}
		requestsAfter, err := apiRequestCountsNow(ctx, b.env.Config)
		if err != nil {
			return err
		}
		r.requests = requestsAfter.minus(requestsBefore)
		r.events, r.eventBytes = requests.events.Load(), requests.eventBytes.Load()
		r.kubeletRequests = b.kubelets.requests.Load() - kubeletBefore
		r.podRestarts = g.podRestarts.Load()
		r.controllerCPU, r.controllerCPUDrained = cpuLifted-cpuBefore, cpuDrained-cpuBefore
		if r.controllerPeakMiB, err = controller.peakMiB(); err != nil {
			return err
		}
		report(r)
	}
	return nil
}

// fields are the key/value pairs of a group restart's line in place, at n
// Pods, either tier. last_lifted_s is when every barrier had lifted
// (polled); in the process tier, seconds are when the last worker started
// again, and worker_started_s says so.
func (p inPlaceResult) fields(n int) []any {
	kv := []any{"seconds", p.seconds, "last_lifted_s", p.lastLifted}
	if p.lastWorkerStarted > 0 {
		kv = append(kv, "worker_started_s", p.lastWorkerStarted)
	}
	return append(kv,
		"trigger_to_deprecation_s", p.deprecation, "deprecated_by", p.deprecatedBy, "failed_pod_rejoin_s", p.failedPodRejoin,
		"first_restart_s", p.firstRestart, "last_restart_s", p.lastRestart, "last_join_s", p.lastJoin, "last_join_seen_s", p.lastJoinSeen,
		"sync_reconcile_began_s", p.syncBegan, "sync_fresh_read_s", p.syncFreshRead, "sync_decided_s", p.syncDecided, "sync_s", p.sync,
		"watch_open_p50_s", p.watchP50, "watch_open_max_s", p.watchMax, "join_p50_s", p.patchP50, "join_max_s", p.patchMax,
		"api_requests", p.requests.total, "rejected_429", p.requests.rejected, "agent_requests_per_agent", float64(p.agentRequests)/float64(n),
		"jobset_events_per_agent", float64(p.events)/float64(n), "jobset_events_per_agent_until_lifted", float64(p.eventsUntilLifted)/float64(n),
		"jobset_event_kib_per_agent", float64(p.eventBytes)/1024/float64(n),
		"agent_throttled", p.throttled, "agent_failed", p.failed, "pod_restarts", p.podRestarts,
		"kubelet_requests_per_pod", float64(p.kubeletRequests)/float64(n),
		"controller_cpu_s", p.controllerCPU, "controller_cpu_drained_s", p.controllerCPUDrained,
		"controller_cpu_ms_per_pod", 1000*p.controllerCPUDrained/float64(n), "controller_peak_mib", p.controllerPeakMiB)
}

// deprecationLogged reads from the controller's log when, first after
// start, it wrote a deprecated epoch, and what it named as the trigger:
// "rejoin" (a Pod joined the next epoch) or "failure_signal". The
// controller logs a decision once its status write succeeded, on this
// machine's clock; a watch of the JobSet would add its own delay, which
// the group restart's load makes longer than the time measured.
func deprecationLogged(controller *process, start time.Time) (time.Time, string, error) {
	at, msg, err := logged(controller, start, jobset.ReasonInPlaceRestartStarted)
	if err != nil {
		return at, "", err
	}
	if strings.Contains(msg, " joined epoch ") {
		return at, "rejoin", nil
	}
	return at, "failure_signal", nil
}

// logged reads from the controller's log when, first after start, it
// logged a decision for reason, and its message.
func logged(controller *process, start time.Time, reason string) (time.Time, string, error) {
	var at time.Time
	var msg string
	err := readLog(controller, func(line logLine) bool {
		if line.Reason == reason && !line.TS.Before(start) {
			at, msg = line.TS, line.Msg
			return false
		}
		return true
	})
	if err == nil && at.IsZero() {
		err = fmt.Errorf("the controller logged no %s since %s", reason, start.Format(time.RFC3339Nano))
	}
	return at, msg, err
}

// logLine is what the harness reads of a line of the controller's log.
type logLine struct {
	TS     time.Time `json:"ts"`
	Msg    string    `json:"msg"`
	Reason string    `json:"reason"`
	// Of a reconcile's "Reconciling", at -v=2: whether it confirmed its
	// decision on a fresh read, and durations in seconds.
	Confirmed bool    `json:"confirmed"`
	DecidedIn float64 `json:"decidedIn"`
	FreshRead float64 `json:"freshRead"`
}

// readLog hands each JSON line of the controller's log to next until it
// returns false.
func readLog(controller *process, next func(logLine) bool) error {
	f, err := os.Open(controller.log)
	if err != nil {
		return err
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		var line logLine
		if json.Unmarshal(scanner.Bytes(), &line) == nil && !next(line) {
			return nil
		}
	}
	return scanner.Err()
}

// joinWatch dates when the harness's watch of the Pods showed the last of
// its Pods at epoch: when the controller's watch could have shown it too.
type joinWatch struct {
	epoch string
	pods  int

	mu     sync.Mutex
	joined map[types.UID]bool
	lastAt time.Time
}

func (j *joinWatch) observe(pod *corev1.Pod, deleted bool) {
	if deleted || pod.Annotations[jobset.EpochKey] != j.epoch {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.joined[pod.UID] {
		return
	}
	j.joined[pod.UID] = true
	if len(j.joined) == j.pods {
		j.lastAt = time.Now()
	}
}

// last is when the last Pod showed the epoch, in seconds since start (0:
// not every Pod did).
func (j *joinWatch) last(start time.Time) float64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.lastAt.IsZero() {
		return 0
	}
	return j.lastAt.Sub(start).Seconds()
}

// syncReconcile finds, in the controller's log, the reconcile that wrote
// the sync logged at synced: the last confirmed one to have decided
// before it. It returns when that reconcile began and decided, and how
// long its fresh read took in seconds.
func syncReconcile(controller *process, start, synced time.Time) (began, decided time.Time, freshRead float64, err error) {
	err = readLog(controller, func(line logLine) bool {
		if line.Msg == "Reconciling" && line.Confirmed && !line.TS.Before(start) && !line.TS.After(synced) {
			decided, freshRead = line.TS, line.FreshRead
			began = line.TS.Add(-time.Duration(line.DecidedIn * float64(time.Second)))
		}
		return !line.TS.After(synced)
	})
	if err == nil && decided.IsZero() {
		err = fmt.Errorf("the controller logged no confirmed reconcile before its sync at %s (is it at -v=2?)", synced.Format(time.RFC3339Nano))
	}
	return began, decided, freshRead, err
}
