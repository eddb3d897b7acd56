package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// Labels and annotations that the controller puts on child Jobs and on their
// Pod templates. Unless a comment says otherwise, each key is written both as
// a label (for selectors) and as an annotation (for the downward API, which
// the agent sidecar uses to learn its JobSet's name).
const (
	// JobSetNameKey holds the name of the owning JobSet.
	JobSetNameKey = agentspec.JobSetNameKey
	// JobSetUIDKey holds the UID of the owning JobSet, so that children of a
	// deleted JobSet are never mistaken for children of a new one with the
	// same name.
	JobSetUIDKey = "jobset.sigs.k8s.io/jobset-uid"
	// ReplicatedJobNameKey holds the name of the replicatedJob a Job belongs to.
	ReplicatedJobNameKey = "jobset.sigs.k8s.io/replicatedjob-name"
	// ReplicatedJobReplicasKey holds the replicas of that replicatedJob.
	ReplicatedJobReplicasKey = "jobset.sigs.k8s.io/replicatedjob-replicas"
	// GlobalReplicasKey holds the sum of replicas over all replicatedJobs.
	GlobalReplicasKey = "jobset.sigs.k8s.io/global-replicas"
	// JobIndexKey holds the index of a Job within its replicatedJob,
	// from 0 to replicas-1.
	JobIndexKey = "jobset.sigs.k8s.io/job-index"
	// JobGlobalIndexKey holds an index unique across the whole JobSet,
	// from 0 to the global replicas minus one.
	JobGlobalIndexKey = "jobset.sigs.k8s.io/job-global-index"
	// JobKey holds the SHA-1 (hex) of the namespace/name of the Job: a stable identity
	// that fits in a label value whatever the name's length.
	JobKey = "jobset.sigs.k8s.io/job-key"
	// GroupNameKey holds the replicatedJob's groupName.
	GroupNameKey = "jobset.sigs.k8s.io/group-name"
	// GroupReplicasKey holds the sum of replicas over the replicatedJobs of
	// the same group.
	GroupReplicasKey = "jobset.sigs.k8s.io/group-replicas"
	// JobGroupIndexKey holds the index of a Job within its group.
	JobGroupIndexKey = "jobset.sigs.k8s.io/job-group-index"
	// RestartsKey holds the JobSet's status.restarts when the Job was
	// created: the generation of children a full restart replaces.
	RestartsKey = "jobset.sigs.k8s.io/restart-attempt"
	// JobRestartAttemptKey holds, under the RestartJob feature gate, the
	// Job's entry of status.replicatedJobsStatus[].jobRestarts when it was
	// created: the generation of the Job that RestartJob replaces.
	JobRestartAttemptKey = "jobset.sigs.k8s.io/job-restart-attempt"
	// ExecutionAttemptsKey, an annotation only, holds under the
	// ExecutionAttemptsTracking feature gate the JobSet's
	// status.executionAttempts when the Job was created or last resumed:
	// which execution of the JobSet its Pods belong to, for logs to be
	// told apart across full restarts and suspensions.
	ExecutionAttemptsKey = "jobset.sigs.k8s.io/execution-attempt"
	// CoordinatorKey holds the stable network endpoint of the coordinator
	// Pod when spec.coordinator is set.
	CoordinatorKey = "jobset.sigs.k8s.io/coordinator"
)

// Keys of the in-place restart protocol (KEP-467).
const (
	// EpochKey is the Pod annotation through which an agent reports the
	// epoch it has joined, as a decimal int32. Only the agent writes it.
	EpochKey = agentspec.EpochAnnotation
	// PodConditionAllContainersRestarting is the Pod condition the kubelet
	// sets while its RestartAllContainers action (KEP-5532) restarts every
	// container of the Pod, and ReasonRestartingAllContainers the reason
	// the containers it killed show.
	PodConditionAllContainersRestarting corev1.PodConditionType = agentspec.PodConditionAllContainersRestarting
	ReasonRestartingAllContainers                               = agentspec.ReasonRestartingAllContainers
	// InjectAgentKey, set to "true" on a JobSet with restartStrategy
	// InPlaceRestart, asks the webhook to add the agent sidecar, its
	// environment, startup probe and restart rule, and a restart rule to
	// every worker container that has none.
	InjectAgentKey = "jobset.sigs.k8s.io/inject-agent"
	// WorkerWrapperKey, set to "false" on a JobSet or on a replicatedJob's
	// Pod template, keeps the worker wrapper out of the Pods that agent
	// injection builds: their workers restart with the Pod's containers
	// only (the Pod tier). Without it, injection wraps every worker it can
	// (docs/user-guide.md, "Which tier when").
	WorkerWrapperKey = "jobset.sigs.k8s.io/worker-wrapper"
	// RestartTierKey, set to RestartTierPod on a JobSet, has its agents
	// restart every container of the Pod for a group restart even where
	// the worker runs under the wrapper, whose agents otherwise restart
	// the worker's process only (docs/controller.md, "The process tier").
	RestartTierKey = agentspec.RestartTierAnnotation
	RestartTierPod = agentspec.RestartTierPod
	// GroupMemberFinalizer is on every live member of an InPlaceRestart
	// JobSet's group (the controller adds it) until the controller has seen
	// how the Pod ended. A worker deleted while it runs may exit 0 on
	// SIGTERM: its Job then counts the index complete and never replaces it.
	// The finalizer keeps the deleted Pod visible until the controller has
	// answered that with a full restart; a Pod seen to finish on its own
	// first is released at once.
	GroupMemberFinalizer = "jobset.sigs.k8s.io/group-member"
	// InPlaceGroupKey, an annotation on a replicatedJob's Job template,
	// names the in-place group its Pods belong to: replicatedJobs that
	// name the same group restart in place together, and a failure in one
	// group leaves the others running (status.inPlaceGroups). Without it,
	// a replicatedJob whose Pods run the agent is in the default group.
	// The controller labels the group's Jobs and Pods with it too, and
	// gives their agents the group's name (agentspec.EnvInPlaceGroup).
	InPlaceGroupKey = agentspec.InPlaceGroupKey
	// FailuresInPlaceAnnotation holds, on a member, the times (RFC 3339,
	// the controller's clock) of its last failures in place.
	FailuresInPlaceAnnotation = "jobset.sigs.k8s.io/failures-in-place"
	// PodConditionReplacedOffNode marks a Pod the controller set Failed for
	// failing in place again and again on its node: the Pod webhook keeps
	// its replacement (the next Pod of its Job and completion index) off
	// that node.
	PodConditionReplacedOffNode corev1.PodConditionType = "jobset.sigs.k8s.io/ReplacedOffNode"
	// PodReasonNodeLost is the reason of the DisruptionTarget condition with
	// which the controller marks Failed a member whose node was lost (its
	// Lease not renewed past the member's bound): the Pod webhook keeps its
	// replacement off that node too.
	PodReasonNodeLost = "NodeLost"
	// PodReasonRepeatedFailures, the reason of a PodConditionReplacedOffNode
	// mark: the Pod itself failed in place again and again on its node,
	// which its successors are kept off.
	PodReasonRepeatedFailures = "RepeatedFailures"
	// PodReasonReplacedWithItsJob, the reason of a PodConditionReplacedOffNode
	// mark: the Pod's Job, exclusively placed, is replaced as a whole off
	// the node where another of its Pods failed again and again (the unit of
	// exclusive placement is the Job's domain). Its own node is not blamed.
	PodReasonReplacedWithItsJob = "ReplacedWithItsJob"
)

// Exclusive placement.
const (
	// ExclusiveKey, set on a JobSet or on a replicatedJob's Job template,
	// asks for one child Job per topology domain, the domain being the value
	// of the node label this annotation names.
	ExclusiveKey = "alpha.jobset.sigs.k8s.io/exclusive-topology"
	// NodeSelectorStrategyKey switches exclusive placement from Pod
	// (anti-)affinities to node selectors on the namespaced Job name; the
	// value is ignored.
	NodeSelectorStrategyKey = "alpha.jobset.sigs.k8s.io/node-selector"
	// NamespacedJobKey is the node label that the node-selector strategy
	// matches against.
	NamespacedJobKey = "alpha.jobset.sigs.k8s.io/namespaced-job"
	// NoScheduleTaintKey is the taint that the node-selector strategy
	// tolerates.
	NoScheduleTaintKey = "alpha.jobset.sigs.k8s.io/no-schedule"
	// PriorityKey labels each JobSet Pod (but those of the node-selector
	// strategy) with its priority, as community JobSet's Pod webhook does:
	// a leader's anti-affinity repels only the Jobs of its own priority, so
	// that the scheduler can preempt a lower priority's Job out of a domain
	// for a higher one's.
	PriorityKey = "jobset.sigs.k8s.io/priority"
)

// JobSetControllerName is the spec.managedBy value that this controller
// reconciles; JobSets naming another manager are left alone.
const JobSetControllerName = "jobset.sigs.k8s.io/jobset-controller"
