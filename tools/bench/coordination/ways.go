package main

import (
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/bench/internal/ways"
)

// The ways to restart, as -strategies and the summary lines name them
// (B1's names, tools/bench/grouprestart/ways.go).
const (
	// wayProcess: the agent has the worker wrapper restart the worker's
	// process (the process tier); the agent survives.
	wayProcess = "InPlaceRestart/process"
	// wayInPlace: the agent sidecar without a wrapper, the Pod tier: each
	// agent exits with the restart code and every container of its Pod
	// restarts (RestartAllContainers), as B2 measured in place before the
	// tiers.
	wayInPlace  = string(jobset.InPlaceRestart)
	wayRecreate = string(jobset.Recreate)
)

// allWays are the ways in the order they run.
var allWays = []string{wayProcess, wayInPlace, wayRecreate}

// defaultWays is what B2 runs unless asked otherwise.
var defaultWays = allWays

// tier is how an in-place way restarts a worker.
type tier int

const (
	// podTier: every container of the Pod restarts, the agent with them.
	podTier tier = iota
	// processTier: the worker wrapper restarts the worker's process.
	processTier
)

// String names the tier in the namespaces and controller logs of its
// runs.
func (t tier) String() string {
	if t == processTier {
		return "process"
	}
	return "inplace"
}

func tierOf(way string) tier {
	if way == wayProcess {
		return processTier
	}
	return podTier
}

// parseWays reads -strategies and returns the ways in the order they run
// (allWays'), each once.
func parseWays(list string) ([]string, error) {
	return ways.Parse(list, allWays)
}
