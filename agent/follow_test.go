package agent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/fastjobset/jobset/agent/kubeclient"
)

// A worker's exit or hang is signalled by ending the open watch, so that
// follow acts on it at once. One signalled after follow checked for it
// and before the next watch was open ended the watch before, already over:
// follow went on waiting on the new watch, which an idle JobSet may keep
// open for most of an hour. The hook signals a hang at that moment; the
// API server holds every watch open and sends nothing, so only acting on
// the signal ends follow.
func TestFollowActsOnSignalBeforeItsWatchOpens(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer server.Close()
	api, err := kubeclient.New(server.URL, server.Client(), "test")
	if err != nil {
		t.Fatal(err)
	}
	a := New(Config{Namespace: "ns", PodName: "trainer-workers-0-0", JobSetName: "trainer", StateDir: t.TempDir()}, api)
	var once sync.Once
	a.watchOpening = func() {
		once.Do(func() {
			a.setHang("no progress for 30s")
			a.endWatch()
		})
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	restart := make(chan bool, 1)
	go func() { restart <- a.follow(ctx) }()
	select {
	case r := <-restart:
		if !r {
			t.Errorf("follow returned %t on a hang without the wrapper, want true (restart the Pod in place)", r)
		}
	case <-time.After(time.Minute):
		t.Fatal("follow did not act on a hang signalled just before it opened its watch: it waits on that watch")
	}
}
