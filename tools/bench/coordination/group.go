package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fastjobset/jobset/agent"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
)

// group runs one agent process per Pod of a workload, and plays each Pod's
// kubelet: an agent that exits with the restart code is started again at
// once (RestartAllContainers), a new process with a new connection, while
// the kubelet writes the Pod's status updates. In the process tier, it
// also plays each Pod's worker wrapper (wrapperstandin.go), and an agent
// restarts its worker through it, surviving the group restart: the
// kubelet has nothing to do or write.
type group struct {
	ctx      context.Context
	cancel   context.CancelFunc
	w        *workload
	requests *requestCounter

	// agentStart is how long the kubelet takes to run the agent again
	// once it has removed every container (0: at once).
	agentStart time.Duration

	// wrappers are the Pods' worker wrappers, nil but in the process
	// tier.
	wrappers []*wrapperStandIn

	mu      sync.Mutex
	running []*instance
	changed chan struct{}
	// restarts marks the agents that acted on a deprecated epoch: in the
	// Pod tier, those that exited with the restart code; in the process
	// tier, those that had their wrapper stop their running worker.
	restarts phase
	// workerStarts marks the process tier's workers started again.
	workerStarts phase
	// podRestarts counts the agents that exited with the restart code
	// (the Pod tier's restarts, and the process tier's fallback to it).
	podRestarts atomic.Int64
}

type instance struct {
	agent  *agent.Agent
	cancel context.CancelFunc
	// started is when its container started, as the kubelet reports it.
	started metav1.Time
}

func newGroup(ctx context.Context, w *workload, requests *requestCounter, agentStart time.Duration, tier tier) (*group, error) {
	ctx, cancel := context.WithCancel(ctx)
	g := &group{ctx: ctx, cancel: cancel, w: w, requests: requests, agentStart: agentStart,
		running: make([]*instance, len(w.pods)), changed: make(chan struct{}, 1)}
	if tier != processTier {
		return g, nil
	}
	g.wrappers = make([]*wrapperStandIn, len(w.pods))
	hooks := wrapperHooks{
		started:  func(int) { g.workerStarts.mark(); g.notify() },
		stopping: g.restarts.mark,
	}
	for i := range g.wrappers {
		g.wrappers[i] = newWrapperStandIn(fmt.Sprintf("/b2/%s/%d/control", w.ns, i), hooks)
	}
	return g, nil
}

func (g *group) stop() {
	g.cancel()
	for _, w := range g.wrappers {
		if w != nil {
			w.close()
		}
	}
}

func (g *group) agentName(i int) string {
	spec := g.w.pods[i].Spec
	return spec.InitContainers[sidecar.Index(spec)].Name
}

// start runs a new agent process for Pod i.
func (g *group) start(i int) error {
	pod := g.w.pods[i]
	cfg := agent.Config{Namespace: pod.Namespace, PodName: pod.Name, JobSetName: g.w.jobSet.Name,
		RestartExitCode: agentspec.DefaultRestartExitCode, BarrierPath: agentspec.DefaultBarrierPath}
	var opts []agent.Option
	if g.wrappers != nil {
		cfg.WrapperControl = g.wrappers[i].control
		opts = append(opts, agent.WithWrapperDialer(g.wrappers[i].dial))
	}
	listener := newBarrierListener(podIP(i))
	api, closeConns, err := agentClient(g.w.host, podIP(i), g.w.roots, g.w.tokens[i], cfg.UserAgent(), g.requests)
	if err != nil {
		_ = listener.Close()
		return err
	}
	a := agent.New(cfg, api, append(opts, agent.WithListener(listener))...)
	ctx, cancel := context.WithCancel(g.ctx)
	in := &instance{agent: a, cancel: cancel, started: metav1.Now()}
	g.mu.Lock()
	g.running[i] = in
	g.mu.Unlock()
	go func() {
		code := a.Run(ctx)
		closeConns() // the process exits
		if code == cfg.RestartExitCode && g.ctx.Err() == nil {
			g.podRestarts.Add(1)
			if g.wrappers == nil {
				g.restarts.mark()
			} else {
				// Every container restarts, the worker's wrapper with them.
				g.wrappers[i].restarted()
			}
			g.restartAll(i, g.agentName(i), int32(code))
		}
	}()
	go func() {
		select {
		case <-a.Lifted():
			g.lifted(i, in)
			g.notify()
		case <-ctx.Done():
		}
	}()
	return nil
}

// restartAll is the kubelet's RestartAllContainers on Pod i after the
// container named exited with code: the exit reported, every container
// removed, the agent started again (a new process), which the kubelet
// reports at its next relist.
func (g *group) restartAll(i int, exitedContainer string, code int32) {
	k := g.w.kubelet[i]
	k.set(g.ctx, true, func(s corev1.PodStatus) corev1.PodStatus { return exited(s, exitedContainer, code, metav1.Now()) })
	k.set(g.ctx, false, func(s corev1.PodStatus) corev1.PodStatus { return removed(s, metav1.Now()) })
	if g.agentStart > 0 {
		time.AfterFunc(g.agentStart, func() {
			if g.ctx.Err() == nil {
				g.startAgain(i)
			}
		})
		return
	}
	g.startAgain(i)
}

// startAgain runs Pod i's agent again after its restart, and has the
// kubelet report it at its next relist.
func (g *group) startAgain(i int) {
	if err := g.start(i); err != nil {
		fail(fmt.Errorf("restarting the agent of Pod %s: %w", g.w.pods[i].Name, err))
	}
	g.mu.Lock()
	in := g.running[i]
	g.mu.Unlock()
	k, agentName := g.w.kubelet[i], g.agentName(i)
	time.AfterFunc(untilRelist(i/podsPerNode, time.Now()), func() {
		g.mu.Lock()
		current := g.running[i] == in
		g.mu.Unlock()
		if current { // not restarted again since
			k.set(g.ctx, false, func(s corev1.PodStatus) corev1.PodStatus { return agentRunning(s, agentName, in.started) })
		}
	})
}

// lifted: Pod i's agent passes its startup probe, and the kubelet starts
// the workers, unless they run already (the agents' first start). The
// kubelet probes a container it has seen run: it reports the agent
// running by then.
func (g *group) lifted(i int, in *instance) {
	k := g.w.kubelet[i]
	agentName := g.agentName(i)
	k.set(g.ctx, false, func(s corev1.PodStatus) corev1.PodStatus {
		s = agentRunning(s, agentName, in.started)
		for _, c := range s.InitContainerStatuses {
			if c.Name == agentName && c.Started != nil && *c.Started {
				return s
			}
		}
		return agentStarted(s, agentName, metav1.Now())
	})
	k.set(g.ctx, false, func(s corev1.PodStatus) corev1.PodStatus {
		for _, c := range s.ContainerStatuses {
			if c.State.Running == nil {
				return workersRunning(s, metav1.Now())
			}
		}
		return s
	})
}

// fail is a worker of Pod i failing with code 1: the trigger. In the
// process tier, its wrapper reports the exit to the agent, and no kubelet
// sees it.
func (g *group) fail(i int) error {
	if g.wrappers != nil {
		return g.wrappers[i].exit(1)
	}
	worker := g.w.pods[i].Spec.Containers[0].Name
	g.mu.Lock()
	old := g.running[i]
	g.mu.Unlock()
	old.cancel() // the kubelet kills the agent with the other containers
	g.restartAll(i, worker, 1)
	return nil
}

func (g *group) notify() {
	select {
	case g.changed <- struct{}{}:
	default:
	}
}

// waitLifted waits until every Pod's current agent lifted its barrier at
// epoch.
func (g *group) waitLifted(ctx context.Context, epoch int32) error {
	return g.waitAll(ctx, fmt.Sprintf("agents lifted their barrier at epoch %d", epoch), func(i int, in *instance) bool {
		select {
		case <-in.agent.Lifted():
			return in.agent.Epoch() == epoch
		default:
			return false
		}
	})
}

// waitWorkers waits, in the process tier, until every Pod's worker runs
// an attempt started since t. Not a given attempt: a Pod whose agent fell
// back to the Pod tier has a new wrapper, which numbers its attempts anew.
func (g *group) waitWorkers(ctx context.Context, t time.Time) error {
	if g.wrappers == nil {
		return nil
	}
	return g.waitAll(ctx, "workers started since "+t.Format(time.RFC3339Nano), func(i int, _ *instance) bool {
		return g.wrappers[i].runsSince(t)
	})
}

// waitAll waits until done holds for every Pod.
func (g *group) waitAll(ctx context.Context, what string, done func(i int, in *instance) bool) error {
	for {
		g.mu.Lock()
		n := 0
		for i, in := range g.running {
			if done(i, in) {
				n++
			}
		}
		total := len(g.running)
		g.mu.Unlock()
		if n == total {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d %s: %w", n, total, what, ctx.Err())
		case <-g.changed:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// drained waits until every kubelet wrote what it had to.
func (g *group) drained() error {
	for _, k := range g.w.kubelet {
		if err := k.wait(); err != nil {
			return err
		}
	}
	return nil
}

// phase is the time of the first or last of a kind of event, for the
// breakdown of a group restart.
type phase struct {
	first, last atomic.Int64 // UnixNano; 0 until marked
}

func (p *phase) mark() {
	now := time.Now().UnixNano()
	p.first.CompareAndSwap(0, now)
	p.last.Store(now)
}

func (p *phase) reset() { p.first.Store(0); p.last.Store(0) }

// since is how long after start the first or last event came, in seconds.
func since(start time.Time, at *atomic.Int64) float64 {
	if at.Load() == 0 {
		return 0
	}
	return time.Unix(0, at.Load()).Sub(start).Seconds()
}
