package agent

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"

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

// The fence asks for a fresh watch after a stall (a starved or frozen
// node) by ending the open one, which also ends what the agent does on
// its last event: a join whose write was in flight. The next watch
// resumed from that event's resourceVersion, so it never saw the JobSet
// again, and a JobSet that waits on this Pod's join does not change: the
// agent waited forever, its group unsynced. Here the first write of the
// epoch ends the watch, as the fence would, and is never answered; every
// watch from the JobSet's resourceVersion stays open with nothing to say.
func TestFollowJoinsAfterAFreshWatchCutsItsJoinShort(t *testing.T) {
	const jobSet = `{"type":"ADDED","object":{"metadata":{"name":"trainer","uid":"u1","resourceVersion":"10"},"spec":{},"status":{}}}`
	var a *Agent
	var patches atomic.Int32
	ended := make(chan struct{})
	hold := func(r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-ended:
		}
	}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server sees the client go
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPatch && patches.Add(1) == 1:
			a.endWatch()
			hold(r)
		case r.Method == http.MethodPatch:
			_, _ = w.Write([]byte(`{}`))
		case r.URL.Query().Get("watch") == "true":
			w.WriteHeader(http.StatusOK)
			if r.URL.Query().Get("resourceVersion") == "" {
				_, _ = w.Write([]byte(jobSet + "\n"))
			}
			w.(http.Flusher).Flush()
			hold(r)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer server.Close()
	defer close(ended)
	api, err := kubeclient.New(server.URL, server.Client(), "test")
	if err != nil {
		t.Fatal(err)
	}
	a = New(Config{Namespace: "ns", PodName: "trainer-workers-0-0", JobSetName: "trainer", StateDir: t.TempDir()}, api)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.follow(ctx)
	NewWithT(t).Eventually(a.epoch.Load).WithTimeout(time.Minute).Should(Equal(int32(1)),
		"the agent joins epoch 1 after its first write was cut short, not wait on a watch that resumed past the JobSet it had not acted on")
}
