package chart

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/fastjobset/jobset/tools/bench/internal/summary"
)

// Lines is what a run printed: its summary lines, by benchmark name, in
// the order they came.
type Lines map[string][]map[string]string

// Read keeps the summary lines of r and skips everything else.
func Read(r io.Reader) (Lines, error) {
	lines := Lines{}
	s := bufio.NewScanner(r)
	for s.Scan() {
		if name, kv, ok := summary.Parse(s.Text()); ok {
			lines[name] = append(lines[name], kv)
		}
	}
	return lines, s.Err()
}

// The ways, as B1's and B2's lines name them, and as the charts call them.
var ways = []struct{ strategy, label string }{
	{"InPlaceRestart/process", "ours, process tier"},
	{"InPlaceRestart/pod", "ours, Pod tier"},
	{"InPlaceRestart", "ours in place"},
	{"CommunityInPlaceRestart", "community in place"},
	{"Recreate", "Recreate"},
}

// B1 is the group restart's median on the real kubelet, per W and way,
// from the bench=group-restart lines (nil without any). The single-Pod
// floor is ours at W = 1. When every line has the last worker's own start
// (p50_worker_started_s, the one measure the process tier has), the chart
// shows it; otherwise each way's total (p50_s).
func B1(lines Lines) (*Chart, error) {
	rows := lines["group-restart"]
	if len(rows) == 0 {
		return nil, nil
	}
	key, ylabel := "p50_worker_started_s", "seconds from the worker's exit to the last worker's start"
	for _, kv := range rows {
		if _, ok := kv[key]; !ok {
			key, ylabel = "p50_s", "seconds from the worker's exit"
			break
		}
	}
	c := &Chart{Title: "B1: group restart on a real kubelet (median of the runs)", YLabel: ylabel}
	groups := map[int]*Group{}
	var sizes []int
	for _, kv := range rows {
		w, err := strconv.Atoi(kv["workers"])
		if err != nil {
			return nil, fmt.Errorf("bench=group-restart: workers=%q: %w", kv["workers"], err)
		}
		v, err := strconv.ParseFloat(kv[key], 64)
		if err != nil {
			return nil, fmt.Errorf("bench=group-restart workers=%d: %s=%q: %w", w, key, kv[key], err)
		}
		label := labelOf(kv["strategy"])
		if groups[w] == nil {
			groups[w] = &Group{Label: fmt.Sprintf("W = %d", w), Values: map[string]float64{}}
			sizes = append(sizes, w)
		}
		groups[w].Values[label] = v
		if !slices.Contains(c.Series, label) {
			c.Series = append(c.Series, label)
		}
	}
	slices.Sort(sizes)
	for _, w := range sizes {
		if w == 1 {
			groups[w].Label = "W = 1 (the floor)"
		}
		c.Groups = append(c.Groups, *groups[w])
	}
	c.Series = ordered(c.Series)
	return c, nil
}

// B2 is the group restart at scale, in place (each tier) and by Recreate,
// with the I/O floor, per N, from the bench=coordination-summary lines
// (nil without any). The lines' seconds are the Pod tier's, named before
// the tiers.
func B2(lines Lines) (*Chart, error) {
	rows := lines["coordination-summary"]
	if len(rows) == 0 {
		return nil, nil
	}
	c := &Chart{Title: "B2: group restart at scale (median of the runs)", YLabel: "seconds from the failure"}
	fields := []struct{ key, label string }{{"process_s", "in place, process tier"}, {"seconds", "in place, Pod tier"},
		{"recreate_s", "Recreate"}, {"io_floor_s", "I/O floor"}}
	rows = slices.Clone(rows)
	for _, kv := range rows {
		if _, err := strconv.Atoi(kv["pods"]); err != nil {
			return nil, fmt.Errorf("bench=coordination-summary: pods=%q: %w", kv["pods"], err)
		}
	}
	slices.SortStableFunc(rows, func(a, b map[string]string) int {
		x, _ := strconv.Atoi(a["pods"])
		y, _ := strconv.Atoi(b["pods"])
		return x - y
	})
	for _, kv := range rows {
		g := Group{Label: "N = " + kv["pods"], Values: map[string]float64{}}
		for _, f := range fields {
			raw, ok := kv[f.key]
			if !ok {
				continue
			}
			v, err := strconv.ParseFloat(raw, 64)
			if err != nil {
				return nil, fmt.Errorf("bench=coordination-summary pods=%s: %s=%q: %w", kv["pods"], f.key, raw, err)
			}
			g.Values[f.label] = v
			if !slices.Contains(c.Series, f.label) {
				c.Series = append(c.Series, f.label)
			}
		}
		c.Groups = append(c.Groups, g)
	}
	slices.SortStableFunc(c.Series, func(a, b string) int {
		return slices.IndexFunc(fields, func(f struct{ key, label string }) bool { return f.label == a }) -
			slices.IndexFunc(fields, func(f struct{ key, label string }) bool { return f.label == b })
	})
	return c, nil
}

func labelOf(strategy string) string {
	for _, w := range ways {
		if w.strategy == strategy {
			return w.label
		}
	}
	return strategy
}

// ordered puts the known ways first, in their order.
func ordered(series []string) []string {
	var out []string
	for _, w := range ways {
		if slices.Contains(series, w.label) {
			out = append(out, w.label)
		}
	}
	for _, s := range series {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
