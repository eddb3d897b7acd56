package wrapper

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Install copies the running binary to dest, executable by every user,
// for a worker container to run: the init container that injection adds
// runs the agent's image, whose wrapper it copies into the volume it
// shares with the worker (agentspec.WrapperBinary). The agent's image has
// no shell and no cp, so the wrapper copies itself.
//
// The copy is written beside dest and renamed over it, so that a worker
// never runs a partial file, and an install that runs again (every
// container of the Pod restarts, init containers included) replaces the
// file instead of writing into it.
func Install(dest string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the wrapper's own binary: %w", err)
	}
	return copyExecutable(self, dest)
}

func copyExecutable(src, dest string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = io.Copy(tmp, in); err != nil {
		_ = tmp.Close()
		return err
	}
	// Any user: the worker runs as whoever its image or securityContext
	// says, not as the installer's user.
	if err = tmp.Chmod(0o755); err != nil {
		_ = tmp.Close()
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dest)
}
