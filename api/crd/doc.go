// Package crd holds the generated CustomResourceDefinition of JobSet
// (jobset.x-k8s.io_jobsets.yaml, written by tools/update-generated.sh) and
// the integration tests that install it into a real kube-apiserver.
package crd
