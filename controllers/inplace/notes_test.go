package inplace

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRestartNotesReadBack: every note the controller writes for a group
// restart reads back to what it was written from, and other text does not
// read as one.
func TestRestartNotesReadBack(t *testing.T) {
	cases := map[string]struct {
		note string
		want RestartNote
		ok   bool
	}{
		"started": {
			note: RestartStartedNote(3, "Pod w-0-1: container worker restarted after exiting with code 1 at 2025-01-01T00:00:00Z", 7),
			want: RestartNote{Restart: 3, Epoch: 7, Trigger: "Pod w-0-1: container worker restarted after exiting with code 1 at 2025-01-01T00:00:00Z"},
			ok:   true,
		},
		"a trigger that holds the note's own separator": {
			note: RestartStartedNote(1, "Pod a; b", 1),
			want: RestartNote{Restart: 1, Epoch: 1, Trigger: "Pod a; b"},
			ok:   true,
		},
		"completed": {
			note: RestartCompletedNote(3, 8),
			want: RestartNote{Restart: 3, Completed: true, Epoch: 8},
			ok:   true,
		},
		"completed with its duration": {
			note: RestartCompletedInNote(12, 2500*time.Millisecond, 13),
			want: RestartNote{Restart: 12, Completed: true, Epoch: 13, Took: 2500 * time.Millisecond, HasTook: true},
			ok:   true,
		},
		"completed with its duration and how the members came back": {
			note: WithTiers(RestartCompletedInNote(12, 2500*time.Millisecond, 13), Tiers{Process: 3, Pod: 1, Replaced: 2}),
			want: RestartNote{Restart: 12, Completed: true, Epoch: 13, Took: 2500 * time.Millisecond, HasTook: true,
				Back: Tiers{Process: 3, Pod: 1, Replaced: 2}, HasBack: true},
			ok: true,
		},
		"completed, some members unreported": {
			note: WithTiers(RestartCompletedNote(2, 3), Tiers{Process: 1, Unreported: 3}),
			want: RestartNote{Restart: 2, Completed: true, Epoch: 3, Back: Tiers{Process: 1, Unreported: 3}, HasBack: true},
			ok:   true,
		},
		"another event's note":   {note: "every live Pod joined epoch 2"},
		"an epoch beyond int32":  {note: "in-place group restart 1 completed: every live Pod joined epoch 4294967296"},
		"a restart beyond int32": {note: "in-place group restart 9999999999 started: x; every Pod at epoch 1 or below restarts in place"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := ReadRestartNote(tc.note)
			if ok != tc.ok {
				t.Fatalf("ReadRestartNote(%q) ok = %v, want %v", tc.note, ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ReadRestartNote(%q) (-want +got):\n%s", tc.note, diff)
			}
		})
	}
}
