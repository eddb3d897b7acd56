package main

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// localCluster is tools/cluster/cluster.sh of the running local cluster
// (JOBSET_CLUSTER_DIR, when set, is passed on with the environment).
type localCluster struct {
	script string
}

// run runs cluster.sh and returns what it printed on its standard output.
func (l localCluster) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, l.script, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("cluster.sh %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// fault brings a node fault (kill, freeze, cut, cut-api, kubelet) or ends it
// (back, which starts a stopped kubelet again too).
func (l localCluster) fault(ctx context.Context, action, node string) error {
	args := []string{"node", action, node}
	if action == kubelet {
		args = []string{"stop", "kubelet", "--node", node}
	}
	_, err := l.run(ctx, args...)
	return err
}

// listWorkers is run in a node's namespaces by `cluster.sh exec --node`:
// for each filter (a Pod's worker containers), after a line "--", a line
// per container: its ID and how many processes its task has (0: none);
// then a line "--" and every task with its status.
const listWorkers = `socket=$1; shift
c() { ctr --address "$socket" --namespace k8s.io "$@"; }
for f in "$@"; do echo --; for id in $(c containers ls --quiet "$f"); do
echo "$id $(c tasks ps "$id" 2>/dev/null | tail -n +2 | wc -l)"; done; done
echo --; c tasks ls`

// runningWorkers asks the node's own containerd which of the Pods (by
// rank) run their worker: their worker container's task runs with at
// least minProcesses processes (2 under the worker wrapper, which stays
// when it stopped the worker).
func (l localCluster) runningWorkers(ctx context.Context, node, socket string, pods map[string]types.UID, minProcesses int) (map[string]bool, error) {
	var ranks []string
	args := []string{"exec", "--node", node, "sh", "-c", listWorkers, "sh", socket}
	for r, uid := range pods {
		ranks = append(ranks, r)
		args = append(args, fmt.Sprintf(`labels."io.kubernetes.pod.uid"==%s,labels."io.kubernetes.container.name"==%s`, uid, workerContainer))
	}
	out, err := l.run(ctx, args...)
	if err != nil {
		return nil, err
	}
	running, err := parseRunningWorkers(out, ranks, minProcesses)
	if err != nil {
		return nil, fmt.Errorf("containerd of %s: %w", node, err)
	}
	return running, nil
}

// parseRunningWorkers reads listWorkers' output for ranks, in the order of
// its filters.
func parseRunningWorkers(out string, ranks []string, minProcesses int) (map[string]bool, error) {
	sections := strings.Split(out, "--\n")
	if len(sections) != len(ranks)+2 {
		return nil, fmt.Errorf("%d sections, want %d: %q", len(sections), len(ranks)+2, out)
	}
	tasks := map[string]bool{}
	for _, line := range strings.Split(sections[len(sections)-1], "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[2] == "RUNNING" {
			tasks[f[0]] = true
		}
	}
	running := map[string]bool{}
	for i, r := range ranks {
		running[r] = false
		for _, line := range strings.Split(sections[i+1], "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			processes, err := strconv.Atoi(f[len(f)-1])
			if len(f) != 2 || err != nil {
				return nil, fmt.Errorf("container line %q: want an ID and a process count", line)
			}
			running[r] = running[r] || tasks[f[0]] && processes >= minProcesses
		}
	}
	return running, nil
}

// workerWatch polls a node's own containerd for the workers of the Pods
// the fault took from the group: whether they run, seen from the node,
// whatever the API server says.
type workerWatch struct {
	cluster localCluster
	node    string
	socket  string
	pods    map[string]types.UID
	// minProcesses: see runningWorkers.
	minProcesses int

	mu sync.Mutex
	// lastRunning: each rank's last sighting of its old worker running;
	// stopped: the first poll after it that saw it stopped.
	lastRunning, stopped map[string]time.Time
	// quietSince: since when no old worker was seen running.
	quietSince time.Time
	// polls counts the answers; err is the last failure to get one.
	polls  int
	err    error
	done   chan struct{}
	cancel context.CancelFunc
}

// workerPollInterval paces the polls of a node's containerd: each one is
// a few processes (cluster.sh, nsenter, ctr).
const workerPollInterval = 250 * time.Millisecond

// watchWorkers polls the workers of pods on node; wrapped: they run
// under the worker wrapper.
func (l localCluster) watchWorkers(ctx context.Context, node string, pods map[string]types.UID, wrapped bool) (*workerWatch, error) {
	socket, err := l.run(ctx, "socket", "--node", node)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &workerWatch{
		cluster: l, node: node, socket: strings.TrimSpace(socket), pods: pods, minProcesses: 1,
		lastRunning: map[string]time.Time{}, stopped: map[string]time.Time{},
		done: make(chan struct{}), cancel: cancel,
	}
	if wrapped {
		w.minProcesses = 2
	}
	go w.loop(ctx)
	return w, nil
}

func (w *workerWatch) loop(ctx context.Context) {
	defer close(w.done)
	ticker := time.NewTicker(workerPollInterval)
	defer ticker.Stop()
	for {
		running, err := w.cluster.runningWorkers(ctx, w.node, w.socket, w.pods, w.minProcesses)
		now := time.Now()
		w.mu.Lock()
		switch {
		case ctx.Err() != nil:
		case err != nil:
			w.err = err
		default:
			w.polls++
			anyRunning := false
			for r := range w.pods {
				if running[r] {
					anyRunning = true
					w.lastRunning[r] = now
					delete(w.stopped, r)
				} else if w.stopped[r].IsZero() {
					w.stopped[r] = now
				}
			}
			if anyRunning {
				w.quietSince = time.Time{}
			} else if w.quietSince.IsZero() {
				w.quietSince = now
			}
		}
		w.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// waitQuiet returns once no old worker has been seen running for quiet
// (the kubelet stopped them and started none again), or after most.
func (w *workerWatch) waitQuiet(ctx context.Context, quiet, most time.Duration) error {
	deadline := time.Now().Add(most)
	ticker := time.NewTicker(workerPollInterval)
	defer ticker.Stop()
	for {
		w.mu.Lock()
		since := w.quietSince
		w.mu.Unlock()
		switch {
		case !since.IsZero() && time.Since(since) >= quiet:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("the old workers on %s still ran %s on", w.node, most)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
	}
}

// stop ends the polls and returns what they saw; an error when none of
// them was answered.
func (w *workerWatch) stop() (lastRunning, stopped map[string]time.Time, err error) {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.polls == 0 && w.err != nil {
		return nil, nil, w.err
	}
	return w.lastRunning, w.stopped, nil
}
