package main

import (
	"encoding/xml"
	"fmt"
	"os"
	"strings"
)

// junitSuites is the part of a JUnit file that testreport reads. The root
// is <testsuites> (rules_go's go_test) or a lone <testsuite>.
type junitSuites struct {
	Suites []junitSuite `xml:"testsuite"`
	// Set when the root element is itself a <testsuite>.
	Cases []junitCase `xml:"testcase"`
}

type junitSuite struct {
	Cases []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name    string        `xml:"name,attr"`
	Skipped *junitMessage `xml:"skipped"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// String is the last line the test logged: rules_go puts the test's
// output in the element, where the reason t.Skip gave comes last before
// go test's own "--- SKIP" line.
func (m junitMessage) String() string {
	lines := strings.Split(m.Text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		line := strings.TrimSpace(lines[i])
		if line != "" && !strings.HasPrefix(line, "=== ") && !strings.HasPrefix(line, "--- ") {
			return line
		}
	}
	if m.Message != "" {
		return m.Message
	}
	return "(no message)"
}

// junitSkips lists the Go tests that skipped in the targets' JUnit files
// (each argument TARGET=FILE), as failures: the run never asks a Go test
// under Bazel to skip. Whether a target passed is Bazel's to say; the
// cases that passed or failed are not counted here.
func junitSkips(args []string) (counts, error) {
	var c counts
	for _, arg := range args {
		target, path, ok := strings.Cut(arg, "=")
		if !ok || target == "" || path == "" {
			return counts{}, fmt.Errorf("argument %q: want TARGET=TEST.XML", arg)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return counts{}, fmt.Errorf("target %s: %w", target, err)
		}
		var doc junitSuites
		if err := xml.Unmarshal(data, &doc); err != nil {
			return counts{}, fmt.Errorf("target %s: %s is not JUnit XML: %w", target, path, err)
		}
		cases := doc.Cases
		for _, s := range doc.Suites {
			cases = append(cases, s.Cases...)
		}
		for _, tc := range cases {
			if tc.Skipped != nil {
				c.fail("%s %s: skipped, which this run did not ask for: %s", target, tc.Name, tc.Skipped)
			}
		}
	}
	return c, nil
}
