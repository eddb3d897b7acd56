package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/fastjobset/jobset/agent/kubeclient"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/tools/bench/internal/summary"
)

// The protocol's I/O floor: what any agent-based group restart must do per
// Pod, with nothing else running (no controller, no kubelet writes). N
// fresh clients, each as a new agent process (its own TLS connection, its
// Pod's token, the same RBAC and admission policy), at once: open a watch
// on the JobSet, read its current state, and patch the Pod's epoch
// annotation once. The clock stops when every patch is answered.

type ioFloorResult struct {
	// lastWatch: when the last client had read the JobSet; watchP50 and
	// patchP50: the median client's time to read it (from its start: a
	// new connection, TLS, authentication, the watch's first event) and
	// then to patch its Pod.
	seconds, lastWatch, watchP50, patchP50 float64
	requestsPerClient                      float64
	apiRequests                            int64
	// throttled: answers 429 (Priority and Fairness); failed: other errors.
	throttled, failed int64
}

var (
	jobSetsResource = kubeclient.Resource{Group: agentspec.Group, Version: agentspec.Version, Resource: agentspec.Resource}
	podsResource    = kubeclient.Resource{Version: "v1", Resource: "pods"}
)

func (b *bench) ioFloor(ctx context.Context, n, runs int, report func(ioFloorResult)) error {
	w, err := b.newFloorWorkload(ctx, n)
	defer w.close(b.c)
	if err != nil {
		return err
	}
	for run := 1; run <= runs; run++ {
		if err := sleep(ctx, time.Second); err != nil {
			return err
		}
		progress("%s: I/O floor %d of %d", w.ns, run, runs)
		before, err := apiRequestCountsNow(ctx, b.env.Config)
		if err != nil {
			return err
		}
		var requests requestCounter
		var watches phase
		clientCtx, cancel := context.WithCancel(ctx)
		errs := make([]error, n)
		watchTimes, patchTimes := make([]float64, n), make([]float64, n)
		var done sync.WaitGroup
		var closing sync.WaitGroup
		closing.Add(1)
		start := time.Now()
		for i := range n {
			done.Add(1)
			go func() {
				errs[i] = floorClient(clientCtx, w, i, int32(run), &requests, &watches, &watchTimes[i], &patchTimes[i], done.Done, closing.Wait)
			}()
		}
		done.Wait()
		seconds := time.Since(start).Seconds()
		closing.Done() // the clients end: their watches and connections close
		cancel()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		after, err := apiRequestCountsNow(ctx, b.env.Config)
		if err != nil {
			return err
		}
		report(ioFloorResult{seconds: seconds, lastWatch: since(start, &watches.last),
			watchP50: summary.Percentile(watchTimes, 50), patchP50: summary.Percentile(patchTimes, 50),
			requestsPerClient: float64(requests.count.Load()) / float64(n), apiRequests: after.total - before.total,
			throttled: requests.throttled.Load(), failed: requests.failed.Load()})
	}
	return nil
}

// floorClient is one fresh agent: a new connection, a watch of the JobSet
// until its current state is read, one patch of its Pod; done once the
// patch is answered, then it holds its watch until end returns.
func floorClient(ctx context.Context, w *workload, i int, epoch int32, requests *requestCounter, watches *phase,
	watchTime, patchTime *float64, done func(), end func()) error {
	start := time.Now()
	finished := false
	defer func() {
		if !finished {
			done()
		}
	}()
	pod := w.pods[i]
	api, closeConns, err := agentClient(w.host, podIP(i), w.roots, w.tokens[i], "jobset-agent/"+pod.Namespace+"/"+pod.Name, requests)
	if err != nil {
		return err
	}
	defer closeConns()
	var watcher *kubeclient.Watcher
	for try := 0; ; try++ {
		watcher, err = api.Watch(ctx, jobSetsResource, pod.Namespace, kubeclient.WatchOptions{Name: w.jobSet.Name})
		if err == nil {
			_, err = watcher.Next()
		}
		if err == nil {
			break
		}
		if watcher != nil {
			watcher.Stop()
		}
		if err := retryWait(ctx, try, err); err != nil {
			return fmt.Errorf("watching the JobSet for Pod %s: %w", pod.Name, err)
		}
	}
	watches.mark()
	*watchTime = time.Since(start).Seconds()
	start = time.Now()
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, agentspec.EpochAnnotation, strconv.Itoa(int(epoch)))
	for try := 0; ; try++ {
		if err = api.MergePatch(ctx, podsResource, pod.Namespace, pod.Name, patch); err == nil {
			break
		}
		if err := retryWait(ctx, try, err); err != nil {
			return fmt.Errorf("patching the epoch of Pod %s: %w", pod.Name, err)
		}
	}
	*patchTime = time.Since(start).Seconds()
	finished = true
	done()
	end()
	watcher.Stop()
	return nil
}

// retryWait is the agent's backoff (agent/backoff.go) after the answer
// err: full jitter under a bound doubling from 100 ms to 30 s (2 s while
// nothing answers), plus the server's Retry-After.
func retryWait(ctx context.Context, try int, err error) error {
	bound := min(100*time.Millisecond<<min(try, 10), 30*time.Second)
	var status *kubeclient.StatusError
	if !errors.As(err, &status) {
		bound = min(bound, 2*time.Second)
	}
	d := time.Duration(rand.Float64() * float64(bound))
	if after, ok := kubeclient.RetryAfter(err); ok {
		d += after
	}
	return sleep(ctx, d)
}
