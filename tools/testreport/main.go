// Command testreport reads the reports tests leave behind and says what
// the test scripts count: what passed, what failed, and what was skipped
// because the run asked for it. A test that skips on its own, without the
// run asking, is counted as failed: a skip nobody reads is a test that
// silently stopped testing.
//
//	testreport ginkgo REPORT.json...
//	    Ginkgo's JSON report (--ginkgo.json-report), or one per share of a
//	    suite run in shares (a spec one share left out and another ran
//	    counts once, as run). Prints a FAIL line per
//	    failure, a "skipped (not asked for this run)" line per spec that the
//	    run's label filter or skip strings left out, what the first failed
//	    spec recorded of the state it failed in (its report entries shown
//	    on failure), and last "N passed, N failed, N skipped". Specs outside the run's focus are
//	    outside the run: a focused target counts only its own specs.
//
//	testreport junit-skips TARGET=TEST.XML ...
//	    JUnit files of Bazel test targets (bazel-testlogs/PKG/NAME/test.xml).
//	    Prints a FAIL line per Go test that skipped: nothing asks a Go test
//	    under Bazel to skip, so every skip there is a failure. Whether the
//	    targets passed is Bazel's to say; this prints no counts.
//
// It exits 1 when something failed, 2 when it cannot read a report.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	const usage = "usage: testreport ginkgo REPORT.json... | testreport junit-skips TARGET=TEST.XML ..."
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	var c counts
	var err error
	switch {
	case args[0] == "ginkgo" && len(args) >= 2:
		if c, err = ginkgoCounts(args[1:]...); err == nil {
			c.print(stdout)
		}
	case args[0] == "junit-skips":
		if c, err = junitSkips(args[1:]); err == nil {
			c.printFailures(stdout)
		}
	default:
		fmt.Fprintln(stderr, usage)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "testreport:", err)
		return 2
	}
	if c.failed > 0 {
		return 1
	}
	return 0
}

// counts is what a report says, in the form the scripts print.
type counts struct {
	passed, failed int
	// failures says why each failure failed, one line each.
	failures []string
	// notAsked names what the run left out on purpose; they are the skipped.
	notAsked []string
	// firstFailureState is what the first failed spec recorded of the state
	// it failed in, if anything.
	firstFailureState string
}

func (c *counts) fail(format string, args ...any) {
	c.failed++
	c.failures = append(c.failures, fmt.Sprintf(format, args...))
}

func (c counts) print(w io.Writer) {
	c.printFailures(w)
	for _, s := range c.notAsked {
		fmt.Fprintln(w, "skipped (not asked for this run):", s)
	}
	// Last but the counts, where a log cut to its end still shows it.
	if c.firstFailureState != "" {
		fmt.Fprintln(w, "at the first failure:", c.firstFailureState)
	}
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", c.passed, c.failed, len(c.notAsked))
}

func (c counts) printFailures(w io.Writer) {
	for _, f := range c.failures {
		fmt.Fprintln(w, "FAIL:", f)
	}
}
