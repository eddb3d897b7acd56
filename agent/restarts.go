package agent

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// A restart of the worker's process moves no restartCount, so the agent
// reports its Pod's worker restarts itself, by tier, with each join of a
// new epoch (agentspec.WorkerRestartsAnnotation): the one write the
// admission policy admits it with. Only the agent knows the tier when it
// joins: the kubelet reports a Pod-tier restart's containers after the new
// agent joined. The agent keeps the Pod's last report in the state
// directory, which outlives its container: a new agent that finds one
// joins after a restart of the Pod's containers, one that finds none is
// the first of a new Pod. Without a state directory it cannot tell the
// two apart, and reports nothing.

const restartsRecordFile = "worker-restarts"

// restartsRecord is the Pod's worker restarts as its agents last reported
// them, and how the agent's next join of a new epoch comes.
type restartsRecord struct {
	// path is where the report is kept; "": no state directory, nothing
	// is reported.
	path string
	// last is the Pod's last report (zero: none).
	last agentspec.WorkerRestarts
	// next is the tier of the agent's next join of a new epoch; "": none
	// is due (the agent joined since it started or last restarted its
	// worker).
	next agentspec.Tier
	// withheld: the API server denied the pending join with the report,
	// and the agent joins without it.
	withheld bool
}

// loadRestartsRecord reads the report that an earlier agent of the Pod
// left in dir: its first join comes after a restart of the Pod's
// containers when there is one, and is the Pod's first otherwise. A report
// it cannot read leaves the tier known and the counts restarted from zero.
func loadRestartsRecord(dir string) (restartsRecord, error) {
	if dir == "" {
		return restartsRecord{}, nil
	}
	r := restartsRecord{path: filepath.Join(dir, restartsRecordFile), next: agentspec.TierNew}
	raw, found, err := readStateFile(r.path)
	switch {
	case err != nil:
		r.next = agentspec.TierPod
		return r, fmt.Errorf("reading the worker restarts %s an earlier agent of this Pod left: %w", r.path, err)
	case !found:
		return r, nil
	}
	r.next = agentspec.TierPod
	last, err := agentspec.ParseWorkerRestarts(strings.TrimSpace(raw))
	if err != nil {
		return r, fmt.Errorf("the record %s holds %q, not a report of worker restarts: %w", r.path, raw, err)
	}
	r.last = last
	return r, nil
}

// restartingProcess: the agent stopped its worker through the wrapper, and
// its next join comes after a restart of the worker's process.
func (r *restartsRecord) restartingProcess() {
	r.next, r.withheld = agentspec.TierProcess, false
}

// annotationFor is the report to write with a join of epoch e ("": none).
func (r *restartsRecord) annotationFor(e int32) string {
	if r.path == "" || r.next == "" || r.withheld {
		return ""
	}
	return r.last.Joined(e, r.next).String()
}

// denied: the API server denied a join with the report; the next try goes
// without, so that no join waits on a report.
func (r *restartsRecord) denied() { r.withheld = true }

// joined records a join of epoch e: a join due counts its restart, whether
// or not the report went with it, and is kept, whole or not at all, for
// the agents that follow in the Pod.
func (r *restartsRecord) joined(e int32) error {
	if r.path == "" || r.next == "" {
		return nil
	}
	r.last, r.next, r.withheld = r.last.Joined(e, r.next), "", false
	return writeStateFile(r.path, r.last.String())
}
