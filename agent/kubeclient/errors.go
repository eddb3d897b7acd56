package kubeclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// StatusError is a request the API server refused: its metav1.Status, or
// what the HTTP response said when the body was not one.
type StatusError struct {
	Code    int
	Reason  string
	Message string
	// RetryAfter is the server's hint of when to try again
	// (details.retryAfterSeconds or the Retry-After header); 0 if none.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Code, e.Reason, e.Message)
}

// status is what the agent reads of a metav1.Status.
type status struct {
	Kind    string `json:"kind"`
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Details *struct {
		RetryAfterSeconds int `json:"retryAfterSeconds"`
	} `json:"details"`
}

func (s status) err() *StatusError {
	e := &StatusError{Code: s.Code, Reason: s.Reason, Message: s.Message}
	if s.Details != nil && s.Details.RetryAfterSeconds > 0 {
		e.RetryAfter = time.Duration(s.Details.RetryAfterSeconds) * time.Second
	}
	return e
}

// statusErrorFrom reads a failed response.
func statusErrorFrom(resp *http.Response) *StatusError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var s status
	e := &StatusError{}
	if json.Unmarshal(body, &s) == nil && s.Kind == "Status" {
		e = s.err()
	} else {
		e.Message = strings.TrimSpace(string(body))
	}
	if e.Code == 0 {
		e.Code = resp.StatusCode
	}
	if e.Reason == "" {
		e.Reason = http.StatusText(resp.StatusCode)
	}
	if seconds, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && seconds > 0 && e.RetryAfter == 0 {
		e.RetryAfter = time.Duration(seconds) * time.Second
	}
	return e
}

// IsExpired tells whether err says that a watch's resourceVersion is too old
// to resume from (410 Gone, reason Expired or Gone): start afresh.
func IsExpired(err error) bool {
	var e *StatusError
	return errors.As(err, &e) && (e.Code == http.StatusGone || e.Reason == "Expired" || e.Reason == "Gone")
}

// IsDenied tells whether err is the API server refusing the request as
// such (403 Forbidden: RBAC or an admission policy; 422 Invalid): sending
// it again unchanged gets the same answer.
func IsDenied(err error) bool {
	var e *StatusError
	return errors.As(err, &e) && (e.Code == http.StatusForbidden || e.Code == http.StatusUnprocessableEntity)
}

// RetryAfter is the server's hint of when to retry after err, if it gave one.
func RetryAfter(err error) (time.Duration, bool) {
	var e *StatusError
	if errors.As(err, &e) && e.RetryAfter > 0 {
		return e.RetryAfter, true
	}
	return 0, false
}
