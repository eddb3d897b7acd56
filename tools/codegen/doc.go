// Package codegen guards the generated files: its test regenerates the
// deepcopy functions and the CRD into a temporary directory with the pinned
// controller-gen and fails when the checked-in copies differ. Regenerate
// them with tools/update-generated.sh. Its other tests keep the layout: the
// README's table names every folder, and the imports respect the folders'
// kinds (what ships depends on no test or tooling code, the webhooks on no
// controller package), and CHANGELOG.md's first entry is the version.
package codegen
