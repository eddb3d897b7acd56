package codegen_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fastjobset/jobset/tools/testing/framework"
)

// TestReadmeLayoutMatchesTheTree: the README's layout table names every
// folder of the source tree that holds files, and nothing that does not
// exist (a row may name a top-level folder of folders).
func TestReadmeLayoutMatchesTheTree(t *testing.T) {
	root, err := framework.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, layout, found := strings.Cut(string(readme), "\n### Layout\n")
	if !found {
		t.Fatal("README.md has no '### Layout' section")
	}
	layout, _, _ = strings.Cut(layout, "\n#")
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(layout, -1) {
		documented = append(documented, m[1])
	}

	var tree []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "bazel-") || name == "testdata" || name == "bin") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Type()&fs.ModeSymlink == 0 {
			if dir := filepath.Dir(path); dir != root {
				rel, _ := filepath.Rel(root, dir)
				tree = append(tree, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(tree)
	tree = slices.Compact(tree)
	for _, dir := range tree {
		if !slices.Contains(documented, dir) {
			t.Errorf("folder %s is not in README.md's layout table: add a row for it", dir)
		}
	}
	for _, dir := range documented {
		if !slices.ContainsFunc(tree, func(d string) bool { return d == dir || strings.HasPrefix(d, dir+"/") }) {
			t.Errorf("README.md's layout table names %s, which holds no files: remove its row", dir)
		}
	}
}
