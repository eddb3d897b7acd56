// Command charts draws B1's and B2's charts (SVG) from the summary lines a
// run printed:
//
//	go run ./tools/bench/charts -out DIR [FILE ...]
//
// reads the lines of each FILE (standard input without any) and writes
// DIR/b1.svg from the bench=group-restart lines and DIR/b2.svg from the
// bench=coordination-summary lines, each only when there are such lines.
// docs/benchmarks/ keeps the lines of the runs docs/benchmarks.md reports
// (b1.summary, b2.summary) and the charts drawn from them; a test fails
// when the charts are not what these lines give.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fastjobset/jobset/tools/bench/internal/chart"
)

func main() {
	out := flag.String("out", ".", "Directory to write b1.svg and b2.svg to.")
	flag.Parse()
	written, err := run(*out, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "charts:", err)
		os.Exit(1)
	}
	for _, f := range written {
		fmt.Fprintln(os.Stderr, "charts: wrote", f)
	}
}

// run writes the charts the files' lines give into dir, and returns the
// paths it wrote.
func run(dir string, files []string) ([]string, error) {
	var readers []io.Reader
	for _, f := range files {
		file, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		defer file.Close()
		readers = append(readers, file)
	}
	if len(files) == 0 {
		readers = append(readers, os.Stdin)
	}
	lines, err := chart.Read(io.MultiReader(readers...))
	if err != nil {
		return nil, err
	}
	charts, err := render(lines)
	if err != nil {
		return nil, err
	}
	if len(charts) == 0 {
		return nil, errors.New("no bench=group-restart or bench=coordination-summary line to draw")
	}
	var written []string
	for _, name := range []string{"b1.svg", "b2.svg"} {
		svg, ok := charts[name]
		if !ok {
			continue
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, svg, 0o644); err != nil {
			return written, err
		}
		written = append(written, path)
	}
	return written, nil
}

// render draws each chart the lines give, by file name.
func render(lines chart.Lines) (map[string][]byte, error) {
	charts := map[string][]byte{}
	b1, err := chart.B1(lines)
	if err != nil {
		return nil, err
	}
	if b1 != nil {
		charts["b1.svg"] = b1.SVG()
	}
	b2, err := chart.B2(lines)
	if err != nil {
		return nil, err
	}
	if b2 != nil {
		charts["b2.svg"] = b2.SVG()
	}
	return charts, nil
}
