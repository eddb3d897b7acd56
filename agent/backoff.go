package agent

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/fastjobset/jobset/agent/kubeclient"
)

// rewatchSpread bounds the jittered pause before an agent re-watches after
// its watch ended cleanly or with 410 Gone. An API server that restarts or
// rolls out ends every agent's watch in the same instant; without the pause
// thousands of agents would open their watches again in that instant too.
// The watch resumes from its resourceVersion, so the pause loses no event.
const rewatchSpread = time.Second

// unreachableMax caps the backoff from the moment no API server answers at
// all (connection refused or reset, timeouts) until a request succeeds
// again: a refused connection costs the API server nothing, and the group
// restart an outage interrupted resumes only once every agent is back, so
// the fleet must return within seconds of the API server, not within the
// 30 s cap that protects a server that answers. The cap holds through the
// answers of an API server still starting (see starting): it refuses
// requests for seconds before it is ready, and those answers say nothing
// about its load once ready; growing the backoff on them would leave
// agents, and so the whole group restart, waiting seconds after it is
// ready. Any other 5xx or 429 ends the cap (see failing).
// Spread uniformly over 2 s, N agents reconnect at N/2 a second, about the
// rate at which their nodes' kubelets come back too.
const unreachableMax = 2 * time.Second

// backoff spaces retries of failed API calls: exponential, with full jitter
// (a uniform delay between 0 and the exponential bound), so that thousands
// of agents restarted at once do not retry in lockstep. A 429's or 503's
// Retry-After is a floor the jitter is added to: the API server tells every
// agent the same number of seconds, and Retry-After alone would bring the
// whole fleet back in the same second.
type backoff struct {
	base, max time.Duration
	attempt   int
	// unreachable: the last error was no answer at all. The first answer
	// after an outage starts a fresh backoff: the attempts that failed
	// while nothing answered say nothing about the server now back.
	unreachable bool
	// recovering: since the last unanswered request, no request succeeded
	// and the API server gave no failing answer; the bound stays under
	// unreachableMax.
	recovering bool
	// jitter returns a number in [0, 1); sleep waits or returns ctx's error.
	jitter func() float64
	sleep  func(context.Context, time.Duration) error
}

func newBackoff() *backoff {
	return &backoff{base: 100 * time.Millisecond, max: 30 * time.Second, jitter: rand.Float64, sleep: sleepContext}
}

// delay is the wait before the next retry after err.
func (b *backoff) delay(err error) time.Duration {
	bound := b.max
	if b.attempt < 20 { // 100ms << 20 is far above max
		bound = min(b.max, b.base<<b.attempt)
	}
	if !answered(err) || (b.recovering && !failing(err)) {
		bound = min(bound, unreachableMax)
	}
	d := time.Duration(b.jitter() * float64(bound))
	if after, ok := kubeclient.RetryAfter(err); ok && !(b.recovering && notServingYet(err)) {
		d += after
	}
	return d
}

// Messages of the answers an API server gives while it starts, whatever its
// load (k8s.io/apiserver).
const (
	// pathsNotInstalled: a 503 with a constant Retry-After of 5 s, until it
	// has installed every API's path, custom resources last.
	pathsNotInstalled = "before all known HTTP paths have been installed"
	// storageInitializing: a 429 while the watch cache of a resource fills.
	storageInitializing = "storage is (re)initializing"
)

// starting reports an answer of an API server still starting: a 503 or 429
// with one of the messages above, or a 403 (its RBAC authorizer answers
// before its informers have loaded the roles).
func starting(err error) bool {
	var status *kubeclient.StatusError
	if !errors.As(err, &status) {
		return false
	}
	switch status.Code {
	case http.StatusForbidden:
		return true
	case http.StatusServiceUnavailable:
		return strings.Contains(status.Message, pathsNotInstalled)
	case http.StatusTooManyRequests:
		return strings.Contains(status.Message, storageInitializing)
	}
	return false
}

// failing reports an answer of an API server that is up and failing: a 5xx
// or a 429 (priority and fairness rejecting load) that is not one of a
// server still starting. Most often it is overloaded, and thousands of
// agents held to unreachableMax would keep it so; such an answer ends the
// recovery, and the backoff grows toward max, after its Retry-After.
func failing(err error) bool {
	var status *kubeclient.StatusError
	return errors.As(err, &status) &&
		(status.Code >= 500 || status.Code == http.StatusTooManyRequests) && !starting(err)
}

// notServingYet reports the 503 of an API server that has not installed
// every API's path yet. Right after an outage that is a server still
// starting, and its Retry-After is a constant 5 s however soon after that
// it serves: an agent that waited that out would keep its group waiting up
// to 5 s after the API server was ready, so while recovering this 503
// counts as the outage going on: the outage's cap, no Retry-After.
func notServingYet(err error) bool {
	var status *kubeclient.StatusError
	return errors.As(err, &status) && status.Code == http.StatusServiceUnavailable && starting(err)
}

// rewatch pauses, jittered, before re-opening a watch that ended without an
// error to retry (see rewatchSpread).
func (b *backoff) rewatch(ctx context.Context) error {
	return b.sleep(ctx, time.Duration(b.jitter()*float64(rewatchSpread)))
}

// answered reports whether err is the API server's answer, not the
// absence of one.
func answered(err error) bool {
	var status *kubeclient.StatusError
	return errors.As(err, &status)
}

// wait sleeps before the next retry after err.
func (b *backoff) wait(ctx context.Context, err error) error {
	if b.unreachable && answered(err) {
		b.attempt = 0
	}
	b.unreachable = !answered(err)
	b.recovering = (b.recovering || b.unreachable) && !failing(err)
	d := b.delay(err)
	b.attempt++
	return b.sleep(ctx, d)
}

func (b *backoff) reset() { b.attempt, b.unreachable, b.recovering = 0, false, false }

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
