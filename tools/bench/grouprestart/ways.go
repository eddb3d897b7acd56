package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fastjobset/jobset/tools/bench/internal/ways"
)

// The ways to restart, as -strategies and the summary lines name them.
const (
	// process: ours, agent injection with the worker wrapper; the agent
	// has the wrapper restart the worker's process (the process tier).
	process = "InPlaceRestart/process"
	// pod: the same JobSet with the restart-tier annotation "pod": every
	// container of each Pod restarts (RestartAllContainers).
	pod = "InPlaceRestart/pod"
	// ours: the agent sidecar by hand and no wrapper
	// (docs/examples/story1-inplace.yaml), the Pod tier as B1 ran it
	// before the tiers.
	ours      = "InPlaceRestart"
	community = "CommunityInPlaceRestart"
	recreate  = "Recreate"
)

// allWays are the ways in the order they run: ours first, community's
// last (its controller replaces ours for its part of the run).
var allWays = []string{process, pod, ours, recreate, community}

// defaultWays is what B1 runs unless asked otherwise: both tiers,
// community in place and Recreate.
var defaultWays = []string{process, pod, community, recreate}

// inPlaceOfOurs: ours in place, each with its single-Pod floor.
func inPlaceOfOurs(strategy string) bool {
	return strategy == process || strategy == pod || strategy == ours
}

// shortName names a way in the ratio line's keys.
var shortName = map[string]string{
	process: "process", pod: "pod", ours: "inplace", community: "community", recreate: "recreate",
}

// parseWorkers reads -workers: each 1 or an even number (2 Jobs of W/2
// Pods).
func parseWorkers(list string) ([]int, error) {
	var workers []int
	for _, w := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(w))
		if err != nil || n < 1 || n > 1 && n%2 != 0 {
			return nil, fmt.Errorf("-workers: %q is neither 1 nor an even number (2 Jobs of W/2 Pods)", w)
		}
		workers = append(workers, n)
	}
	return workers, nil
}

// parseWays reads -strategies and returns the ways in the order they run
// (allWays'), each once.
func parseWays(list string) ([]string, error) {
	return ways.Parse(list, allWays)
}

// medians are one W's medians by way: of the total as each way observes
// its end (total), and of the last worker's own start record
// (started), the one measure every way has.
type medians struct {
	total, started map[string]float64
}

// ratios are the key/value pairs of one W's ratio line, given its medians
// and the single-Pod floors' (nil without them). The ratios that name a
// tier (process or pod) compare the last worker's own start, which is
// how the process tier's end is seen, so that both sides of each ratio
// measure the same thing; the others, kept from B1 before the tiers,
// compare the totals, each way's end as its Pods' status shows it.
func ratios(w int, m, floor medians) []any {
	kv := []any{"workers", w}
	add := func(key string, of map[string]float64, num, den string) {
		if n, d := of[num], of[den]; n > 0 && d > 0 {
			kv = append(kv, key, n/d)
		}
	}
	// The tiers, each to its floor and to the other ways.
	for _, s := range []string{process, pod} {
		if n, d := m.started[s], floor.started[s]; n > 0 && d > 0 {
			kv = append(kv, shortName[s]+"_over_single_pod", n/d)
		}
	}
	add("recreate_over_process", m.started, recreate, process)
	add("pod_over_process", m.started, pod, process)
	add("community_over_process", m.started, community, process)
	add("recreate_over_pod", m.started, recreate, pod)
	add("community_over_pod", m.started, community, pod)
	// Ours without the wrapper, community's and Recreate, as before.
	if n, d := m.total[ours], floor.total[ours]; n > 0 && d > 0 {
		kv = append(kv, "inplace_over_single_pod", n/d)
	}
	add("recreate_over_inplace", m.total, recreate, ours)
	add("community_over_inplace", m.total, community, ours)
	add("recreate_over_community", m.total, recreate, community)
	return kv
}
