package agent

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/fastjobset/jobset/agent/kubeclient"
)

// backoff spaces retries of failed API calls: exponential, with full jitter
// (a uniform delay between 0 and the exponential bound), so that thousands
// of agents restarted at once do not retry in lockstep; and never sooner
// than a 429's Retry-After.
type backoff struct {
	base, max time.Duration
	attempt   int
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
	d := time.Duration(b.jitter() * float64(bound))
	if after, ok := kubeclient.RetryAfter(err); ok {
		d = max(d, after)
	}
	return d
}

// wait sleeps before the next retry after err.
func (b *backoff) wait(ctx context.Context, err error) error {
	d := b.delay(err)
	b.attempt++
	return b.sleep(ctx, d)
}

func (b *backoff) reset() { b.attempt = 0 }

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
