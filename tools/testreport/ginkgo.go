package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

// ginkgoCounts reads the JSON reports of one run of a suite: one report,
// or one per share of a suite run in shares side by side, each left out
// of the others' specs by its label filter. A spec counts once per run of
// it; one that no report ran counts as skipped once, as the first report
// says.
func ginkgoCounts(paths ...string) (counts, error) {
	var c counts
	var verdicts []specVerdict
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return counts{}, err
		}
		var reports []types.Report
		if err := json.Unmarshal(data, &reports); err != nil {
			return counts{}, fmt.Errorf("%s is not a Ginkgo JSON report (--ginkgo.json-report): %w", path, err)
		}
		if len(reports) == 0 {
			return counts{}, fmt.Errorf("%s holds no suite", path)
		}
		for _, r := range reports {
			v, err := judgeSuite(&c, r)
			if err != nil {
				return counts{}, fmt.Errorf("%s: %w", path, err)
			}
			verdicts = append(verdicts, v...)
		}
	}
	ran := map[string]bool{}
	for _, v := range verdicts {
		if !v.notAsked {
			ran[v.spec] = true
		}
	}
	listed := map[string]bool{}
	for _, v := range verdicts {
		switch {
		case !v.notAsked:
			v.apply(&c)
		case !ran[v.spec] && !listed[v.spec]:
			listed[v.spec] = true
			v.apply(&c)
		}
	}
	return c, nil
}

// specVerdict is what one report says of one spec: passed, failed, or
// left out on purpose (notAsked).
type specVerdict struct {
	// spec names the spec across reports: its text and where it is.
	spec     string
	passed   bool
	notAsked bool
	// line is how a failure or a spec left out is printed.
	line string
	// state is what a failed spec recorded of the state it failed in.
	state string
}

func (v specVerdict) apply(c *counts) {
	switch {
	case v.passed:
		c.passed++
	case v.notAsked:
		c.notAsked = append(c.notAsked, v.line)
	default:
		c.fail("%s", v.line)
		if c.firstFailureState == "" {
			c.firstFailureState = v.state
		}
	}
}

// judgeSuite says what one suite's report says of each of its specs, and
// adds to c the failures of the suite as a whole. Ginkgo reports the specs
// it did not run as skipped, whatever the reason; which reason it was
// follows from the run's own configuration, recorded in the report,
// evaluated as Ginkgo does (internal/focus.go):
//   - outside the focus (--ginkgo.focus): not part of this run, not counted;
//   - left out by --ginkgo.label-filter or --ginkgo.skip: skipped, named;
//   - anything else that did not pass failed, including a spec that
//     called Skip() (the run did not ask for that), a pending spec, and a
//     spec that never ran because the suite stopped early.
func judgeSuite(c *counts, r types.Report) ([]specVerdict, error) {
	cfg := r.SuiteConfig
	inFocus := func(string) bool { return true }
	if len(cfg.FocusStrings) > 0 {
		re, err := regexp.Compile(strings.Join(cfg.FocusStrings, "|"))
		if err != nil {
			return nil, fmt.Errorf("focus %q: %w", cfg.FocusStrings, err)
		}
		inFocus = re.MatchString
	}
	skipped := func(string) bool { return false }
	if len(cfg.SkipStrings) > 0 {
		re, err := regexp.Compile(strings.Join(cfg.SkipStrings, "|"))
		if err != nil {
			return nil, fmt.Errorf("skip %q: %w", cfg.SkipStrings, err)
		}
		skipped = re.MatchString
	}
	labelsMatch := func([]string) bool { return true }
	if cfg.LabelFilter != "" {
		filter, err := types.ParseLabelFilter(cfg.LabelFilter)
		if err != nil {
			return nil, fmt.Errorf("label filter %q: %w", cfg.LabelFilter, err)
		}
		labelsMatch = filter
	}

	var verdicts []specVerdict
	failedBefore, specFailed := c.failed, false
	for _, s := range r.SpecReports {
		if !s.LeafNodeType.Is(types.NodeTypeIt) {
			// BeforeSuite, AfterSuite, ReportAfterSuite and the like: they
			// count only when they fail or skip (a Skip in BeforeSuite
			// skips the whole suite).
			if s.State.Is(types.SpecStateFailureStates) {
				c.fail("%s: %s %s: %s", r.SuiteDescription, s.LeafNodeType, s.State, message(s))
			} else if s.State == types.SpecStateSkipped {
				c.fail("%s: %s skipped the suite, which this run did not ask for: %s", r.SuiteDescription, s.LeafNodeType, message(s))
			}
			continue
		}
		text := r.SuiteDescription + " " + s.FullText()
		if !inFocus(text) {
			continue
		}
		name := s.FullText()
		v := specVerdict{spec: text + " " + s.LeafNodeLocation.String()}
		switch {
		case s.State.Is(types.SpecStatePassed):
			v.passed = true
		case s.State.Is(types.SpecStateFailureStates):
			v.line = fmt.Sprintf("%s: %s: %s", name, s.State, message(s))
			v.state = failureState(name, s)
		case !labelsMatch(slices.Concat(r.SuiteLabels, s.Labels())):
			v.notAsked = true
			v.line = fmt.Sprintf("%s [%s; --ginkgo.label-filter=%s]", name, strings.Join(s.Labels(), ", "), cfg.LabelFilter)
		case skipped(text):
			v.notAsked = true
			v.line = fmt.Sprintf("%s [--ginkgo.skip=%s]", name, strings.Join(cfg.SkipStrings, "|"))
		case s.State == types.SpecStatePending:
			v.line = name + ": pending, which hides it as a skip does"
		case s.State == types.SpecStateSkipped && s.Failure.Message != "":
			v.line = fmt.Sprintf("%s: skipped at run time, which this run did not ask for: %s", name, message(s))
		default:
			v.line = fmt.Sprintf("%s: %s without running (the suite stopped before it)", name, s.State)
		}
		specFailed = specFailed || (!v.passed && !v.notAsked)
		verdicts = append(verdicts, v)
	}
	if !r.SuiteSucceeded && !specFailed && c.failed == failedBefore {
		// Failed as a whole: --ginkgo.fail-on-empty, a timeout, an
		// interrupt, a programmatic focus.
		c.fail("%s: %s", r.SuiteDescription, strings.Join(r.SpecialSuiteFailureReasons, "; "))
	}
	return verdicts, nil
}

// message is a spec's failure or skip message on one line, with where it
// was raised.
func message(s types.SpecReport) string {
	m := cut(strings.Join(strings.Fields(s.Failure.Message), " "), 300)
	if m == "" {
		m = "(no message)"
	}
	if loc := s.Failure.Location; loc.FileName != "" {
		m += fmt.Sprintf(" (%s:%d)", filepath.Base(loc.FileName), loc.LineNumber)
	}
	return m
}

// failureState is what a failed spec recorded for its failure alone
// (report entries of ReportEntryVisibilityFailureOrVerbose: the state of
// what it ran on), on one line, or "" when it recorded nothing. A spec
// that fails because an earlier one broke what they share says so there.
func failureState(name string, s types.SpecReport) string {
	var entries []string
	for _, e := range s.ReportEntries {
		if e.Visibility == types.ReportEntryVisibilityFailureOrVerbose {
			entries = append(entries, e.Name+": "+strings.Join(strings.Fields(e.StringRepresentation()), " "))
		}
	}
	if len(entries) == 0 {
		return ""
	}
	return name + ": " + cut(strings.Join(entries, "; "), 1500)
}

// cut is text cut at max bytes, marked so.
func cut(text string, max int) string {
	if len(text) > max {
		return text[:max] + "..."
	}
	return text
}
