package kubeclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// EventType is a watch event's type.
type EventType string

// The watch event types of the API server.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	Bookmark EventType = "BOOKMARK"
	Error    EventType = "ERROR"
)

// Event is one watch event; Object is left raw for the caller to read what
// it needs of it.
type Event struct {
	Type   EventType       `json:"type"`
	Object json.RawMessage `json:"object"`
}

// Err is the error an ERROR event carries (a metav1.Status).
func (e Event) Err() *StatusError {
	var s status
	if err := json.Unmarshal(e.Object, &s); err != nil {
		return &StatusError{Reason: "InvalidWatchError", Message: fmt.Sprintf("unreadable error event: %v", err)}
	}
	return s.err()
}

// Watcher reads the events of one watch.
type Watcher struct {
	body    io.ReadCloser
	decoder *json.Decoder
	// deadline closes a watch that outlived the lifetime its server
	// promised (HTTP/1.x: see boundedWatch); expired says it did.
	deadline *time.Timer
	expired  atomic.Bool
}

// ErrWatchOutlived: a watch the server should have ended was still open
// PingTimeout later, so its connection is presumed dead.
var ErrWatchOutlived = errors.New("the watch outlived the timeout asked of the API server: its connection is presumed dead")

// newWatcher reads body; a lifetime above 0 closes it then.
func newWatcher(body io.ReadCloser, lifetime time.Duration) *Watcher {
	w := &Watcher{body: body, decoder: json.NewDecoder(body)}
	if lifetime > 0 {
		w.deadline = time.AfterFunc(lifetime, func() {
			w.expired.Store(true)
			_ = body.Close()
		})
	}
	return w
}

// Next blocks until the next event; io.EOF means the server ended the watch,
// any other error that the stream broke (or the request's context ended,
// or ErrWatchOutlived).
func (w *Watcher) Next() (Event, error) {
	var e Event
	if err := w.decoder.Decode(&e); err != nil {
		if w.expired.Load() {
			return Event{}, ErrWatchOutlived
		}
		return Event{}, err
	}
	return e, nil
}

// Stop ends the watch.
func (w *Watcher) Stop() {
	if w.deadline != nil {
		w.deadline.Stop()
	}
	_ = w.body.Close()
}
