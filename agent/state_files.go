package agent

import (
	"errors"
	"io/fs"
	"os"
)

// The agents of a Pod hand records on through files in its state
// directory, which outlives the container: an agent reads what the one
// before left, and may be killed in the middle of a write of its own.

// readStateFile reads a record an earlier agent of the Pod left at path;
// found is false when there is none.
func readStateFile(path string) (raw string, found bool, err error) {
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return string(b), true, nil
}

// writeStateFile replaces the record at path with line, whole or not at
// all: the next agent reads the old line or the new one.
func writeStateFile(path, line string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(line+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
