// Package epoch names what the agent sidecar shares with the controller on
// the wire: the JobSet resource it watches and the Pod annotation it
// writes. It holds no Go types, so that the agent, which every worker Pod
// runs, does not link k8s.io/api's Pod and Job types through the JobSet
// API package (a third of its binary). Package v1alpha2 re-exports these
// names.
package epoch

const (
	// Group and Version of the JobSet API.
	Group   = "jobset.x-k8s.io"
	Version = "v1alpha2"
	// Resource is the JobSet resource the agent watches.
	Resource = "jobsets"
	// PodAnnotation is the Pod annotation through which an agent reports
	// the epoch it has joined, as a decimal int32. Only the agent writes
	// it.
	PodAnnotation = "jobset.sigs.k8s.io/epoch"
)
