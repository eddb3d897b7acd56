package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastjobset/jobset/tools/bench/internal/chart"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// bars parses svg as XML and returns the title of every bar, in order.
func bars(t *testing.T, svg []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	var titles []string
	inBar, inTitle := false, false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return titles
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%s", err, svg)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			switch {
			case e.Name.Local == "rect" && slices.ContainsFunc(e.Attr, func(a xml.Attr) bool { return a.Name.Local == "height" }):
				inBar = true
			case e.Name.Local == "title" && inBar:
				inTitle = true
			}
		case xml.EndElement:
			if e.Name.Local == "rect" {
				inBar = false
			}
			inTitle = false
		case xml.CharData:
			if inTitle {
				titles = append(titles, string(e))
			}
		}
	}
}

// rendered reads run's summary lines and renders the charts they give.
func rendered(t *testing.T, run string) (chart.Lines, map[string][]byte) {
	t.Helper()
	lines, err := chart.Read(strings.NewReader(run))
	if err != nil {
		t.Fatal(err)
	}
	charts, err := render(lines)
	if err != nil {
		t.Fatal(err)
	}
	return lines, charts
}

func TestRendersKnownSummaryLinesAsBars(t *testing.T) {
	run := `B1: progress that is not a summary line
bench=group-restart-run strategy=InPlaceRestart workers=4 run=1 total_s=3
bench=group-restart strategy=Recreate workers=4 p50_s=4.98 p90_s=5.02 runs=5
bench=group-restart strategy=InPlaceRestart workers=4 p50_s=3.07 p90_s=4.01 runs=5
bench=group-restart strategy=InPlaceRestart workers=1 p50_s=2.01 p90_s=2.01 runs=5
bench=coordination-summary apf=shipped pods=10000 seconds=171 io_floor_s=66.0 recreate_s=399
bench=coordination-summary apf=shipped pods=1000 seconds=16.1 io_floor_s=3.74 recreate_s=31.9
`
	_, charts := rendered(t, run)
	want := map[string][]string{
		// The sizes in order, the ways in theirs, a way without a line at
		// a size left out.
		"b1.svg": {"W = 1 (the floor), ours in place: 2.01", "W = 4, ours in place: 3.07", "W = 4, Recreate: 4.98"},
		"b2.svg": {"N = 1000, in place, Pod tier: 16.1", "N = 1000, Recreate: 31.9", "N = 1000, I/O floor: 3.74",
			"N = 10000, in place, Pod tier: 171", "N = 10000, Recreate: 399", "N = 10000, I/O floor: 66"},
	}
	for name, titles := range want {
		if got := bars(t, charts[name]); !slices.Equal(got, titles) {
			t.Errorf("%s bars %q, want %q", name, got, titles)
		}
	}
}

// With both tiers, every way's bar is its last worker's own start, the
// one measure the process tier has; a line without it falls back to each
// way's total for all.
func TestB1ShowsTheTiersByTheWorkersStarts(t *testing.T) {
	run := `bench=group-restart strategy=InPlaceRestart/process workers=1 p50_s=0.61 p90_s=0.7 runs=5 p50_worker_started_s=0.61
bench=group-restart strategy=InPlaceRestart/pod workers=1 p50_s=2.1 p90_s=2.2 runs=5 p50_worker_started_s=1.8
bench=group-restart strategy=Recreate workers=8 p50_s=5.01 p90_s=5.58 runs=5 p50_worker_started_s=4.5
bench=group-restart strategy=CommunityInPlaceRestart workers=8 p50_s=4.81 p90_s=5.02 runs=5 p50_worker_started_s=4.2
bench=group-restart strategy=InPlaceRestart/pod workers=8 p50_s=3.98 p90_s=4.22 runs=5 p50_worker_started_s=3.5
bench=group-restart strategy=InPlaceRestart/process workers=8 p50_s=0.95 p90_s=1.1 runs=5 p50_worker_started_s=0.95
bench=group-restart-ratio workers=8 recreate_over_process=4.74 pod_over_process=3.68
`
	lines, charts := rendered(t, run)
	want := []string{"W = 1 (the floor), ours, process tier: 0.61", "W = 1 (the floor), ours, Pod tier: 1.8",
		"W = 8, ours, process tier: 0.95", "W = 8, ours, Pod tier: 3.5", "W = 8, community in place: 4.2", "W = 8, Recreate: 4.5"}
	if got := bars(t, charts["b1.svg"]); !slices.Equal(got, want) {
		t.Errorf("b1.svg bars %q, want %q", got, want)
	}
	c, err := chart.B1(lines)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.YLabel, "start") {
		t.Errorf("B1's y label %q does not say it shows the workers' starts", c.YLabel)
	}

	lines, err = chart.Read(strings.NewReader(run + "bench=group-restart strategy=InPlaceRestart workers=8 p50_s=3.9 p90_s=4 runs=5\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, err = chart.B1(lines)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Groups[1].Values["ours, Pod tier"]; got != 3.98 {
		t.Errorf("with a line that has no worker start, the Pod tier's bar is %v, want its total 3.98", got)
	}
}

// The process tier's bar comes first, beside the Pod tier's (the line's
// seconds); a size without it has none.
func TestB2ShowsBothTiers(t *testing.T) {
	run := `bench=coordination-summary apf=shipped pods=1000 seconds=16.1 io_floor_s=3.74 time_over_io_floor=4.31 recreate_s=31.9 recreate_over_time=1.98 process_s=9.5 process_over_io_floor=2.54 recreate_over_process=3.36
bench=coordination-summary apf=shipped pods=100 io_floor_s=0.5 process_s=1.2 process_over_io_floor=2.4
bench=coordination-summary apf=shipped pods=5000 seconds=90.5 io_floor_s=19.4 time_over_io_floor=4.67
`
	_, charts := rendered(t, run)
	want := []string{"N = 100, in place, process tier: 1.2", "N = 100, I/O floor: 0.5",
		"N = 1000, in place, process tier: 9.5", "N = 1000, in place, Pod tier: 16.1", "N = 1000, Recreate: 31.9", "N = 1000, I/O floor: 3.74",
		"N = 5000, in place, Pod tier: 90.5", "N = 5000, I/O floor: 19.4"}
	if got := bars(t, charts["b2.svg"]); !slices.Equal(got, want) {
		t.Errorf("b2.svg bars %q, want %q", got, want)
	}
}

func TestNoSummaryLinesIsAnError(t *testing.T) {
	if _, err := run(t.TempDir(), []string{writeFile(t, "progress only\n")}); err == nil {
		t.Error("no error for input without summary lines")
	}
}

func writeFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lines")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The charts docs/benchmarks.md shows are what the summary lines kept
// beside them give.
func TestCommittedChartsMatchTheKeptSummaries(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "docs", "benchmarks")
	for _, name := range []string{"b1", "b2"} {
		f, err := os.Open(filepath.Join(dir, name+".summary"))
		if err != nil {
			t.Fatal(err)
		}
		lines, err := chart.Read(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		charts, err := render(lines)
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(filepath.Join(dir, name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(charts[name+".svg"], committed) {
			t.Errorf("docs/benchmarks/%s.svg is stale: regenerate it with go run ./tools/bench/charts -out docs/benchmarks docs/benchmarks/%s.summary", name, name)
		}
		if len(bars(t, committed)) == 0 {
			t.Errorf("docs/benchmarks/%s.svg has no bars", name)
		}
	}
}
