package inplace

import (
	"strings"
	"testing"
)

// TestProtocolCheckerScopedGroups explores the model in the groups mode
// (scopedGroups): Job a's slots are in-place group a, Job b's slot group
// b.
func TestProtocolCheckerScopedGroups(t *testing.T) {
	scopedGroups = true
	defer func() { scopedGroups = false }()
	TestProtocolChecker(t)
}

// TestCheckerFindsSharedEpochs shows that the groups mode can fail: with
// every agent following group a's epochs (sharedEpochs), group b's worker
// starts at an epoch its group never synced, and a fault of group a stops
// it; the search finds both, each with a short trace.
func TestCheckerFindsSharedEpochs(t *testing.T) {
	scopedGroups, sharedEpochs = true, true
	defer func() { scopedGroups, sharedEpochs = false, false }()
	found := map[string]bool{}
	if _, err := search(func(v *violation, trace string) bool {
		t.Logf("%s\n%s", v.message, trace)
		found[v.kind] = true
		if strings.Count(trace, "\n") >= 20 {
			t.Errorf("the trace to %q is not short", v.kind)
		}
		return !found["isolation: worker stopped"]
	}); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"safety: unsynced start", "isolation: worker stopped"} {
		if !found[kind] {
			t.Errorf("with agents that follow another group's epochs, the search did not find %q", kind)
		}
	}
}

// checkIsolation holds each of a state's steps, in the groups mode, to
// isolated.
func checkIsolation(s state, steps []step) []step {
	if !scopedGroups {
		return steps
	}
	for i := range steps {
		if steps[i].violation == nil {
			steps[i].violation = isolated(s, steps[i].next)
		}
	}
	return steps
}

// isolated checks that a step from s to n leaves alone every group that
// nothing has touched in this run (group.touched, as of n: the step's own
// fault counts): its deprecated epoch stays, its synced epoch moves only
// to its first sync, and every worker of it that runs goes on running (in
// the process tier, its agent does not start to stop it either). A fault
// of one group, or the decision on it, must not reach another: each
// group's Decide reads only its own Pods, and each agent only its group's
// epochs.
func isolated(s, n state) *violation {
	for k := range groupCount() {
		g, m := s.groups[k], n.groups[k]
		if m.touched {
			continue
		}
		switch {
		case m.deprecated != g.deprecated:
			return violated("isolation: epochs", "isolation: group %s's deprecated epoch moves %d->%d, but nothing touched the group", jobNames[k], g.deprecated, m.deprecated)
		case g.synced >= 1 && m.synced != g.synced:
			return violated("isolation: epochs", "isolation: group %s's synced epoch moves %d->%d, but nothing touched the group", jobNames[k], g.synced, m.synced)
		}
		for i, p := range s.pods {
			if !p.exists || p.worker == 0 || groupOf(p.slot) != k {
				continue
			}
			if q := n.pods[i]; q.worker == 0 || q.stopping && !p.stopping {
				return violated("isolation: worker stopped", "isolation: the worker of %s, of group %s, stops at epoch %d, but nothing touched the group", p.name(), jobNames[k], p.worker)
			}
		}
	}
	return nil
}
