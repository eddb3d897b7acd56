package agent

import (
	"testing"

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
