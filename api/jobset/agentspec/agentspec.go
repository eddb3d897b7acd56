// Package agentspec is the contract between the agent sidecar and the rest
// of the system: the JobSet resource the agent watches, the Pod annotations
// it reads and writes, its environment, exit codes and barrier endpoint.
// The agent, the webhook's injection, the manifest generator and the test
// wrappers all read them from here, and package sidecar builds the agent's
// container from them.
//
// It imports nothing: the agent runs in every worker Pod, and linking
// k8s.io/api's Pod and Job types (through the JobSet API package) would
// make up a third of its binary. Package v1alpha2 re-exports the keys.
package agentspec

import "time"

// The JobSet resource the agent watches.
const (
	Group    = "jobset.x-k8s.io"
	Version  = "v1alpha2"
	Resource = "jobsets"
)

// Pod metadata of the protocol (KEP-467).
const (
	// EpochAnnotation is the Pod annotation through which an agent reports
	// the epoch it has joined, as a decimal int32. Only the agent writes
	// it.
	EpochAnnotation = "jobset.sigs.k8s.io/epoch"
	// InPlaceGroupKey names a replicatedJob's in-place group: an annotation
	// on its Job template, and a label of its Jobs and Pods.
	InPlaceGroupKey = "alpha.jobset.sigs.k8s.io/in-place-group"
	// JobSetNameKey holds the name of the owning JobSet, as a label and an
	// annotation of every child Pod; the agent learns its JobSet's name
	// from the annotation through the downward API.
	JobSetNameKey = "jobset.sigs.k8s.io/jobset-name"
)

// The kubelet's names for its RestartAllContainers action (KEP-5532), which
// the agent's exit sets off: the Pod condition set while every container
// restarts, and the reason the killed containers show meanwhile and after.
const (
	PodConditionAllContainersRestarting = "AllContainersRestarting"
	ReasonRestartingAllContainers       = "RestartingAllContainers"
)

// ContainerName names the agent sidecar wherever this project builds it.
const ContainerName = "jobset-agent"

// ServiceAccountName is the ServiceAccount the agent runs as: its Role and
// the epoch-only admission policy are bound to this name.
const ServiceAccountName = "jobset-agent"

// The agent's credentials. With injection, the agent alone gets its
// ServiceAccount token: through a projected volume mounted into the agent
// container only, while the Pod's automatic token mount is off, so that
// worker code cannot patch the Pod's epoch.
const (
	// TokenMountPath is where the agent reads its token, ca.crt and
	// namespace: Kubernetes' standard in-cluster path.
	TokenMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// TokenVolumeName names the projected volume that carries them.
	TokenVolumeName = "jobset-agent-token"
	// TokenExpirationSeconds is the life of the projected token; the
	// kubelet renews it at 80% of that, and the agent rereads it.
	TokenExpirationSeconds = 3600
	// RootCAConfigMap is the ConfigMap of every namespace that holds the
	// cluster's CA (ca.crt), published by kube-controller-manager.
	RootCAConfigMap = "kube-root-ca.crt"
)

// Environment variables the agent reads.
const (
	EnvNamespace  = "NAMESPACE"
	EnvPodName    = "POD_NAME"
	EnvJobSetName = "JOBSET_NAME"
	// EnvInPlaceGroup names the agent's in-place group when its
	// replicatedJob names one (InPlaceGroupKey): the agent follows that
	// group's epochs in status.inPlaceGroups, not the default group's.
	// The controller sets it; empty: the default group.
	EnvInPlaceGroup    = "IN_PLACE_GROUP"
	EnvRestartExitCode = "RESTART_POD_IN_PLACE_EXIT_CODE"
	EnvBarrierPort     = "BARRIER_PORT"
	EnvBarrierPath     = "BARRIER_PATH"
	// EnvFenceAfterSeconds: how long the agent may be out of contact with
	// the API server before it stops its running worker (0: never).
	EnvFenceAfterSeconds = "FENCE_AFTER_SECONDS"
	// MaxFenceAfterSeconds bounds EnvFenceAfterSeconds.
	MaxFenceAfterSeconds = 3600
	// DefaultFenceAfterSeconds: long enough to ride out a short API server
	// restart without stopping running workers, short enough that the
	// controller's node-loss bound stays well under a minute.
	DefaultFenceAfterSeconds = 15

	// EnvFenceWitnesses: how many peers on other nodes, out of contact
	// too, must vouch for an agent before it keeps its worker running
	// past its fence time (0: it never asks, and fences alone). The
	// controller declares a member lost only while no more nodes of its
	// group are silent than the least value of its members: the same
	// number on both sides is what makes a shared outage stop nothing and
	// a replacement safe.
	EnvFenceWitnesses = "FENCE_WITNESSES"
	// DefaultFenceWitnesses: one witness tells a shared outage from a cut;
	// a second node of the group silent at once waits for the defer limit.
	DefaultFenceWitnesses = 1
	// MaxFenceWitnesses bounds EnvFenceWitnesses: each silent agent asks
	// a few times as many peers, every few seconds.
	MaxFenceWitnesses = 16
	// EnvFenceDeferLimitSeconds: the longest silence an agent rides out
	// on its witnesses' word; past it, it fences whatever they say.
	EnvFenceDeferLimitSeconds = "FENCE_DEFER_LIMIT_SECONDS"
	// DefaultFenceDeferLimitSeconds: longer than a managed control plane's
	// upgrade; the controller replaces the members of more silent nodes
	// than the witnesses allow only after it.
	DefaultFenceDeferLimitSeconds = 600
	// MaxFenceDeferLimitSeconds bounds EnvFenceDeferLimitSeconds.
	MaxFenceDeferLimitSeconds = 86400
	// EnvNodeName is the node the agent's Pod runs on (downward API
	// spec.nodeName): a witness names its node, as the asker counts nodes,
	// not Pods.
	EnvNodeName = "NODE_NAME"
	// EnvStateDir is a directory that outlives the agent's container (an
	// emptyDir of the Pod): a witness's promise binds the agents that
	// follow it in the Pod too. Without it, the agent promises nothing.
	EnvStateDir = "AGENT_STATE_DIR"
	// StateVolumeName and StateMountPath: the emptyDir injection mounts at
	// EnvStateDir.
	StateVolumeName = "jobset-agent-state"
	StateMountPath  = "/var/run/jobset-agent"
)

// The witness endpoint, on the barrier port: an agent out of contact with
// the API server asks its peers there whether they are too
// (agent/witness.go).
const (
	WitnessPath = "/witness"
	// WitnessPromiseSeconds: how long a witness that vouched for a peer
	// writes no epoch. The asker asks again after a third of it and, if
	// no longer vouched for, stops its worker within the rest.
	WitnessPromiseSeconds = 30
)

// The worker wrapper (agent/wrapper) and the agent find its control socket
// through this variable, set in both containers to a path in the volume
// they share.
const EnvWrapperControl = "JOBSET_WRAPPER_CONTROL"

// The wrapper as injection puts it in place: an init container of the
// agent's image copies the binary into an emptyDir that the worker
// container and the agent both mount; the control socket lies beside it.
const (
	WrapperVolumeName    = "jobset-wrapper"
	WrapperMountPath     = "/var/run/jobset-wrapper"
	WrapperBinary        = WrapperMountPath + "/jobset-wrapper"
	WrapperControl       = WrapperMountPath + "/control.sock"
	WrapperInstallerName = "jobset-wrapper-install"
	// WrapperImagePath is where the agent's image holds the binary.
	WrapperImagePath = "/jobset-wrapper"
)

// WorkerStoppedAnnotation is the Pod annotation through which an agent
// confirms that its wrapper stopped the worker of the epoch it names and
// that nothing of that worker is left. The controller counts a Pod it
// declared lost as stopped once its agent confirmed the Pod's epoch: its
// kubelet, which would otherwise report it, may be down.
const WorkerStoppedAnnotation = "jobset.sigs.k8s.io/worker-stopped"

// RestartTierAnnotation, on a JobSet, chooses how its agents restart a
// worker that runs under the worker wrapper: RestartTierPod restarts
// every container of the Pod (the agent exits with the restart code);
// any other value, or none, restarts the worker's process in place, and
// the agent survives (the process tier).
const (
	RestartTierAnnotation = "jobset.sigs.k8s.io/restart-tier"
	RestartTierPod        = "pod"
)

// FencedAnnotation is the Pod annotation through which an agent reports
// that it fenced at the epoch it names: out of contact with the API server,
// it stopped its worker, and the Pod restarted in place. The agent of the
// next start writes it with its join, naming the epoch the Pod showed (the
// admission policy admits no other value). The controller counts a group
// restart caused by nothing but such Pods against no budget, and blames no
// Pod for it.
const FencedAnnotation = "jobset.sigs.k8s.io/fenced"

// WorkerStopGraceSeconds is how long the wrapper waits after SIGTERM
// before it kills what is left of the worker, when the agent stops it to
// restart the Pod or to fence: the kubelet's own least grace.
const WorkerStopGraceSeconds = 2

// WorkerStopSlackSeconds bounds the rest of a stop by the wrapper beyond
// its grace: the agent's tick that notices, the wrapper's polls until
// nothing is left.
const WorkerStopSlackSeconds = 1

// FenceTick is how often an agent looks at its silence from the API
// server: its fence fires up to a tick after its fence time.
const FenceTick = 250 * time.Millisecond

// RequiredEnv are the variables the agent cannot start without, each set
// from the downward API field that FieldPathOf gives.
var RequiredEnv = []string{EnvNamespace, EnvPodName, EnvJobSetName}

// FieldPathOf is the downward API field each required variable is read
// from.
var FieldPathOf = map[string]string{
	EnvNamespace:  "metadata.namespace",
	EnvPodName:    "metadata.name",
	EnvJobSetName: "metadata.annotations['" + JobSetNameKey + "']",
	EnvNodeName:   "spec.nodeName",
}

// Exit codes of the agent. Only the restart exit code is a request; the
// others say why the agent stopped.
const (
	// DefaultRestartExitCode asks the kubelet to restart every container of
	// the Pod in place. Distinctive on purpose: no shell, signal or runtime
	// uses it. EnvRestartExitCode overrides it (1..255).
	DefaultRestartExitCode = 88
	// ExitTerminated: SIGTERM or SIGINT, the Pod is shutting down.
	ExitTerminated = 0
	// ExitConfigError: the environment is missing or wrong; restarting in
	// place would not fix it.
	ExitConfigError = 2
	// ExitFatal: the agent cannot continue (for example its barrier port is
	// taken).
	ExitFatal = 3
)

// The barrier endpoint, where the agent's startup probe looks.
const (
	DefaultBarrierPort = 8080
	DefaultBarrierPath = "/barrier-is-lifted"
	// HealthPath answers 200 while the agent runs, barrier or not.
	HealthPath = "/healthz"
	// StartupProbePeriodSeconds and StartupProbeFailureThreshold make the
	// barrier wait as long as the group takes to gather (the largest
	// threshold Pod validation allows: 68 years). Waiting is not failing:
	// a probe that gives up kills every waiting agent, for example while a
	// replacement Pod is Pending until an autoscaler adds a node, and an
	// agent that is down when the group syncs joins the epoch after, which
	// is one more group restart.
	StartupProbePeriodSeconds    = 1
	StartupProbeFailureThreshold = 1<<31 - 1
)
