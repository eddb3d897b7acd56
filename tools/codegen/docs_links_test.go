package codegen_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fastjobset/jobset/api/version"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// TestDocsLinksInMessagesExist: every page and anchor that a message of
// the code links to with version.Docs is a page under docs/ with that
// heading, so that a release never points its users at nothing.
func TestDocsLinksInMessagesExist(t *testing.T) {
	root, err := framework.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`version\.Docs\("([^"#]+)(#[^"]*)?"\)`)
	found := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "bazel-")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		found += checkDocsLinks(t, root, rel, link, src)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Error("no version.Docs link found in the code: is the pattern still the one the code uses?")
	}
}

// checkDocsLinks reports each link of src (found by link, whose first
// group is a page under docs/ and second an optional #anchor) to a page or
// heading that does not exist, and returns how many links it found.
func checkDocsLinks(t *testing.T, root, rel string, link *regexp.Regexp, src []byte) int {
	t.Helper()
	matches := link.FindAllStringSubmatch(string(src), -1)
	for _, m := range matches {
		page, anchor := m[1], strings.TrimPrefix(m[2], "#")
		text, err := os.ReadFile(filepath.Join(root, "docs", page))
		if err != nil {
			t.Errorf("%s links to docs/%s, which does not exist", rel, page)
			continue
		}
		if anchor != "" && !hasAnchor(string(text), anchor) {
			t.Errorf("%s links to docs/%s#%s, and no heading of that page has that anchor", rel, page, anchor)
		}
	}
	return len(matches)
}

// hasAnchor: a Markdown heading of text whose anchor, as the code host
// makes it (lower case, punctuation but hyphens dropped, spaces to
// hyphens), is anchor.
func hasAnchor(text, anchor string) bool {
	drop := regexp.MustCompile(`[^a-z0-9 _-]`)
	for _, line := range strings.Split(text, "\n") {
		heading := strings.TrimLeft(line, "#")
		if heading == line || !strings.HasPrefix(heading, " ") {
			continue
		}
		slug := strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(heading)), ""), " ", "-")
		if slug == anchor {
			return true
		}
	}
	return false
}

// TestGeneratedFilesLinkTheDocsURL: the comments and descriptions of what
// a cluster user installs (the chart, the agent's manifests, monitoring)
// link to the documentation at the release's docs URL, never to a
// repository path they may not have, and each page and anchor linked
// exists.
func TestGeneratedFilesLinkTheDocsURL(t *testing.T) {
	root, err := framework.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	repoPath := regexp.MustCompile(`(^|[^/\w])(docs/[\w.-]+\.md)`)
	link := regexp.MustCompile(regexp.QuoteMeta(version.DocsURL) + `([\w.-]+\.md)(#[\w-]+)?`)
	checked := 0
	for _, dir := range append(slices.Clone(generatedDirs), generatedTrees...) {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !slices.Contains([]string{".yaml", ".json", ".txt", ".tpl"}, filepath.Ext(path)) {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			checked++
			rel, _ := filepath.Rel(root, path)
			for _, m := range repoPath.FindAllStringSubmatch(string(src), -1) {
				t.Errorf("%s names the repository path %s: link version.Docs(%q) (%s...) instead", rel, m[2], strings.TrimPrefix(m[2], "docs/"), version.DocsURL)
			}
			checkDocsLinks(t, root, rel, link, src)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked == 0 {
		t.Fatal("no generated manifest found")
	}
}
