package codegen_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/fastjobset/jobset/tools/testing/framework"
)

// importRules are the boundaries of the README's layout that the compiler
// does not keep: no package under from may depend, directly or through
// others, on a package under forbidden. Tests are exempt (they import
// tools/testing); `go list` without -test leaves them out.
var importRules = map[string]struct {
	from, forbidden []string
	fix             string
}{
	"what ships links no test or tooling code": {
		from:      []string{"api", "controllers", "agent", "webhooks", "plugin", "images"},
		forbidden: []string{"tools", "e2e"},
		fix:       "move the code it needs out of tools/ into the product or images/ (and keep tools/testing testonly in Bazel)",
	},
	"the webhooks link no controller package": {
		from:      []string{"webhooks"},
		forbidden: []string{"controllers"},
		fix:       "move what both components need to api/ (as api/jobset/placement)",
	},
	"the agent links neither the controllers nor the webhooks": {
		from:      []string{"agent"},
		forbidden: []string{"controllers", "webhooks"},
		fix:       "the agent's contract belongs in api/jobset/agentspec",
	},
}

// TestImportsKeepTheLayout checks every rule of importRules against the
// module's packages as `go list` sees them.
func TestImportsKeepTheLayout(t *testing.T) {
	root, err := framework.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := listPackages(root)
	if err != nil {
		t.Fatal(err)
	}
	for name, rule := range importRules {
		t.Run(name, func(t *testing.T) {
			checked := 0
			for _, pkg := range pkgs {
				if !under(pkg.path, rule.from) {
					continue
				}
				checked++
				for _, dep := range pkg.deps {
					if under(dep, rule.forbidden) {
						t.Errorf("%s %s: %s", pkg.path, pkgs.howItDependsOn(pkg, dep), rule.fix)
					}
				}
			}
			if checked == 0 {
				t.Fatalf("no package under %v: the rule checks nothing", rule.from)
			}
		})
	}
}

// pkg is a package of the module, and the packages of the module it
// imports and depends on, as paths relative to the module's root.
type pkg struct {
	path          string
	imports, deps []string
}

type packages []pkg

// listPackages lists the module's non-test packages.
func listPackages(root string) (packages, error) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps,Module", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, errors.New("go list ./...: " + err.Error() + "\n" + stderr.String())
	}
	var pkgs packages
	for decoder := json.NewDecoder(bytes.NewReader(out)); ; {
		var p struct {
			ImportPath    string
			Imports, Deps []string
			Module        struct{ Path string }
		}
		if err := decoder.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		prefix := p.Module.Path + "/"
		local := func(paths []string) []string {
			var rel []string
			for _, path := range paths {
				if after, ok := strings.CutPrefix(path, prefix); ok {
					rel = append(rel, after)
				}
			}
			return rel
		}
		pkgs = append(pkgs, pkg{path: strings.TrimPrefix(p.ImportPath, prefix), imports: local(p.Imports), deps: local(p.Deps)})
	}
	if len(pkgs) == 0 {
		return nil, errors.New("go list ./... found no packages")
	}
	return pkgs, nil
}

// howItDependsOn says how p depends on dep: by importing it, or through
// which of its imports.
func (pkgs packages) howItDependsOn(p pkg, dep string) string {
	if slices.Contains(p.imports, dep) {
		return "imports " + dep
	}
	for _, imp := range p.imports {
		i := slices.IndexFunc(pkgs, func(q pkg) bool { return q.path == imp })
		if i >= 0 && slices.Contains(pkgs[i].deps, dep) {
			return "depends on " + dep + " through its import of " + imp
		}
	}
	return "depends on " + dep
}

// under reports whether path is one of dirs or inside one.
func under(path string, dirs []string) bool {
	return slices.ContainsFunc(dirs, func(dir string) bool {
		return path == dir || strings.HasPrefix(path, dir+"/")
	})
}
