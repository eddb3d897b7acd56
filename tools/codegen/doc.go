// Package codegen guards the generated files: its test regenerates the
// deepcopy functions and the CRD into a temporary directory with the pinned
// controller-gen and fails when the checked-in copies differ. Regenerate
// them with tools/update-generated.sh.
package codegen
