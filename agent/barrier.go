package agent

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// barrier is the startup-probe endpoint that holds the worker back.
type barrier struct {
	mu     sync.Mutex
	lifted bool
	reason string
	// liftedCh is closed when the barrier lifts (it never drops again: a
	// deprecated epoch restarts the agent).
	liftedCh chan struct{}
}

func newBarrier() *barrier {
	return &barrier{reason: "the agent has not joined an epoch yet", liftedCh: make(chan struct{})}
}

func (b *barrier) lift() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.lifted {
		close(b.liftedCh)
	}
	b.lifted = true
}

// isLifted reports whether the worker may have started.
func (b *barrier) isLifted() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lifted
}

// hold records why the barrier is still down, for the 503 body.
func (b *barrier) hold(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reason = fmt.Sprintf(format, args...)
}

func (b *barrier) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	b.mu.Lock()
	lifted, reason := b.lifted, b.reason
	b.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if lifted {
		fmt.Fprintln(w, "barrier lifted")
		return
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprintln(w, "barrier down:", reason)
}

func (c Config) handler(b *barrier) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(c.BarrierPath, b)
	mux.HandleFunc(agentspec.HealthPath, func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	return mux
}
