// Package version is the project's one version, which every binary reports.
// It is read from the file VERSION beside it, so that a release changes one
// line and no build flag can leave a binary unversioned.
package version

import (
	_ "embed"
	"fmt"
	"runtime"
	"strings"
)

//go:embed VERSION
var file string

// Version is the release, without a leading v, for example 0.1.0.
var Version = strings.TrimSpace(file)

// Tag is the release's image tag, for example v0.1.0: the v that
// Kubernetes projects, community JobSet among them, put before the version
// in image tags and git tags.
var Tag = "v" + Version

// String is what a binary's --version prints: its name, the version, and
// the Go toolchain and platform it was built with, which a bug report needs
// as much as the version.
func String(binary string) string {
	return fmt.Sprintf("%s %s (%s %s/%s)", binary, Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
