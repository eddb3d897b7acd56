package features

import (
	"strings"
	"testing"
)

// The defaults are community JobSet's (its pkg/features: v0.12.0's, and
// v0.13.0's for ExecutionAttemptsTracking; its KEP-1186 for
// JobSetActiveDeadlineSeconds), written out so that a change of
// ours cannot pass unnoticed.
func TestDefaultsAreCommunitys(t *testing.T) {
	var g Gates
	for f, want := range map[Feature]bool{TLSOptions: true, RestartJob: false, ElasticJobSet: false, ExecutionAttemptsTracking: false, JobSetActiveDeadlineSeconds: false} {
		if got := g.Enabled(f); got != want {
			t.Errorf("%s: default %t, community's is %t", f, got, want)
		}
	}
}

func TestSet(t *testing.T) {
	for name, tc := range map[string]struct {
		values  []string
		want    map[Feature]bool
		wantErr string
	}{
		"one gate on": {
			values: []string{"RestartJob=true"},
			want:   map[Feature]bool{RestartJob: true, ElasticJobSet: false, TLSOptions: true},
		},
		"several, with spaces, the later flag wins": {
			values: []string{"RestartJob=true, ElasticJobSet=true", "RestartJob=false,TLSOptions=false"},
			want:   map[Feature]bool{RestartJob: false, ElasticJobSet: true, TLSOptions: false},
		},
		"ExecutionAttemptsTracking, by community's name": {
			values: []string{"ExecutionAttemptsTracking=true"},
			want:   map[Feature]bool{ExecutionAttemptsTracking: true, RestartJob: false},
		},
		"JobSetActiveDeadlineSeconds, by community's name": {
			values: []string{"JobSetActiveDeadlineSeconds=true"},
			want:   map[Feature]bool{JobSetActiveDeadlineSeconds: true, ExecutionAttemptsTracking: false},
		},
		"InPlaceRestart=true, as community's flags set it": {
			values: []string{"InPlaceRestart=true"},
			want:   map[Feature]bool{InPlaceRestart: true},
		},
		"InPlaceRestart cannot be turned off": {
			values:  []string{"InPlaceRestart=false"},
			wantErr: "InPlaceRestart is always true in this controller",
		},
		"an unknown gate is named, with the known ones": {
			values:  []string{"RestartJobs=true"},
			wantErr: `unknown gate "RestartJobs"; the gates are ElasticJobSet, ExecutionAttemptsTracking, InPlaceRestart, JobSetActiveDeadlineSeconds, RestartJob, TLSOptions`,
		},
		"a value that is not a bool": {
			values:  []string{"RestartJob=yes"},
			wantErr: `RestartJob="yes": the value must be true or false`,
		},
		"a gate without a value": {
			values:  []string{"RestartJob"},
			wantErr: `"RestartJob" is not Name=true or Name=false`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			var g Gates
			var err error
			for _, v := range tc.values {
				if err = g.Set(v); err != nil {
					break
				}
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "--feature-gates") {
					t.Fatalf("error %v, want one naming --feature-gates and %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for f, want := range tc.want {
				if got := g.Enabled(f); got != want {
					t.Errorf("%s: %t, want %t", f, got, want)
				}
			}
		})
	}
}

// With leaves the gates it was called on as they were.
func TestWithCopies(t *testing.T) {
	var g Gates
	on := g.With(RestartJob, true)
	if g.Enabled(RestartJob) || !on.Enabled(RestartJob) {
		t.Errorf("With changed its receiver, or did not set the gate")
	}
}
