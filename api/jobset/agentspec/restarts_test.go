package agentspec_test

import (
	"testing"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/tools/testing/epochcases"
)

func TestParseWorkerRestarts(t *testing.T) {
	for _, c := range epochcases.WorkerRestartsCases {
		t.Run(c.Name(), func(t *testing.T) {
			got, err := agentspec.ParseWorkerRestarts(c.Value)
			if valid := err == nil; valid != c.Valid {
				t.Fatalf("ParseWorkerRestarts(%q) = %+v, %v; want valid=%t", c.Value, got, err, c.Valid)
			}
			if !c.Valid {
				return
			}
			if got != c.Restarts {
				t.Errorf("ParseWorkerRestarts(%q) = %+v, want %+v", c.Value, got, c.Restarts)
			}
			if got.String() != c.Value {
				t.Errorf("%+v.String() = %q, want %q", got, got.String(), c.Value)
			}
		})
	}
}

// An agent's join after each kind of restart counts it, and names the
// epoch it joins.
func TestWorkerRestartsJoined(t *testing.T) {
	first := agentspec.WorkerRestarts{}.Joined(1, agentspec.TierNew)
	if want := "process=0,pod=0,epoch=1,tier=new"; first.String() != want {
		t.Errorf("a first join = %q, want %q", first, want)
	}
	byProcess := first.Joined(2, agentspec.TierProcess)
	byPod := byProcess.Joined(3, agentspec.TierPod)
	if want := "process=1,pod=1,epoch=3,tier=pod"; byPod.String() != want {
		t.Errorf("after a process-tier and a Pod-tier restart = %q, want %q", byPod, want)
	}
}
