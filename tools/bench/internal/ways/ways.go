// Package ways reads a benchmark's -strategies flag: which of its ways to
// restart a group it runs.
package ways

import (
	"fmt"
	"strings"
)

// Parse reads the comma-separated list of ways given to -strategies and
// returns them in the order of all, the order the benchmark runs them in,
// each once; a way not in all is an error that names the ones there are.
func Parse(list string, all []string) ([]string, error) {
	asked := map[string]bool{}
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		known := false
		for _, way := range all {
			known = known || way == s
		}
		if !known {
			return nil, fmt.Errorf("-strategies: %q is none of %s", s, strings.Join(all, ", "))
		}
		asked[s] = true
	}
	var ways []string
	for _, s := range all {
		if asked[s] {
			ways = append(ways, s)
		}
	}
	return ways, nil
}
