package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

func TestDecideHang(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	both := agentspec.HangTimeouts{FirstProgress: 10 * time.Minute, Progress: time.Minute}
	stepOnly := agentspec.HangTimeouts{Progress: time.Minute}
	firstOnly := agentspec.HangTimeouts{FirstProgress: 10 * time.Minute}
	for _, c := range []struct {
		name    string
		view    HangView
		hung    bool
		timeout string
	}{
		{"no attempt runs", HangView{Timeouts: both, Now: at(time.Hour)}, false, ""},
		{"no timeout set", HangView{Started: start, Progress: at(time.Minute), Now: at(time.Hour)}, false, ""},
		{"loading its checkpoint, within the first-progress timeout", HangView{Started: start, Timeouts: both, Now: at(10 * time.Minute)}, false, ""},
		{"no report past the first-progress timeout", HangView{Started: start, Timeouts: both, Now: at(10*time.Minute + time.Millisecond)}, true, agentspec.FirstProgressTimeoutAnnotation},
		{"never opted in: no report and no first-progress timeout", HangView{Started: start, Timeouts: stepOnly, Now: at(24 * time.Hour)}, false, ""},
		{"a report of an earlier attempt is none of this one's", HangView{Started: start, Progress: at(-time.Second), Timeouts: stepOnly, Now: at(time.Hour)}, false, ""},
		{"a report of an earlier attempt, first-progress timeout passed", HangView{Started: start, Progress: at(-time.Second), Timeouts: both, Now: at(11 * time.Minute)}, true, agentspec.FirstProgressTimeoutAnnotation},
		{"reporting within the step timeout", HangView{Started: start, Progress: at(30 * time.Minute), Timeouts: both, Now: at(31 * time.Minute)}, false, ""},
		{"silent past the step timeout", HangView{Started: start, Progress: at(30 * time.Minute), Timeouts: both, Now: at(31*time.Minute + time.Millisecond)}, true, agentspec.ProgressTimeoutAnnotation},
		{"first report comes late, within the first-progress timeout: the step timeout runs from it", HangView{Started: start, Progress: at(9 * time.Minute), Timeouts: both, Now: at(9*time.Minute + 30*time.Second)}, false, ""},
		{"step timeout alone, opted in by a first report", HangView{Started: start, Progress: at(time.Second), Timeouts: stepOnly, Now: at(2 * time.Minute)}, true, agentspec.ProgressTimeoutAnnotation},
		{"a first report created just after the start, stamped by the kernel's coarse clock a few milliseconds before it, is this attempt's",
			HangView{Started: start, Progress: at(-3 * time.Millisecond), Timeouts: both, Now: at(time.Minute + time.Millisecond)}, true, agentspec.ProgressTimeoutAnnotation},
		{"first-progress timeout alone: reports after the first are not timed", HangView{Started: start, Progress: at(time.Minute), Timeouts: firstOnly, Now: at(24 * time.Hour)}, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := DecideHang(c.view)
			if got.Hung != c.hung {
				t.Fatalf("DecideHang(%+v) = %+v, want hung %v", c.view, got, c.hung)
			}
			if c.hung && !strings.Contains(got.Why, c.timeout) {
				t.Errorf("the reason %q does not name the timeout %s", got.Why, c.timeout)
			}
		})
	}
}
