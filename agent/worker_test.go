package agent

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/fastjobset/jobset/agent/kubeclient"
	"github.com/fastjobset/jobset/agent/wrapper"
)

func TestNextWorker(t *testing.T) {
	for _, c := range []struct {
		name string
		view WorkerView
		want WorkerAction
	}{
		{"not connected", WorkerView{Lifted: true, MustStop: true}, WorkerWait},
		{"waiting at the barrier", WorkerView{State: wrapper.StateWaiting}, WorkerWait},
		{"lifted: start", WorkerView{State: wrapper.StateWaiting, Lifted: true}, WorkerStart},
		{"start asked", WorkerView{State: wrapper.StateWaiting, Lifted: true, Asked: true}, WorkerWait},
		{"running", WorkerView{State: wrapper.StateRunning, Lifted: true}, WorkerWait},
		{"ended on its own: exit with its code", WorkerView{State: wrapper.StateExited, Lifted: true}, WorkerExit},
		{"must stop a running worker", WorkerView{State: wrapper.StateRunning, Lifted: true, MustStop: true}, WorkerStop},
		{"must stop one that never started: stop, never start", WorkerView{State: wrapper.StateWaiting, Lifted: true, MustStop: true}, WorkerStop},
		{"must stop one that ended: stop what it left", WorkerView{State: wrapper.StateExited, MustStop: true}, WorkerStop},
		{"stop asked", WorkerView{State: wrapper.StateRunning, MustStop: true, Asked: true}, WorkerWait},
		{"stopped", WorkerView{State: wrapper.StateStopped, MustStop: true}, WorkerStopped},
		{"must stop while a start is in flight: wait for it, then stop", WorkerView{State: wrapper.StateStopped, MustStop: true, Asked: true}, WorkerWait},
		{"stopped, the next epoch not lifted yet", WorkerView{State: wrapper.StateStopped}, WorkerWait},
		{"stopped, the next epoch lifted: start again", WorkerView{State: wrapper.StateStopped, Lifted: true}, WorkerStart},
		{"ended with a code that restarts in place: tell the agent", WorkerView{State: wrapper.StateExited, Lifted: true, RestartsInPlace: true}, WorkerRestart},
		{"ended, the agent told: wait for its stop", WorkerView{State: wrapper.StateExited, Lifted: true, RestartsInPlace: true, Reported: true}, WorkerWait},
		{"ended in place, then the agent must stop: stop what it left", WorkerView{State: wrapper.StateExited, RestartsInPlace: true, Reported: true, MustStop: true}, WorkerStop},
	} {
		if got := NextWorker(c.view); got != c.want {
			t.Errorf("%s: NextWorker(%+v) = %s, want %s", c.name, c.view, got, c.want)
		}
	}
}

// An agent given a dialer reaches its worker's wrapper through it, at the
// control path it was configured with; without a wrapper it has nothing
// to dial.
func TestWithWrapperDialer(t *testing.T) {
	api, err := kubeclient.New("https://127.0.0.1:6443", http.DefaultClient, "agent-test")
	if err != nil {
		t.Fatal(err)
	}
	dialed := make(chan string, 1)
	dial := func(_ context.Context, control string) (net.Conn, error) {
		select {
		case dialed <- control:
		default:
		}
		return nil, errors.New("nothing listens")
	}
	if a := New(Config{}, api, WithWrapperDialer(dial)); a.worker != nil {
		t.Fatal("an agent without a wrapper drives one")
	}
	a := New(Config{WrapperControl: "/run/jobset/wrapper/control"}, api, WithWrapperDialer(dial))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.worker.drive(ctx)
	select {
	case got := <-dialed:
		if got != "/run/jobset/wrapper/control" {
			t.Errorf("dialed %q, want the configured control path", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the agent never dialed its wrapper through the dialer given")
	}
}
