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

// A fence that stops a running worker restarts the Pod in place: the
// platform's doing (the API server out of reach), not the worker's. The
// agent records the epoch it fenced at in the Pod's state directory, which
// outlives its container, and the agent of the next start writes it to the
// Pod (agentspec.FencedAnnotation) with its join of the epoch after it,
// the one write the admission policy admits the record with. The
// controller then counts the group restart against no budget, unless
// something else caused it too.

const fenceRecordFile = "fenced"

// fenceRecord is the epoch an earlier agent of this Pod fenced at (0: none)
// and where it is kept ("": nowhere, no state directory).
type fenceRecord struct {
	path  string
	epoch int32
}

// loadFenceRecord reads the record an earlier agent of the Pod left in dir.
func loadFenceRecord(dir string) (fenceRecord, error) {
	if dir == "" {
		return fenceRecord{}, nil
	}
	r := fenceRecord{path: filepath.Join(dir, fenceRecordFile)}
	raw, err := os.ReadFile(r.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return r, nil
	case err != nil:
		return r, fmt.Errorf("reading the fence an earlier agent of this Pod recorded: %w", err)
	}
	e, err := agentspec.ParseEpoch(strings.TrimSpace(string(raw)))
	if err != nil {
		return r, fmt.Errorf("the fence record %s holds %q, not an epoch: %w", r.path, raw, err)
	}
	r.epoch = e
	return r, nil
}

// save records that the agent fenced at epoch e, whole or not at all.
func (r *fenceRecord) save(e int32) error {
	if r.path == "" {
		return nil
	}
	tmp := r.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(agentspec.FormatEpoch(e)+"\n"), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, r.path); err != nil {
		return err
	}
	r.epoch = e
	return nil
}

// annotationFor is the fence record to write with a join of epoch e: only
// with the join of the epoch after the fenced one ("" otherwise).
func (r *fenceRecord) annotationFor(e int32) string {
	if r.epoch == 0 || e != r.epoch+1 {
		return ""
	}
	return agentspec.FormatEpoch(r.epoch)
}

// clear forgets the record once a join wrote it, or made it stale.
func (r *fenceRecord) clear() error {
	r.epoch = 0
	if r.path == "" {
		return nil
	}
	if err := os.Remove(r.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
