package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

type inPlaceResult struct {
	seconds float64
	// The breakdown: when the controller deprecated the synced epoch, and
	// on what (deprecatedBy: the failed Pod's rejoin at the next epoch, or
	// a failure signal before it); when the failed Pod rejoined; when the
	// first agent told of the deprecated epoch restarted, when the last
	// did, and when the last join was written.
	deprecation, failedPodRejoin        float64
	deprecatedBy                        string
	firstRestart, lastRestart, lastJoin float64
	// The agents' requests: medians and maxima of a watch's opening and
	// of a join (a Pod patch).
	watchP50, watchMax, patchP50, patchMax float64
	apiRequests                            int64
	agentRequests, kubeletRequests         int64
	// The agents' answers 429 (Priority and Fairness) and other errors.
	throttled, failed int64
	// controllerCPU is until every barrier lifted; controllerCPUDrained
	// until the kubelets wrote every status update of the restart and the
	// controller had 1 s to handle them.
	controllerCPU, controllerCPUDrained, controllerPeakMiB float64
}

// inPlace runs an InPlaceRestart JobSet of n Pods with n agents and their
// kubelets, and times runs group restarts, each triggered by the failure of
// the first Pod's worker.
func (b *bench) inPlace(ctx context.Context, controller *process, n, runs int, report func(inPlaceResult)) error {
	w, err := b.newWorkload(ctx, "inplace", n, func(js *jobset.JobSet) ([]*corev1.Pod, error) { return b.podsOfJobs(ctx, js) })
	defer w.close(b.c)
	if err != nil {
		return err
	}
	var requests requestCounter
	g := newGroup(ctx, w, &requests)
	defer g.stop()
	progress("%s: starting %d agents", w.ns, n)
	for i := range w.pods {
		if err := g.start(i); err != nil {
			return err
		}
	}
	if err := g.waitLifted(ctx, 1); err != nil {
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
		requestsBefore, err := apiRequests(ctx, b.env.Config)
		if err != nil {
			return err
		}
		requests.reset()
		g.restarts.reset()
		kubeletBefore := b.kubelets.requests.Load()
		cpuBefore, err := controller.cpuSeconds()
		if err != nil {
			return err
		}
		deprecated, err := b.watchDeprecation(ctx, w.jobSet, int32(run))
		if err != nil {
			return err
		}
		start := time.Now()
		g.fail(0) // its kubelet reports the exit and restarts the Pod
		if err := g.waitLifted(ctx, int32(run+1)); err != nil {
			return fmt.Errorf("group restart %d: %w", run, err)
		}
		r := inPlaceResult{seconds: time.Since(start).Seconds(),
			firstRestart: since(start, &g.restarts.first), lastRestart: since(start, &g.restarts.last),
			lastJoin: since(start, &requests.lastPatch.last), agentRequests: requests.count.Load(),
			// The first join after the failure is the failed Pod's: the
			// others restart only once the epoch is deprecated.
			failedPodRejoin: since(start, &requests.lastPatch.first)}
		select {
		case d, ok := <-deprecated:
			if !ok {
				return fmt.Errorf("group restart %d: the JobSet's watch ended before epoch %d was seen deprecated", run, run)
			}
			r.deprecation, r.deprecatedBy = d.at.Sub(start).Seconds(), d.by
		case <-ctx.Done():
			return ctx.Err()
		}
		r.watchP50, r.watchMax, r.patchP50, r.patchMax = requests.latencies()
		r.throttled, r.failed = requests.throttled.Load(), requests.failed.Load()
		cpuLifted, err := controller.cpuSeconds()
		if err != nil {
			return err
		}
		requestsAfter, err := apiRequests(ctx, b.env.Config)
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
		r.apiRequests = requestsAfter - requestsBefore
		r.kubeletRequests = b.kubelets.requests.Load() - kubeletBefore
		r.controllerCPU, r.controllerCPUDrained = cpuLifted-cpuBefore, cpuDrained-cpuBefore
		if r.controllerPeakMiB, err = controller.peakMiB(); err != nil {
			return err
		}
		report(r)
	}
	return nil
}

// deprecation is when the harness saw the JobSet's synced epoch
// deprecated, and what the controller deprecated it on.
type deprecation struct {
	at time.Time
	by string
}

// watchDeprecation watches the JobSet from its current state and sends
// when its deprecatedEpoch first reaches epoch, or closes the channel if
// the watch ends first. The watch is open when it returns: the JobSet as
// it is now has been delivered.
func (b *bench) watchDeprecation(ctx context.Context, js *jobset.JobSet, epoch int32) (<-chan deprecation, error) {
	w, err := b.c.Watch(ctx, &jobset.JobSetList{}, client.InNamespace(js.Namespace), client.MatchingFields{"metadata.name": js.Name})
	if err != nil {
		return nil, fmt.Errorf("watching JobSet %s: %w", js.Name, err)
	}
	current, ok := <-w.ResultChan()
	if !ok {
		return nil, fmt.Errorf("watching JobSet %s: the watch ended before the JobSet came", js.Name)
	}
	if got, isJobSet := current.Object.(*jobset.JobSet); !isJobSet || ptr.Deref(got.Status.DeprecatedEpoch, 0) >= epoch {
		w.Stop()
		return nil, fmt.Errorf("watching JobSet %s: %T %v, want it before epoch %d is deprecated", js.Name, current.Object, current.Type, epoch)
	}
	out := make(chan deprecation, 1)
	go func() {
		defer close(out)
		defer w.Stop()
		for event := range w.ResultChan() {
			got, isJobSet := event.Object.(*jobset.JobSet)
			if !isJobSet || ptr.Deref(got.Status.DeprecatedEpoch, 0) < epoch {
				continue
			}
			at := time.Now()
			by := "failure_signal"
			if c := meta.FindStatusCondition(got.Status.Conditions, string(jobset.JobSetInPlaceRestarting)); c != nil && strings.Contains(c.Message, " joined epoch ") {
				by = "rejoin"
			}
			out <- deprecation{at: at, by: by}
			return
		}
	}()
	return out, nil
}
