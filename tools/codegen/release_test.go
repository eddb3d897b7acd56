package codegen_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/fastjobset/jobset/api/version"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// TestChangelogLeadsWithTheVersion: the first entry of CHANGELOG.md is the
// version the binaries report, so that a release cannot bump one and
// forget the other.
func TestChangelogLeadsWithTheVersion(t *testing.T) {
	root, err := framework.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	changelog, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	first := regexp.MustCompile(`(?m)^## (\S+)`).FindSubmatch(changelog)
	if first == nil {
		t.Fatal("CHANGELOG.md has no '## <version>' entry")
	}
	if got := string(first[1]); got != version.Version {
		t.Errorf("CHANGELOG.md's first entry is %s, api/version/VERSION says %s: add an entry for %s, or fix VERSION", got, version.Version, version.Version)
	}
}
