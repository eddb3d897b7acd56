package kubeclient

import (
	"encoding/json"
	"fmt"
	"io"
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
}

func newWatcher(body io.ReadCloser) *Watcher {
	return &Watcher{body: body, decoder: json.NewDecoder(body)}
}

// Next blocks until the next event; io.EOF means the server ended the watch,
// any other error that the stream broke (or the request's context ended).
func (w *Watcher) Next() (Event, error) {
	var e Event
	if err := w.decoder.Decode(&e); err != nil {
		return Event{}, err
	}
	return e, nil
}

// Stop ends the watch.
func (w *Watcher) Stop() { _ = w.body.Close() }
