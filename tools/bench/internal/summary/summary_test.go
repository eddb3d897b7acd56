package summary

import "testing"

func TestPercentile(t *testing.T) {
	cases := map[string]struct {
		values []float64
		p      float64
		want   float64
	}{
		"none":                    {p: 50, want: 0},
		"one":                     {values: []float64{3}, p: 90, want: 3},
		"median of five":          {values: []float64{5, 1, 4, 2, 3}, p: 50, want: 3},
		"p90 of five is the max":  {values: []float64{5, 1, 4, 2, 3}, p: 90, want: 5},
		"median of four, nearest": {values: []float64{4, 1, 3, 2}, p: 50, want: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Percentile(tc.values, tc.p); got != tc.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tc.values, tc.p, got, tc.want)
			}
		})
	}
}

func TestLine(t *testing.T) {
	got := Line("group-restart", "strategy", "InPlaceRestart", "workers", 8, "p50_s", 3.14159, "ratio", 0.01234, "mib", 123.4)
	want := "bench=group-restart strategy=InPlaceRestart workers=8 p50_s=3.14 ratio=0.0123 mib=123"
	if got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
}

func TestParseReadsWhatLineWrites(t *testing.T) {
	name, kv, ok := Parse(Line("group-restart", "strategy", "InPlaceRestart", "workers", 8, "p50_s", 3.14159))
	if !ok || name != "group-restart" || kv["strategy"] != "InPlaceRestart" || kv["workers"] != "8" || kv["p50_s"] != "3.14" {
		t.Errorf("Parse = %q, %v, %v", name, kv, ok)
	}
	// B1's tiers name themselves with a slash.
	if _, kv, ok := Parse(Line("group-restart", "strategy", "InPlaceRestart/process", "workers", 8)); !ok || kv["strategy"] != "InPlaceRestart/process" {
		t.Errorf("Parse of a tier's line = %v, %v", kv, ok)
	}
	for _, line := range []string{"", "B1: progress", "bench=x broken"} {
		if _, _, ok := Parse(line); ok {
			t.Errorf("Parse(%q) ok, want not a summary line", line)
		}
	}
}
