package agentspec_test

import (
	"testing"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/tools/testing/epochcases"
)

func TestParseEpoch(t *testing.T) {
	for _, c := range epochcases.Cases {
		t.Run(c.Name(), func(t *testing.T) {
			got, err := agentspec.ParseEpoch(c.Value)
			if valid := err == nil; valid != c.Valid {
				t.Fatalf("ParseEpoch(%q) = %d, %v; want valid=%t", c.Value, got, err, c.Valid)
			}
			if c.Valid && got != c.Epoch {
				t.Errorf("ParseEpoch(%q) = %d, want %d", c.Value, got, c.Epoch)
			}
			if c.Valid && agentspec.FormatEpoch(got) != c.Value {
				t.Errorf("FormatEpoch(%d) = %q, want %q", got, agentspec.FormatEpoch(got), c.Value)
			}
		})
	}
}
