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
	// fenced: the agent fenced while the barrier was down (fence.go); it
	// does not lift until the agent confirmed its epoch.
	fenced bool
	reason string
	// liftedCh is closed when the barrier lifts; a barrier that drops
	// again (the process tier) gets a new one.
	liftedCh chan struct{}
}

func newBarrier() *barrier {
	return &barrier{reason: "the agent has not joined an epoch yet", liftedCh: make(chan struct{})}
}

// lift lifts the barrier, unless the agent fenced since it last
// confirmed its epoch; it reports whether the barrier is lifted.
func (b *barrier) lift() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fenced {
		return false
	}
	if !b.lifted {
		close(b.liftedCh)
	}
	b.lifted = true
	return true
}

// drop holds the barrier again: the agent left its epoch (the process
// tier) and its worker, stopped, waits until the next epoch syncs. The
// startup probe, which the kubelet stops asking once it passed, is not
// what holds the worker then: the wrapper starts it on the agent's word.
func (b *barrier) drop(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lifted {
		b.liftedCh = make(chan struct{})
	}
	b.lifted, b.reason = false, fmt.Sprintf(format, args...)
}

// liftedChan returns the channel closed when the barrier lifts next (closed
// already while it is lifted).
func (b *barrier) liftedChan() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.liftedCh
}

// fence keeps a barrier that is down from lifting until confirmed, and
// reports whether it was lifted already: then the worker may run, and
// only a restart stops it.
func (b *barrier) fence(reason string) (lifted bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.lifted {
		b.fenced, b.reason = true, reason
	}
	return b.lifted
}

// isFenced reports whether the barrier waits for the agent to confirm its
// epoch.
func (b *barrier) isFenced() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fenced
}

// confirmed records that the agent wrote its epoch again since it fenced.
func (b *barrier) confirmed() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fenced = false
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

func (c Config) handler(b *barrier) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(c.BarrierPath, b)
	mux.HandleFunc(agentspec.HealthPath, func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	return mux
}
