// Package summary prints the benchmarks' parseable summary lines,
// "bench=<name> key=value ...", and computes their percentiles.
package summary

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Print writes one line: bench=name followed by the key/value pairs of kv,
// in order; floats get three significant decimals.
func Print(name string, kv ...any) {
	fmt.Println(Line(name, kv...))
}

// Line formats what Print prints.
func Line(name string, kv ...any) string {
	var b strings.Builder
	b.WriteString("bench=" + name)
	for i := 0; i+1 < len(kv); i += 2 {
		switch v := kv[i+1].(type) {
		case float64:
			fmt.Fprintf(&b, " %v=%s", kv[i], formatFloat(v))
		default:
			fmt.Fprintf(&b, " %v=%v", kv[i], v)
		}
	}
	return b.String()
}

func formatFloat(v float64) string {
	switch {
	case v == 0 || math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// Percentile is the nearest-rank p-th percentile of values (0 for none).
func Percentile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sorted := slices.Sorted(slices.Values(values))
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

// Parse reads a line that Line wrote: the benchmark's name and its
// key/value pairs. ok is false for any other line (progress, blank).
func Parse(line string) (name string, kv map[string]string, ok bool) {
	fields := strings.Fields(line)
	if len(fields) == 0 || !strings.HasPrefix(fields[0], "bench=") {
		return "", nil, false
	}
	kv = map[string]string{}
	for _, f := range fields[1:] {
		k, v, found := strings.Cut(f, "=")
		if !found {
			return "", nil, false
		}
		kv[k] = v
	}
	return strings.TrimPrefix(fields[0], "bench="), kv, true
}
