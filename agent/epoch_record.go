package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// Why a group restart happened is the controller's to word and count, and
// only the agent that left its epoch knows two of the reasons:
//   - a fence that stops a running worker: the platform's doing (the API
//     server out of reach), not the worker's, counted against no budget
//     unless something else caused the restart too;
//   - a hang: the worker neither exited nor progressed, counted as a
//     failure with the reason Hang.
// The agent records the epoch it left for either reason, and writes the
// record to the Pod (agentspec.FencedAnnotation, agentspec.HungAnnotation)
// with its join of the epoch after it, the one write the admission policy
// admits a record with. In the Pod tier the agent that joins is the next
// start of the container, so the record is kept in the Pod's state
// directory, which outlives the container.

const (
	fenceRecordFile = "fenced"
	hangRecordFile  = "hung"
)

// epochRecord is the epoch an agent of this Pod left for one reason (0:
// none) and where it is kept ("": in memory only, no state directory).
type epochRecord struct {
	path  string
	epoch int32
}

// loadEpochRecord reads the record of file that an earlier agent of the
// Pod left in dir.
func loadEpochRecord(dir, file string) (epochRecord, error) {
	if dir == "" {
		return epochRecord{}, nil
	}
	r := epochRecord{path: filepath.Join(dir, file)}
	raw, found, err := readStateFile(r.path)
	switch {
	case err != nil:
		return r, fmt.Errorf("reading the record %s an earlier agent of this Pod left: %w", r.path, err)
	case !found:
		return r, nil
	}
	e, err := agentspec.ParseEpoch(strings.TrimSpace(raw))
	if err != nil {
		return r, fmt.Errorf("the record %s holds %q, not an epoch: %w", r.path, raw, err)
	}
	r.epoch = e
	return r, nil
}

// save records that the agent left epoch e, in memory and, with a state
// directory, on disk, whole or not at all.
func (r *epochRecord) save(e int32) error {
	r.epoch = e
	if r.path == "" {
		return nil
	}
	return writeStateFile(r.path, agentspec.FormatEpoch(e))
}

// annotationFor is the record to write with a join of epoch e: only with
// the join of the epoch after the one left ("" otherwise).
func (r *epochRecord) annotationFor(e int32) string {
	if r.epoch == 0 || e != r.epoch+1 {
		return ""
	}
	return agentspec.FormatEpoch(r.epoch)
}

// clear forgets the record once a join wrote it, or made it stale.
func (r *epochRecord) clear() error {
	r.epoch = 0
	if r.path == "" {
		return nil
	}
	if err := os.Remove(r.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
