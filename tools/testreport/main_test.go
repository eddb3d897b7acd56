package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/onsi/ginkgo/v2/types"
)

// TestGinkgoFixture reads the JSON report of a real Ginkgo run
// (testdata/fixture): one spec passed, one failed, one skipped at run
// time, one pending, one left out by the label filter, one outside the
// focus.
func TestGinkgoFixture(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"ginkgo", filepath.Join("testdata", "report.json")}, &stdout, &stderr)
	if code != 1 {
		t.Errorf("exit code %d, want 1 (failures); stderr: %s", code, stderr.String())
	}
	want := []string{
		"FAIL: outcome fails: failed: Expected <int>: 1 to equal <int>: 2 (fixture_test.go:25)",
		"FAIL: outcome skips at run time: skipped at run time, which this run did not ask for: the cluster has no GPU (fixture_test.go:26)",
		"FAIL: outcome is pending: pending, which hides it as a skip does",
		"skipped (not asked for this run): outcome needs what this run left out [optional; --ginkgo.label-filter=!optional]",
		"1 passed, 3 failed, 1 skipped",
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(stdout.String()), "\n")); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func it(text string, state types.SpecState, labels ...string) types.SpecReport {
	return types.SpecReport{
		ContainerHierarchyTexts: []string{"scenario"},
		LeafNodeType:            types.NodeTypeIt,
		LeafNodeText:            text,
		LeafNodeLabels:          labels,
		State:                   state,
	}
}

func failedWith(text string, entries ...types.ReportEntry) types.SpecReport {
	s := it(text, types.SpecStateFailed)
	s.ReportEntries = entries
	return s
}

func TestGinkgoCounts(t *testing.T) {
	skippedAtRunTime := it("needs a GPU", types.SpecStateSkipped)
	skippedAtRunTime.Failure.Message = "no GPU"
	for name, tc := range map[string]struct {
		report       types.Report
		passed       int
		failures     []string
		notAsked     []string
		wantNotAsked int
		// firstFailureState is what the first failed spec recorded.
		firstFailureState string
	}{
		"every spec passed": {
			report: types.Report{SuiteSucceeded: true, SpecReports: types.SpecReports{
				it("a", types.SpecStatePassed), it("b", types.SpecStatePassed),
			}},
			passed: 2,
		},
		"label filter and skip strings leave specs out; the focus limits the run": {
			report: types.Report{
				SuiteSucceeded: true,
				SuiteConfig: types.SuiteConfig{
					LabelFilter:  "!kueue && !trainer",
					SkipStrings:  []string{"slow"},
					FocusStrings: []string{"scenario"},
				},
				SpecReports: types.SpecReports{
					it("runs", types.SpecStatePassed),
					it("queues", types.SpecStateSkipped, "kueue"),
					it("is slow", types.SpecStateSkipped),
					{ContainerHierarchyTexts: []string{"elsewhere"}, LeafNodeType: types.NodeTypeIt, LeafNodeText: "x", State: types.SpecStateSkipped},
				},
			},
			passed: 1,
			notAsked: []string{
				"scenario queues [kueue; --ginkgo.label-filter=!kueue && !trainer]",
				"scenario is slow [--ginkgo.skip=slow]",
			},
		},
		"suite labels count for the label filter": {
			report: types.Report{
				SuiteSucceeded: true,
				SuiteLabels:    []string{"e2e"},
				SuiteConfig:    types.SuiteConfig{LabelFilter: "!e2e"},
				SpecReports:    types.SpecReports{it("a", types.SpecStateSkipped)},
			},
			notAsked: []string{"scenario a [; --ginkgo.label-filter=!e2e]"},
		},
		"a spec selected by the label filter that skips at run time failed": {
			report: types.Report{
				SuiteSucceeded: true,
				SuiteConfig:    types.SuiteConfig{LabelFilter: "!kueue"},
				SpecReports:    types.SpecReports{skippedAtRunTime},
			},
			failures: []string{"scenario needs a GPU: skipped at run time, which this run did not ask for: no GPU"},
		},
		"a Skip in BeforeSuite fails, and so does every spec it left unrun": {
			report: types.Report{
				SuiteDescription: "suite",
				SpecReports: types.SpecReports{
					{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStateSkipped, Failure: types.Failure{Message: "no cluster"}},
					it("a", types.SpecStateSkipped),
				},
			},
			failures: []string{
				"suite: BeforeSuite skipped the suite, which this run did not ask for: no cluster",
				"scenario a: skipped without running (the suite stopped before it)",
			},
		},
		"a failed AfterSuite fails; a passed one counts nothing": {
			report: types.Report{
				SuiteDescription: "suite",
				SpecReports: types.SpecReports{
					{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStatePassed},
					it("a", types.SpecStatePassed),
					{LeafNodeType: types.NodeTypeAfterSuite, State: types.SpecStateFailed, Failure: types.Failure{Message: "cleanup\nfailed"}},
				},
			},
			passed:   1,
			failures: []string{"suite: AfterSuite failed: cleanup failed"},
		},
		"an interrupted suite fails the specs it did not reach": {
			report: types.Report{SpecReports: types.SpecReports{
				it("a", types.SpecStateInterrupted), it("b", types.SpecStateSkipped),
			}},
			failures: []string{
				"scenario a: interrupted: (no message)",
				"scenario b: skipped without running (the suite stopped before it)",
			},
		},
		"the first failed spec's state at failure is kept; entries shown always are not": {
			report: types.Report{SuiteSucceeded: false, SpecReports: types.SpecReports{
				it("a", types.SpecStatePassed),
				failedWith("b", types.ReportEntry{Name: "timing", Visibility: types.ReportEntryVisibilityAlways, Value: types.WrapEntryValue("3 s")}),
				failedWith("c", types.ReportEntry{Name: "installation", Visibility: types.ReportEntryVisibilityFailureOrVerbose,
					Value: types.WrapEntryValue("webhook 0/1 ready;\n  pod jobset-webhook-x: Evicted")}),
				failedWith("d", types.ReportEntry{Name: "installation", Visibility: types.ReportEntryVisibilityFailureOrVerbose, Value: types.WrapEntryValue("later")}),
			}},
			passed:            1,
			failures:          []string{"scenario b: failed: (no message)", "scenario c: failed: (no message)", "scenario d: failed: (no message)"},
			firstFailureState: "scenario c: installation: webhook 0/1 ready; pod jobset-webhook-x: Evicted",
		},
		"a suite that failed without a failed spec fails once": {
			report: types.Report{
				SuiteDescription:           "suite",
				SuiteConfig:                types.SuiteConfig{FocusStrings: []string{"renamed"}, FailOnEmpty: true},
				SpecialSuiteFailureReasons: []string{"Detected no specs ran and --fail-on-empty is set"},
				SpecReports:                types.SpecReports{it("a", types.SpecStateSkipped)},
			},
			failures: []string{"suite: Detected no specs ran and --fail-on-empty is set"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "report.json")
			data, err := json.Marshal([]types.Report{tc.report})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ginkgoCounts(path)
			if err != nil {
				t.Fatal(err)
			}
			want := counts{passed: tc.passed, failed: len(tc.failures), failures: tc.failures, notAsked: tc.notAsked,
				firstFailureState: tc.firstFailureState}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(counts{})); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGinkgoShares reads the reports of a suite run in two shares (each
// with its own label filter, joined to the run's): a spec one share left
// out and the other ran counts once, as run; a spec both left out is
// skipped once.
func TestGinkgoShares(t *testing.T) {
	share := func(filter string, specs ...types.SpecReport) string {
		path := filepath.Join(t.TempDir(), "report.json")
		data, err := json.Marshal([]types.Report{{
			SuiteDescription: "suite", SuiteSucceeded: true,
			SuiteConfig: types.SuiteConfig{LabelFilter: filter},
			SpecReports: specs,
		}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	first := share("(!soak) && (faults)",
		it("outage", types.SpecStatePassed, "faults"),
		it("story", types.SpecStateSkipped),
		it("broken", types.SpecStateSkipped),
		it("soak", types.SpecStateSkipped, "faults", "soak"))
	second := share("(!soak) && (!(faults))",
		it("outage", types.SpecStateSkipped, "faults"),
		it("story", types.SpecStatePassed),
		it("broken", types.SpecStateFailed),
		it("soak", types.SpecStateSkipped, "faults", "soak"))
	got, err := ginkgoCounts(first, second)
	if err != nil {
		t.Fatal(err)
	}
	want := counts{passed: 2, failed: 1, failures: []string{"scenario broken: failed: (no message)"},
		notAsked: []string{"scenario soak [faults, soak; --ginkgo.label-filter=(!soak) && (faults)]"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(counts{})); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

func TestGinkgoUnreadable(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"not json":  "PASS",
		"no suites": "[]",
		"bad focus": `[{"SuiteConfig": {"FocusStrings": ["("]}}]`,
		"bad label": `[{"SuiteConfig": {"LabelFilter": "a &&"}}]`,
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		if code := run([]string{"ginkgo", path}, &stdout, &stderr); code != 2 {
			t.Errorf("%s: exit code %d, want 2; stdout %q", name, code, stdout.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"ginkgo", filepath.Join(dir, "missing")}, &stdout, &stderr); code != 2 {
		t.Errorf("missing report: exit code %d, want 2", code)
	}
}

// TestJUnitSkips reads JUnit files in the form rules_go's go_test writes
// (go/tools/bzltestutil/xml.go; the skip as in a real test.xml).
func TestJUnitSkips(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.xml")
	skipping := filepath.Join(dir, "skipping.xml")
	for path, content := range map[string]string{
		clean: `<testsuites><testsuite name="pkg" tests="2" failures="1" errors="0" skipped="0">
<testcase classname="pkg" name="TestA" time="0.01"></testcase>
<testcase classname="pkg" name="TestB" time="0.01"><failure message="Failed" type="">boom</failure></testcase>
</testsuite></testsuites>`,
		skipping: `<testsuite name="pkg" tests="2" skipped="2">
<testcase classname="pkg" name="TestImages" time="0.00"><skipped message="Skipped" type="">=== RUN   TestImages&#xA;    images_test.go:29: checks the images Bazel builds&#xA;--- SKIP: TestImages (0.00s)&#xA;</skipped></testcase>
<testcase classname="pkg" name="TestBare" time="0.00"><skipped message="Skipped">=== RUN   TestBare&#xA;--- SKIP: TestBare (0.00s)&#xA;</skipped></testcase>
</testsuite>`,
	} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"junit-skips", "//a:a_test=" + clean, "//b:b_test=" + skipping}, &stdout, &stderr)
	if code != 1 {
		t.Errorf("exit code %d, want 1; stderr: %s", code, stderr.String())
	}
	want := []string{
		"FAIL: //b:b_test TestImages: skipped, which this run did not ask for: images_test.go:29: checks the images Bazel builds",
		"FAIL: //b:b_test TestBare: skipped, which this run did not ask for: Skipped",
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(stdout.String()), "\n")); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}

	stdout.Reset()
	if code := run([]string{"junit-skips", "//a:a_test=" + clean}, &stdout, &stderr); code != 0 || stdout.Len() != 0 {
		t.Errorf("no skips: exit code %d, output %q; want 0 and nothing", code, stdout.String())
	}
	for _, bad := range []string{"//a:a_test", "//a:a_test=" + filepath.Join(dir, "missing.xml")} {
		if code := run([]string{"junit-skips", bad}, &stdout, &stderr); code != 2 {
			t.Errorf("argument %q: exit code %d, want 2", bad, code)
		}
	}
}
