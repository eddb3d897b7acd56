// Package features holds the feature gates of the controller and the
// webhook: community JobSet's gates, under community's names and with its
// defaults, so that a `--feature-gates` value written for community's
// binaries means the same here. Each binary parses its flag into a Gates
// and hands it to the packages it sets up; nothing reads a global.
package features

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Feature names a gate.
type Feature string

const (
	// TLSOptions lets --tls-min-version and --tls-cipher-suites configure
	// the servers (beta, on).
	TLSOptions Feature = "TLSOptions"
	// RestartJob allows the failure policy actions RestartJob and
	// RestartJobAndIgnoreMaxRestarts, which recreate only the failed Job
	// (alpha, off).
	RestartJob Feature = "RestartJob"
	// ElasticJobSet lets parallelism and completions of an Indexed
	// replicatedJob change while the JobSet runs (alpha, off).
	ElasticJobSet Feature = "ElasticJobSet"
	// ExecutionAttemptsTracking counts a JobSet's executions (its first
	// run, each full restart, each resume) in status.executionAttempts and
	// stamps the count on its Jobs and Pod templates (alpha, off; community
	// JobSet's from v0.13.0).
	ExecutionAttemptsTracking Feature = "ExecutionAttemptsTracking"
	// JobSetActiveDeadlineSeconds lets spec.activeDeadlineSeconds bound
	// how long a JobSet may be active, counted from status.startTime
	// (alpha, off; community JobSet's KEP-1186).
	JobSetActiveDeadlineSeconds Feature = "JobSetActiveDeadlineSeconds"
	// InPlaceRestart is community's gate for the restart strategy
	// InPlaceRestart. Here the strategy is the point of the controller:
	// the gate is always on, and accepted so that community's flags work.
	InPlaceRestart Feature = "InPlaceRestart"
)

// Stage is a gate's maturity, as Kubernetes names it.
type Stage string

const (
	Alpha Stage = "ALPHA"
	Beta  Stage = "BETA"
	GA    Stage = "GA"
)

// spec is a gate's default, maturity, and whether it can be changed.
type spec struct {
	enabled bool
	stage   Stage
	locked  bool
}

// known are the gates, with community JobSet's defaults (v0.12.0's, and
// v0.13.0's for ExecutionAttemptsTracking, which v0.12.0 lacks, and its
// KEP-1186's for JobSetActiveDeadlineSeconds) but for
// InPlaceRestart, which this controller always runs.
var known = map[Feature]spec{
	TLSOptions:                  {enabled: true, stage: Beta},
	RestartJob:                  {enabled: false, stage: Alpha},
	ElasticJobSet:               {enabled: false, stage: Alpha},
	ExecutionAttemptsTracking:   {enabled: false, stage: Alpha},
	JobSetActiveDeadlineSeconds: {enabled: false, stage: Alpha},
	InPlaceRestart:              {enabled: true, stage: GA, locked: true},
}

// Gates is the state of every gate: the defaults, changed by Set. The
// zero value holds the defaults. It is a flag.Value.
type Gates struct {
	set map[Feature]bool
}

// Enabled says whether the gate is on.
func (g Gates) Enabled(f Feature) bool {
	if on, ok := g.set[f]; ok {
		return on
	}
	return known[f].enabled
}

// With returns a copy of g with the gate set: for tests and callers that
// build gates in code.
func (g Gates) With(f Feature, on bool) Gates {
	set := make(map[Feature]bool, len(g.set)+1)
	for k, v := range g.set {
		set[k] = v
	}
	set[f] = on
	return Gates{set: set}
}

// Set parses a --feature-gates value, "Name=true,Other=false", as
// Kubernetes components do, and applies it on top of earlier values.
func (g *Gates) Set(value string) error {
	parsed := map[Feature]bool{}
	for _, pair := range strings.Split(value, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		name, raw, ok := strings.Cut(pair, "=")
		if !ok {
			return fmt.Errorf("--feature-gates: %q is not Name=true or Name=false", pair)
		}
		f := Feature(strings.TrimSpace(name))
		s, ok := known[f]
		if !ok {
			return fmt.Errorf("--feature-gates: unknown gate %q; the gates are %s", f, strings.Join(Names(), ", "))
		}
		on, err := strconv.ParseBool(strings.TrimSpace(raw))
		if err != nil {
			return fmt.Errorf("--feature-gates: %s=%q: the value must be true or false", f, raw)
		}
		if s.locked && on != s.enabled {
			return fmt.Errorf("--feature-gates: %s is always %t in this controller and cannot be set to %t", f, s.enabled, on)
		}
		parsed[f] = on
	}
	if g.set == nil {
		g.set = map[Feature]bool{}
	}
	for f, on := range parsed {
		g.set[f] = on
	}
	return nil
}

// String is the gates set explicitly, sorted by name.
func (g *Gates) String() string {
	if g == nil {
		return ""
	}
	var pairs []string
	for f, on := range g.set {
		pairs = append(pairs, fmt.Sprintf("%s=%t", f, on))
	}
	slices.Sort(pairs)
	return strings.Join(pairs, ",")
}

// Names lists the gates, sorted.
func Names() []string {
	var names []string
	for f := range known {
		names = append(names, string(f))
	}
	slices.Sort(names)
	return names
}

// Usage is the --feature-gates flag's help: every gate with its stage
// and default.
func Usage() string {
	var lines []string
	for _, name := range Names() {
		s := known[Feature(name)]
		lines = append(lines, fmt.Sprintf("%s=true|false (%s - default=%t)", name, s.stage, s.enabled))
	}
	return "Gates of community JobSet's features, as Name=true,Other=false. Options are:\n" + strings.Join(lines, "\n")
}
