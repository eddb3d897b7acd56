#!/usr/bin/env bash
# Prints the hash of everything a protocol checker search computes from:
#
#   tools/checker/inputs.sh //controllers/inplace:protocol_checker_test
#
# A search is a pure function of the Go source of this module it compiles
# (the package's own files and tests, and every package of ours it
# imports, the agent's among them), the versions of the modules it imports
# (go.mod, go.sum), the Go toolchain and the arguments its BUILD file
# gives it. The hash names all of them, and nothing that needs a build, so
# tools/test.sh can tell from it alone, before anything is built, whether
# a search passed before with the same inputs (tools/checker/passed.txt).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -eq 1 ] || { echo "usage: $0 //controllers/inplace:<checker target>" >&2; exit 2; }
target=$1
package=${target%%:*}
package=./${package#//}

# shellcheck disable=SC2016 # a Go template, not the shell's
files=$(go list -deps -test -f '{{if .Module}}{{if .Module.Main}}{{$dir := .Dir}}{{range .GoFiles}}{{$dir}}/{{.}}
{{end}}{{range .CgoFiles}}{{$dir}}/{{.}}
{{end}}{{range .EmbedFiles}}{{$dir}}/{{.}}
{{end}}{{range .TestGoFiles}}{{$dir}}/{{.}}
{{end}}{{range .XTestGoFiles}}{{$dir}}/{{.}}
{{end}}{{end}}{{end}}' "$package")
# What go generates for a test (its main, the test variant's init) lives in
# Go's build cache, named by an absolute path: not an input.
files=$(grep "^$(pwd)/" <<<"$files" | grep -v '//' | sed "s|^$(pwd)/||" | sort -u)
[ -n "$files" ] || { echo "$0: go list found no source for ${package}" >&2; exit 1; }
# shellcheck disable=SC2086 # one path a line, none with spaces
inputs=$(echo "$target" && go env GOVERSION && sha256sum go.mod go.sum "${package#./}/BUILD.bazel" $files)
sha256sum <<<"$inputs" | cut -d' ' -f1
