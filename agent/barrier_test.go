package agent

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestBarrierDropsAndLiftsAgain(t *testing.T) {
	b := newBarrier()
	answer := func() (int, string) {
		rec := httptest.NewRecorder()
		b.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		return rec.Code, rec.Body.String()
	}
	first := b.liftedChan()
	if !b.lift() {
		t.Fatal("lift: not lifted")
	}
	if !closed(first) {
		t.Fatal("the first lift does not close the channel its observers wait on")
	}
	b.drop("the worker restarts in place: the agent left epoch %d and joins the next", 1)
	if b.isLifted() {
		t.Fatal("dropped, the barrier still says lifted")
	}
	if code, body := answer(); code != http.StatusServiceUnavailable || !strings.Contains(body, "left epoch 1") {
		t.Fatalf("dropped, the barrier answers %d %q", code, body)
	}
	second := b.liftedChan()
	if closed(second) {
		t.Fatal("dropped, the barrier's channel is closed already")
	}
	if !b.lift() || !closed(second) {
		t.Fatal("lifted again, the new channel is not closed")
	}
	if code, _ := answer(); code != http.StatusOK {
		t.Fatalf("lifted again, the barrier answers %d", code)
	}
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
