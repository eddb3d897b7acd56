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

// DocsURL is where this release's documentation is read: the docs folder
// of the source at the release's tag, which the code host renders. Messages
// a cluster user reads (admission errors, flag help, the agent's log) link
// there, not to a path of a repository they may never have checked out.
var DocsURL = "https://github.com/fastjobset/jobset/blob/" + Tag + "/docs/"

// Docs is the address of a page of the documentation, with an optional
// #anchor: Docs("user-guide.md#setup").
func Docs(page string) string {
	return DocsURL + page
}
