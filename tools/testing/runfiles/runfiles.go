// Package runfiles resolves the paths Bazel's $(rootpath) gives a test:
// relative to the runfiles root, while rules_go runs the test in its
// package's directory.
package runfiles

import (
	"os"
	"path/filepath"
)

// Path returns where the runfile at rootpath is; outside Bazel it returns
// rootpath unchanged.
func Path(rootpath string) string {
	srcdir, workspace := os.Getenv("TEST_SRCDIR"), os.Getenv("TEST_WORKSPACE")
	if srcdir == "" || workspace == "" || filepath.IsAbs(rootpath) {
		return rootpath
	}
	return filepath.Join(srcdir, workspace, rootpath)
}
