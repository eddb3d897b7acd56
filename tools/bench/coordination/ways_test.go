package main

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fastjobset/jobset/tools/bench/internal/summary"
)

func TestParseWaysRunsThemInTheirOrder(t *testing.T) {
	got, err := parseWays("Recreate, InPlaceRestart,InPlaceRestart/process,Recreate")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{wayProcess, wayInPlace, wayRecreate}; !slices.Equal(got, want) {
		t.Errorf("ways %q, want %q", got, want)
	}
	if _, err := parseWays("InPlaceRestart/pod"); err == nil {
		t.Error("a way B2 does not have was accepted")
	}
}

// The summary line keeps the fields it had before the tiers, the Pod
// tier's, and adds the process tier's beside them; with the process tier
// alone, the I/O floor is still there.
func TestSummaryLine(t *testing.T) {
	for name, tc := range map[string]struct {
		r    results
		want string
	}{
		"every way": {results{ioFloor: 200, inPlace: 800, process: 400, recreate: 1600},
			"bench=coordination-summary apf=shipped pods=1000 seconds=800 io_floor_s=200 time_over_io_floor=4.00 recreate_s=1600 recreate_over_time=2.00 process_s=400 process_over_io_floor=2.00 recreate_over_process=4.00"},
		"the process tier alone": {results{ioFloor: 200, process: 400},
			"bench=coordination-summary apf=shipped pods=1000 io_floor_s=200 process_s=400 process_over_io_floor=2.00"},
		"no process tier": {results{ioFloor: 200, inPlace: 800, recreate: 1600},
			"bench=coordination-summary apf=shipped pods=1000 seconds=800 io_floor_s=200 time_over_io_floor=4.00 recreate_s=1600 recreate_over_time=2.00"},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, summary.Line("coordination-summary", tc.r.summary("shipped", 1000)...)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
