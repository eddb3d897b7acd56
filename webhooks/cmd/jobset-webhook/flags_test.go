package main

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// The injected agent's resources come from flags, and a bad value names
// the flag and a valid example.
func TestQuantityFlag(t *testing.T) {
	var q resource.Quantity
	set := quantityFlag("agent-cpu", &q)
	if err := set("250m"); err != nil || q.String() != "250m" {
		t.Errorf("250m: %v, %s", err, q.String())
	}
	for _, bad := range []string{"", "abc", "0", "-1"} {
		err := set(bad)
		if err == nil || !strings.Contains(err.Error(), "--agent-cpu=") || !strings.Contains(err.Error(), "for example 100m") {
			t.Errorf("%q: %v, want an error that names --agent-cpu and an example", bad, err)
		}
	}
}
