package agent

import (
	"testing"
	"time"
)

// TestContact follows the silence the fence measures, on a fake monotonic
// clock, through each kind of evidence.
func TestContact(t *testing.T) {
	const slack = 8 * time.Second
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		name string
		// advance moves the clock before the step, do is the step.
		advance time.Duration
		do      func(c *contact, now time.Time)
		// after the step, a tick reports:
		silence time.Duration
		stalled bool
	}
	tick := func(*contact, time.Time) {}
	confirmedAt := func(ago time.Duration) func(*contact, time.Time) {
		return func(c *contact, now time.Time) { c.confirmed(now.Add(-ago)) }
	}
	lost := func(c *contact, _ time.Time) { c.lost() }
	cases := []struct {
		name  string
		steps []step
	}{
		{"in contact, ticking: no silence", []step{
			{"a tick", fenceTick, tick, 0, false},
			{"a watch opened", fenceTick, confirmedAt(0), 0, false},
		}},
		{"a watch that ended counts silent from the link's slack before", []step{
			{"the watch ends", fenceTick, lost, slack, false},
			{"retries go unanswered", fenceTick, lost, slack + fenceTick, false},
			{"an answer to a request sent just now ends the silence", fenceTick, confirmedAt(0), 0, false},
		}},
		{"an answer to a request sent before the silence began proves nothing new", []step{
			{"the watch ends", fenceTick, lost, slack, false},
			{"an answer to a request sent before", fenceTick, confirmedAt(slack + 2*fenceTick), slack + fenceTick, false},
		}},
		{"a stall (a frozen node thawed) is silent from its start, even on an open watch", []step{
			{"a tick", fenceTick, tick, 0, false},
			{"the next tick a minute later", time.Minute, tick, time.Minute + slack, true},
			{"the fresh watch answers", fenceTick, confirmedAt(0), 0, false},
		}},
		{"a stall during a silence keeps the earlier start", []step{
			{"the watch ends", fenceTick, lost, slack, false},
			{"a stall", 2 * time.Second, tick, slack + 2*time.Second, true},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := start
			c := newContact(func() time.Time { return now }, slack)
			for _, s := range tc.steps {
				now = now.Add(s.advance)
				s.do(c, now)
				silence, stalled := c.tick()
				if silence != s.silence || stalled != s.stalled {
					t.Fatalf("%s: tick = (%s, stalled %v), want (%s, stalled %v)", s.name, silence, stalled, s.silence, s.stalled)
				}
			}
		})
	}
}
