package version

import (
	"regexp"
	"runtime"
	"testing"
)

// A release is MAJOR.MINOR.PATCH, with an optional pre-release such as
// -rc.1, as the changelog's headings name it: a leading v, a second line or
// an empty file must fail here, not in a release.
func TestVersionIsSemantic(t *testing.T) {
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`).MatchString(Version) {
		t.Errorf("Version = %q, want MAJOR.MINOR.PATCH[-PRERELEASE] (the file VERSION)", Version)
	}
}

func TestString(t *testing.T) {
	want := "jobset-agent " + Version + " (" + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")"
	if got := String("jobset-agent"); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestTag(t *testing.T) {
	if want := "v" + Version; Tag != want {
		t.Errorf("Tag = %q, want %q", Tag, want)
	}
}

func TestDocs(t *testing.T) {
	want := "https://github.com/fastjobset/jobset/blob/" + Tag + "/docs/user-guide.md#setup"
	if got := Docs("user-guide.md#setup"); got != want {
		t.Errorf("Docs() = %q, want %q", got, want)
	}
}
