package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fastjobset/jobset/agent/kubeclient"
)

func TestBackoffDelay(t *testing.T) {
	tooMany := &kubeclient.StatusError{Code: 429, RetryAfter: time.Second}
	unavailable := &kubeclient.StatusError{Code: 503}
	initialising := &kubeclient.StatusError{Code: 429, Reason: "TooManyRequests", Message: "storage is (re)initializing", RetryAfter: time.Second}
	notInstalled := &kubeclient.StatusError{Code: 503, Reason: "ServiceUnavailable",
		Message: "the request has been made before all known HTTP paths have been installed, please try again", RetryAfter: 5 * time.Second}
	cases := map[string]struct {
		recovering bool
		attempt    int
		jitter     float64
		err        error
		want       time.Duration
	}{
		"first retry, no jitter":                {attempt: 0, jitter: 0, err: errors.New("reset"), want: 0},
		"first retry, full jitter":              {attempt: 0, jitter: 0.5, err: errors.New("reset"), want: 50 * time.Millisecond},
		"exponential":                           {attempt: 3, jitter: 0.5, err: errors.New("reset"), want: 400 * time.Millisecond},
		"capped":                                {attempt: 40, jitter: 0.5, err: unavailable, want: 15 * time.Second},
		"no API server: capped low":             {attempt: 40, jitter: 0.5, err: errors.New("connection refused"), want: time.Second},
		"no API server: exponential below":      {attempt: 3, jitter: 0.5, err: errors.New("connection refused"), want: 400 * time.Millisecond},
		"Retry-After is a floor":                {attempt: 0, jitter: 0, err: tooMany, want: time.Second},
		"jitter is added to Retry-After":        {attempt: 2, jitter: 0.5, err: tooMany, want: time.Second + 200*time.Millisecond},
		"two agents told the same Retry-After…": {attempt: 4, jitter: 0.1, err: tooMany, want: time.Second + 160*time.Millisecond},
		"…come back at different times":         {attempt: 4, jitter: 0.9, err: tooMany, want: time.Second + 1440*time.Millisecond},
		"a 503's Retry-After is a floor too":    {attempt: 0, jitter: 0, err: &kubeclient.StatusError{Code: 503, RetryAfter: 5 * time.Second}, want: 5 * time.Second},

		// Recovering: no request succeeded since the last unanswered one.
		"recovering: no answer, capped low":                                       {recovering: true, attempt: 40, jitter: 0.5, err: errors.New("connection refused"), want: time.Second},
		"recovering: a starting server's 503, capped low without its Retry-After": {recovering: true, attempt: 40, jitter: 0.5, err: notInstalled, want: time.Second},
		"recovering: a starting server's 429, capped low after its Retry-After":   {recovering: true, attempt: 40, jitter: 0.5, err: initialising, want: 2 * time.Second},
		"recovering: a 403 while RBAC loads, capped low":                          {recovering: true, attempt: 40, jitter: 0.5, err: &kubeclient.StatusError{Code: 403}, want: time.Second},
		"recovering: a failing server's 503, the full bound after its Retry-After": {recovering: true, attempt: 40, jitter: 0.5,
			err: &kubeclient.StatusError{Code: 503, Message: "etcdserver: request timed out", RetryAfter: 3 * time.Second}, want: 18 * time.Second},
		"recovering: a 500, the full bound":                                   {recovering: true, attempt: 40, jitter: 0.5, err: &kubeclient.StatusError{Code: 500}, want: 15 * time.Second},
		"recovering: a 504, the full bound":                                   {recovering: true, attempt: 40, jitter: 0.5, err: &kubeclient.StatusError{Code: 504}, want: 15 * time.Second},
		"recovering: a 429 of priority and fairness, the full bound after it": {recovering: true, attempt: 40, jitter: 0.5, err: tooMany, want: 16 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := newBackoff()
			b.attempt, b.recovering = tc.attempt, tc.recovering
			b.jitter = func() float64 { return tc.jitter }
			if got := b.delay(tc.err); got != tc.want {
				t.Errorf("delay = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBackoffRewatchIsJittered(t *testing.T) {
	var asked []time.Duration
	b := newBackoff()
	b.sleep = func(_ context.Context, d time.Duration) error { asked = append(asked, d); return nil }
	for _, j := range []float64{0, 0.25, 0.999} {
		b.jitter = func() float64 { return j }
		_ = b.rewatch(context.Background())
	}
	want := []time.Duration{0, rewatchSpread / 4, time.Duration(0.999 * float64(rewatchSpread))}
	for i := range want {
		if asked[i] != want[i] {
			t.Errorf("re-watch pauses = %v, want %v", asked, want)
			break
		}
	}
}

// TestBackoffAfterAnOutage: the first answer of an API server that comes
// back (429 while its storage initialises) is retried after its
// Retry-After, not after the 30 s bound the outage's failed attempts grew.
func TestBackoffAfterAnOutage(t *testing.T) {
	var asked []time.Duration
	b := newBackoff()
	b.jitter = func() float64 { return 0.5 }
	b.sleep = func(_ context.Context, d time.Duration) error { asked = append(asked, d); return nil }
	for range 20 {
		_ = b.wait(context.Background(), errors.New("connection refused"))
	}
	_ = b.wait(context.Background(), &kubeclient.StatusError{Code: 429, RetryAfter: time.Second})
	if got, want := asked[len(asked)-1], time.Second+50*time.Millisecond; got != want {
		t.Errorf("first retry after the API server answered again: %v, want %v (Retry-After + a fresh backoff)", got, want)
	}
}

// TestBackoffWhileTheAPIServerStarts: a restarting API server answers
// for seconds before it is ready (403 while its RBAC loads, 429 while its
// storage initialises, 503 until it has installed the JobSet API's path);
// retries stay within the outage's cap (plus a 429's Retry-After: a 503's
// says the server is not serving yet, like no answer at all) until a
// request succeeds, and only then does an answer grow the backoff again.
func TestBackoffWhileTheAPIServerStarts(t *testing.T) {
	var asked []time.Duration
	b := newBackoff()
	b.jitter = func() float64 { return 0.999 }
	b.sleep = func(_ context.Context, d time.Duration) error { asked = append(asked, d); return nil }
	forbidden := &kubeclient.StatusError{Code: 403, Reason: "Forbidden"}
	initialising := &kubeclient.StatusError{Code: 429, Reason: "TooManyRequests", Message: "storage is (re)initializing", RetryAfter: time.Second}
	// Before the JobSet API's path is installed: a fixed 5 s, whatever the
	// server's load (k8s.io/apiserver's notfoundhandler).
	notInstalled := &kubeclient.StatusError{Code: 503, Reason: "ServiceUnavailable",
		Message: "the request has been made before all known HTTP paths have been installed, please try again", RetryAfter: 5 * time.Second}
	ctx := context.Background()

	for range 5 {
		_ = b.wait(ctx, errors.New("connection refused"))
	}
	for range 4 {
		_ = b.wait(ctx, forbidden)
	}
	for range 4 {
		_ = b.wait(ctx, initialising)
	}
	for range 4 {
		_ = b.wait(ctx, notInstalled)
	}
	for i, d := range asked {
		if d >= unreachableMax+time.Second {
			t.Errorf("retry %d while the API server started waited %v, want under %v (the outage's cap and the Retry-After)", i, d, unreachableMax+time.Second)
		}
	}

	b.reset() // a request succeeded
	asked = nil
	for range 8 {
		_ = b.wait(ctx, &kubeclient.StatusError{Code: 503})
	}
	if got := asked[len(asked)-1]; got < 10*time.Second {
		t.Errorf("after a success, the 8th retry of a 503 waited %v: the backoff no longer grows toward its 30 s cap", got)
	}
}

// TestBackoffWhenTheAPIServerAnswersFailing: after an outage, an API server
// that answers 500, 503 or 504 (other than the 503 of a server still
// installing its paths), or a 429 of priority and fairness, is up and
// failing, typically because it is overloaded: thousands of agents held to
// the outage's 2 s cap would keep it so. Their retries grow exponentially
// toward the 30 s cap, each after the server's Retry-After.
func TestBackoffWhenTheAPIServerAnswersFailing(t *testing.T) {
	for name, failing := range map[string]*kubeclient.StatusError{
		"500":                 {Code: 500, Reason: "InternalError", Message: "an error on the server has prevented the request from succeeding"},
		"503":                 {Code: 503, Reason: "ServiceUnavailable", Message: "etcdserver: request timed out", RetryAfter: 3 * time.Second},
		"504":                 {Code: 504, Reason: "Timeout", Message: "the server was unable to return a response in the time allotted"},
		"429 from P&F":        {Code: 429, Reason: "TooManyRequests", Message: "Too many requests, please try again later.", RetryAfter: time.Second},
		"502 from a gateway":  {Code: 502, Reason: "Bad Gateway"},
		"503 without details": {Code: 503},
	} {
		t.Run(name, func(t *testing.T) {
			var asked []time.Duration
			b := newBackoff()
			b.jitter = func() float64 { return 0.999 }
			b.sleep = func(_ context.Context, d time.Duration) error { asked = append(asked, d); return nil }
			ctx := context.Background()
			for range 5 {
				_ = b.wait(ctx, errors.New("connection refused"))
			}
			asked = nil
			for range 8 {
				_ = b.wait(ctx, failing)
			}
			if got := asked[0]; got < failing.RetryAfter {
				t.Errorf("first retry after the answer waited %v, under its Retry-After %v", got, failing.RetryAfter)
			}
			// 100 ms << 7, nearly all of it (jitter 0.999), after Retry-After.
			if got, want := asked[7], failing.RetryAfter+12*time.Second; got < want {
				t.Errorf("8th retry of a failing API server waited %v, want at least %v: the backoff does not grow while it answers", got, want)
			}
		})
	}
}
