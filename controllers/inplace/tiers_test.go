package inplace

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRestartTiers: the live members of the synced epoch count by the tier
// their agents report for that epoch; a report of another epoch, or none,
// counts as unreported; members that left the group count not at all.
func TestRestartTiers(t *testing.T) {
	cases := map[string]struct {
		pods []Pod
		want Tiers
	}{
		"each tier": {
			pods: []Pod{
				{Name: "a", Epoch: "4", Restarts: "process=3,pod=0,epoch=4,tier=process"},
				{Name: "b", Epoch: "4", Restarts: "process=1,pod=2,epoch=4,tier=pod"},
				{Name: "c", Epoch: "4", Restarts: "process=0,pod=0,epoch=4,tier=new"},
				{Name: "d", Epoch: "4", Restarts: "process=2,pod=0,epoch=4,tier=process"},
			},
			want: Tiers{Process: 2, Pod: 1, Replaced: 1},
		},
		"a report of an earlier join, none, or one that is no report": {
			pods: []Pod{
				{Name: "a", Epoch: "4", Restarts: "process=3,pod=0,epoch=3,tier=process"},
				{Name: "b", Epoch: "4"},
				{Name: "c", Epoch: "4", Restarts: "three"},
			},
			want: Tiers{Unreported: 3},
		},
		"members that left the group, or are at another epoch": {
			pods: []Pod{
				{Name: "a", Epoch: "4", Restarts: "process=1,pod=0,epoch=4,tier=process"},
				{Name: "failed", Epoch: "4", Failed: true, Restarts: "process=1,pod=0,epoch=4,tier=process"},
				{Name: "deleting", Epoch: "4", Deleting: true, Restarts: "process=0,pod=1,epoch=4,tier=pod"},
				{Name: "old", Epoch: "3", Restarts: "process=0,pod=0,epoch=3,tier=new"},
			},
			want: Tiers{Process: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, RestartTiers(Snapshot{Pods: tc.pods}, 4)); diff != "" {
				t.Errorf("RestartTiers (-want +got):\n%s", diff)
			}
		})
	}
}
