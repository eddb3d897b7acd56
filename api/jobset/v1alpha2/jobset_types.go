package v1alpha2

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// JobSet runs a group of replicated Jobs as one workload: one set of
// success, failure and restart policies for all of them.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=js
// +kubebuilder:printcolumn:name="TerminalState",JSONPath=".status.terminalState",type=string,description="Final state of the JobSet"
// +kubebuilder:printcolumn:name="Restarts",JSONPath=".status.restarts",type=integer,description="Full restarts (all Jobs recreated)"
// +kubebuilder:printcolumn:name="InPlaceRestarts",JSONPath=".status.inPlaceRestarts",type=integer,description="Group restarts done in place"
// +kubebuilder:printcolumn:name="SyncedEpoch",JSONPath=".status.syncedEpoch",type=integer,description="Epoch every live Pod has joined (in-place restarts)"
// +kubebuilder:printcolumn:name="Completed",JSONPath=".status.conditions[?(@.type==\"Completed\")].status",type=string
// +kubebuilder:printcolumn:name="Suspended",JSONPath=".spec.suspend",type=boolean,description="Whether the JobSet is suspended"
// +kubebuilder:printcolumn:name="Age",JSONPath=".metadata.creationTimestamp",type=date
type JobSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the JobSet.
	Spec JobSetSpec `json:"spec,omitempty"`
	// status is the observed state of the JobSet.
	Status JobSetStatus `json:"status,omitempty"`
}

// JobSetList is a list of JobSets.
//
// +kubebuilder:object:root=true
type JobSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []JobSet `json:"items"`
}

// JobSetSpec is the desired state of a JobSet.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.startupPolicy) && self.startupPolicy.startupPolicyOrder == 'InOrder' && self.replicatedJobs.exists(x, has(x.dependsOn)))",message="startupPolicy InOrder and replicatedJobs[].dependsOn are mutually exclusive: use one of them"
type JobSetSpec struct {
	// replicatedJobs are the groups of identical Jobs that form the set.
	//
	// +listType=map
	// +listMapKey=name
	// +patchMergeKey=name
	// +patchStrategy=merge
	ReplicatedJobs []ReplicatedJob `json:"replicatedJobs,omitempty" patchStrategy:"merge" patchMergeKey:"name"`

	// network configures DNS hostnames for the Pods.
	//
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="network is immutable"
	Network *Network `json:"network,omitempty"`

	// successPolicy says when the JobSet has succeeded. Without it the JobSet
	// succeeds when every child Job has completed.
	//
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="successPolicy is immutable"
	SuccessPolicy *SuccessPolicy `json:"successPolicy,omitempty"`

	// failurePolicy says how the JobSet reacts to a failed child Job (and,
	// with restartStrategy InPlaceRestart, to a failed Pod). Without it the
	// JobSet fails as soon as one child Job fails.
	//
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="failurePolicy is immutable"
	FailurePolicy *FailurePolicy `json:"failurePolicy,omitempty"`

	// startupPolicy says in which order the replicatedJobs start.
	// Deprecated: use replicatedJobs[].dependsOn.
	//
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="startupPolicy is immutable"
	StartupPolicy *StartupPolicy `json:"startupPolicy,omitempty"`

	// suspend suspends every child Job while true.
	//
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// coordinator names one Pod as the coordinator of the workload. Every Job
	// and Pod then carries its stable network endpoint in the
	// jobset.sigs.k8s.io/coordinator label and annotation.
	//
	// +optional
	Coordinator *Coordinator `json:"coordinator,omitempty"`

	// managedBy names the controller that reconciles this JobSet. This
	// controller reconciles JobSets without it or with the reserved value
	// jobset.sigs.k8s.io/jobset-controller and leaves all others alone.
	// The value is a domain-prefixed path (for example acme.io/foo) of at
	// most 63 characters.
	//
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="managedBy is immutable"
	ManagedBy *string `json:"managedBy,omitempty"`

	// ttlSecondsAfterFinished, when set, deletes the JobSet that many seconds
	// after it completed or failed (0: at once).
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// activeDeadlineSeconds, when set, bounds how long the JobSet may be
	// active, counted from status.startTime: once over, the JobSet fails
	// with reason DeadlineExceeded and its active Jobs are deleted. The
	// time does not run while the JobSet is suspended, and starts again at
	// a full restart; an in-place group restart and the restart of one Job
	// leave it running. It needs the JobSetActiveDeadlineSeconds feature
	// gate (alpha, off).
	//
	// +optional
	// +kubebuilder:validation:Minimum=1
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// volumeClaimPolicies are PersistentVolumeClaims shared by the Pods of
	// the JobSet, created from templates named <claim>-<jobset>.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="volumeClaimPolicies is immutable"
	VolumeClaimPolicies []VolumeClaimPolicy `json:"volumeClaimPolicies,omitempty"`
}

// ReplicatedJob is a Job template and the number of Jobs made from it.
type ReplicatedJob struct {
	// name identifies the replicatedJob; child Jobs are named
	// <jobset>-<name>-<index>.
	//
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// groupName puts replicatedJobs into groups, each with its own Job
	// indexes (jobset.sigs.k8s.io/job-group-index).
	//
	// +optional
	// +kubebuilder:default=default
	GroupName string `json:"groupName,omitempty"`

	// template is the template of every Job of this replicatedJob.
	Template batchv1.JobTemplateSpec `json:"template"`

	// replicas is the number of Jobs made from the template.
	//
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	Replicas int32 `json:"replicas,omitempty"`

	// dependsOn delays the creation of this replicatedJob's Jobs until the
	// named earlier replicatedJobs reach the given status. The first
	// replicatedJob cannot depend on anything.
	//
	// +optional
	// +listType=map
	// +listMapKey=name
	// +patchMergeKey=name
	// +patchStrategy=merge
	// +kubebuilder:validation:MaxItems=5
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="dependsOn is immutable"
	DependsOn []DependsOn `json:"dependsOn,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
}

// DependsOn is a dependency on an earlier replicatedJob.
type DependsOn struct {
	// name of the earlier replicatedJob.
	Name string `json:"name"`

	// status the earlier replicatedJob must reach: Ready or Complete.
	Status DependsOnStatus `json:"status"`
}

// DependsOnStatus is the state a dependency must reach.
//
// +kubebuilder:validation:Enum=Ready;Complete
type DependsOnStatus string

const (
	// DependencyReady: every Job of the replicatedJob is ready, succeeded or
	// failed.
	DependencyReady DependsOnStatus = "Ready"
	// DependencyComplete: every Job of the replicatedJob succeeded.
	DependencyComplete DependsOnStatus = "Complete"
)

// Network configures the headless Service and Pod hostnames.
type Network struct {
	// enableDNSHostnames makes every Pod reachable at
	// <jobset>-<replicatedJob>-<jobIndex>-<podIndex>.<subdomain>.
	//
	// +optional
	EnableDNSHostnames *bool `json:"enableDNSHostnames,omitempty"`

	// subdomain is the name of the headless Service; defaults to the
	// JobSet's name.
	//
	// +optional
	Subdomain string `json:"subdomain,omitempty"`

	// publishNotReadyAddresses publishes DNS records of Pods before they are
	// ready; defaults to true.
	//
	// +optional
	PublishNotReadyAddresses *bool `json:"publishNotReadyAddresses,omitempty"`
}

// Operator says how many of the targeted Jobs must meet a condition.
type Operator string

const (
	// OperatorAll requires every targeted Job.
	OperatorAll Operator = "All"
	// OperatorAny requires any one targeted Job.
	OperatorAny Operator = "Any"
)

// SuccessPolicy says when the JobSet has succeeded.
type SuccessPolicy struct {
	// operator: All or Any of the targeted Jobs must complete.
	//
	// +kubebuilder:validation:Enum=All;Any
	Operator Operator `json:"operator"`

	// targetReplicatedJobs limits the policy to these replicatedJobs; empty
	// means all of them.
	//
	// +optional
	// +listType=atomic
	TargetReplicatedJobs []string `json:"targetReplicatedJobs,omitempty"`
}

// JobSetRestartStrategy says how a JobSet restarts its workload.
//
// +kubebuilder:validation:Enum=Recreate;BlockingRecreate;InPlaceRestart
type JobSetRestartStrategy string

const (
	// Recreate deletes and recreates every child Job, each one as soon as
	// its predecessor is gone.
	Recreate JobSetRestartStrategy = "Recreate"

	// BlockingRecreate deletes every child Job and waits until all of them
	// and their Pods are gone before creating any new one.
	BlockingRecreate JobSetRestartStrategy = "BlockingRecreate"

	// InPlaceRestart restarts healthy Pods in place (same Pod, new
	// containers) through the agent sidecar and the epoch protocol of
	// KEP-467, and lets the Job controller replace only failed Pods. A
	// failed child Job falls back to the failure policy as with Recreate.
	InPlaceRestart JobSetRestartStrategy = "InPlaceRestart"
)

// FailurePolicy says how the JobSet reacts to failures.
type FailurePolicy struct {
	// maxRestarts is the number of restarts the JobSet may use before it
	// fails. Full restarts (all Jobs recreated) count, except those of
	// RestartJobSetAndIgnoreMaxRestarts; so do restarts of one Job by
	// RestartJob; with InPlaceRestart, so do group restarts in place.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxRestarts int32 `json:"maxRestarts,omitempty"`

	// restartStrategy: Recreate (default), BlockingRecreate or
	// InPlaceRestart.
	//
	// +optional
	// +kubebuilder:default=Recreate
	RestartStrategy JobSetRestartStrategy `json:"restartStrategy,omitempty"`

	// rules are evaluated in order against a failed child Job; the first
	// that matches decides. When none matches, the JobSet restarts
	// (RestartJobSet).
	//
	// +optional
	// +listType=atomic
	Rules []FailurePolicyRule `json:"rules,omitempty"`
}

// FailurePolicyAction is what a matching failure policy rule does.
type FailurePolicyAction string

const (
	// FailJobSet fails the JobSet at once.
	FailJobSet FailurePolicyAction = "FailJobSet"
	// RestartJobSet recreates every child Job, counting toward maxRestarts
	// (and failing the JobSet when the budget is spent).
	RestartJobSet FailurePolicyAction = "RestartJobSet"
	// RestartJobSetAndIgnoreMaxRestarts recreates every child Job without
	// counting toward maxRestarts.
	RestartJobSetAndIgnoreMaxRestarts FailurePolicyAction = "RestartJobSetAndIgnoreMaxRestarts"
	// RestartJob recreates only the failed Job, leaving the others running,
	// counting toward maxRestarts (and failing the JobSet when the budget
	// is spent): status.replicatedJobsStatus[].jobRestarts and
	// jobRestartsCountTowardsMax count it at the Job's index. Needs the
	// RestartJob feature gate; every replicatedJob has at most 1024
	// replicas; with InPlaceRestart, the rule must target only
	// replicatedJobs outside the in-place group.
	RestartJob FailurePolicyAction = "RestartJob"
	// RestartJobAndIgnoreMaxRestarts is RestartJob without counting toward
	// maxRestarts.
	RestartJobAndIgnoreMaxRestarts FailurePolicyAction = "RestartJobAndIgnoreMaxRestarts"
)

// MaxReplicasWithRestartJob bounds the replicas of every replicatedJob of a
// JobSet with a RestartJob or RestartJobAndIgnoreMaxRestarts rule: the
// per-Job counters of status.replicatedJobsStatus hold one item per Job,
// and at most this many.
const MaxReplicasWithRestartJob = 1024

// RestartsOneJob reports whether the action recreates only the failed Job.
func (a FailurePolicyAction) RestartsOneJob() bool {
	return a == RestartJob || a == RestartJobAndIgnoreMaxRestarts
}

// FailurePolicyRule matches a failed child Job by its failure reason, its
// failure message and its replicatedJob. All given requirements must match.
type FailurePolicyRule struct {
	// name of the rule; defaults to failurePolicyRule<index>.
	//
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`
	Name string `json:"name"`

	// action taken when the rule matches.
	//
	// +kubebuilder:validation:Enum=FailJobSet;RestartJobSet;RestartJobSetAndIgnoreMaxRestarts;RestartJob;RestartJobAndIgnoreMaxRestarts
	Action FailurePolicyAction `json:"action"`

	// onJobFailureReasons matches the reason of the Job's Failed condition;
	// empty matches any reason.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:items:Enum=BackoffLimitExceeded;DeadlineExceeded;FailedIndexes;MaxFailedIndexesExceeded;PodFailurePolicy
	OnJobFailureReasons []string `json:"onJobFailureReasons,omitempty"`

	// onJobFailureMessagePatterns are RE2 regular expressions matched
	// against the message of the Job's Failed condition; empty matches any
	// message.
	//
	// +optional
	// +listType=atomic
	OnJobFailureMessagePatterns []string `json:"onJobFailureMessagePatterns,omitempty"`

	// targetReplicatedJobs limits the rule to these replicatedJobs; empty
	// means all of them.
	//
	// +optional
	// +listType=atomic
	TargetReplicatedJobs []string `json:"targetReplicatedJobs,omitempty"`
}

// StartupPolicyOptions is the start order of the replicatedJobs.
type StartupPolicyOptions string

const (
	// AnyOrder starts every replicatedJob at once.
	AnyOrder StartupPolicyOptions = "AnyOrder"
	// InOrder starts each replicatedJob only when the previous one is ready.
	InOrder StartupPolicyOptions = "InOrder"
)

// StartupPolicy says in which order the replicatedJobs start.
type StartupPolicy struct {
	// startupPolicyOrder: AnyOrder or InOrder.
	//
	// +kubebuilder:validation:Enum=AnyOrder;InOrder
	StartupPolicyOrder StartupPolicyOptions `json:"startupPolicyOrder"`
}

// Coordinator names the Pod that coordinates the workload.
type Coordinator struct {
	// replicatedJob that holds the coordinator Pod.
	ReplicatedJob string `json:"replicatedJob"`

	// jobIndex of the Job that holds the coordinator Pod.
	//
	// +optional
	JobIndex int `json:"jobIndex,omitempty"`

	// podIndex is the completion index of the coordinator Pod.
	//
	// +optional
	PodIndex int `json:"podIndex,omitempty"`
}

// VolumeClaimPolicy declares PersistentVolumeClaims shared by the JobSet's
// Pods and what happens to them when the JobSet is deleted.
//
// +kubebuilder:validation:XValidation:rule="self.templates.all(t, !has(t.metadata.__namespace__) || size(t.metadata.__namespace__) == 0)",message="volumeClaimPolicies[].templates[].metadata.namespace must be empty: claims live in the JobSet's namespace"
type VolumeClaimPolicy struct {
	// templates of the shared claims. Each must be mounted by name in some
	// container of some replicatedJob.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	Templates []corev1.PersistentVolumeClaim `json:"templates,omitempty"`

	// retentionPolicy says what happens to the claims when the JobSet is
	// deleted.
	//
	// +optional
	RetentionPolicy *VolumeRetentionPolicy `json:"retentionPolicy,omitempty"`
}

// VolumeRetentionPolicy is the lifecycle of shared claims.
type VolumeRetentionPolicy struct {
	// whenDeleted: Delete (default) or Retain.
	//
	// +optional
	// +kubebuilder:default=Delete
	WhenDeleted *RetentionPolicyType `json:"whenDeleted,omitempty"`
}

// RetentionPolicyType says whether shared claims outlive the JobSet.
//
// +kubebuilder:validation:Enum=Delete;Retain
type RetentionPolicyType string

const (
	// RetentionPolicyDelete deletes the claims with the JobSet.
	RetentionPolicyDelete RetentionPolicyType = "Delete"
	// RetentionPolicyRetain keeps the claims after the JobSet is deleted.
	RetentionPolicyRetain RetentionPolicyType = "Retain"
)

// JobSetStatus is the observed state of a JobSet.
//
// +kubebuilder:validation:XValidation:rule="(has(self.deprecatedEpoch) ? self.deprecatedEpoch : 0) <= (has(self.syncedEpoch) ? self.syncedEpoch : 0)",message="status.deprecatedEpoch must not exceed status.syncedEpoch"
type JobSetStatus struct {
	// conditions of the JobSet: Completed, Failed, Suspended,
	// StartupPolicyInProgress, StartupPolicyCompleted, InPlaceRestarting,
	// InvalidEpoch.
	//
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchMergeKey=type
	// +patchStrategy=merge
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// restarts counts full restarts: each time every child Job was recreated.
	//
	// +optional
	Restarts int32 `json:"restarts"`

	// restartsCountTowardsMax counts the full restarts that count toward
	// spec.failurePolicy.maxRestarts.
	//
	// +optional
	RestartsCountTowardsMax int32 `json:"restartsCountTowardsMax,omitempty"`

	// executionAttempts counts the JobSet's executions, under the
	// ExecutionAttemptsTracking feature gate: 0 for the first, one more
	// for each full restart and each resume from suspension (an in-place
	// group restart is not a new execution). Absent until the JobSet first
	// runs, and while the gate is off. Child Jobs and their Pods carry it
	// in the annotation jobset.sigs.k8s.io/execution-attempt.
	//
	// +optional
	ExecutionAttempts *int32 `json:"executionAttempts,omitempty"`

	// startTime is when the JobSet's current execution started: its first
	// run, its last full restart, or its last resume from suspension. It
	// is absent while the JobSet is suspended, and while the
	// JobSetActiveDeadlineSeconds feature gate is off; an in-place group
	// restart leaves it. spec.activeDeadlineSeconds counts from it.
	//
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// terminalState is Completed or Failed once the JobSet finished.
	//
	// +optional
	TerminalState string `json:"terminalState,omitempty"`

	// replicatedJobsStatus counts the child Jobs of each replicatedJob by
	// state.
	//
	// +optional
	// +listType=map
	// +listMapKey=name
	// +patchMergeKey=name
	// +patchStrategy=merge
	ReplicatedJobsStatus []ReplicatedJobStatus `json:"replicatedJobsStatus,omitempty" patchStrategy:"merge" patchMergeKey:"name"`

	// deprecatedEpoch (KEP-467) is the highest epoch that must restart: an
	// agent whose Pod is at this epoch or below restarts its Pod in place.
	// Absent means 0. Only ever increases, and never exceeds syncedEpoch.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self >= oldSelf",message="status.deprecatedEpoch must not decrease"
	DeprecatedEpoch *int32 `json:"deprecatedEpoch,omitempty"`

	// inPlaceRestarts counts the group restarts done in place (restart
	// strategy InPlaceRestart), each counted when it starts. Together with
	// restartsCountTowardsMax it is what spec.failurePolicy.maxRestarts
	// limits. (The KEP derives this count from the epochs, but epochs also
	// move when Pods are recreated by a full restart or a resume.)
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	InPlaceRestarts int32 `json:"inPlaceRestarts,omitempty"`

	// fencedInPlaceRestarts counts the group restarts done in place that
	// nothing but fences caused: agents out of contact with the API server
	// that stopped their workers (an outage with no peer on another node to
	// vouch for them, or past their defer limit). They are the platform's
	// doing: not in inPlaceRestarts, not counted against
	// spec.failurePolicy.maxRestarts, and no Pod is blamed for failing in
	// place.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	FencedInPlaceRestarts int32 `json:"fencedInPlaceRestarts,omitempty"`

	// syncedEpoch (KEP-467) is the epoch every live Pod has joined: an agent
	// at this epoch lifts its barrier and lets the worker start. Absent
	// means 0. Only ever increases.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self >= oldSelf",message="status.syncedEpoch must not decrease"
	SyncedEpoch *int32 `json:"syncedEpoch,omitempty"`

	// inPlaceGroups holds the epochs of the JobSet's named in-place groups
	// (the annotation alpha.jobset.sigs.k8s.io/in-place-group on a
	// replicatedJob's Job template): each group restarts in place on its
	// own. syncedEpoch, deprecatedEpoch and the JobSet's InPlaceRestarting
	// condition are the default group's: the replicatedJobs whose Pods run
	// the agent and name no group. inPlaceRestarts and
	// fencedInPlaceRestarts above count every group's restarts: the
	// restart budget is the JobSet's.
	//
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="oldSelf.all(o, self.exists(n, n.name == o.name))",message="status.inPlaceGroups: a group's entry must not be removed (its epochs only increase)"
	InPlaceGroups []InPlaceGroupStatus `json:"inPlaceGroups,omitempty"`
}

// InPlaceGroupStatus is the epoch protocol's state of one named in-place
// group: the same fields, with the same rules, as the default group's at
// the top of the status.
//
// +kubebuilder:validation:XValidation:rule="(has(self.deprecatedEpoch) ? self.deprecatedEpoch : 0) <= (has(self.syncedEpoch) ? self.syncedEpoch : 0)",message="status.inPlaceGroups[].deprecatedEpoch must not exceed its syncedEpoch"
type InPlaceGroupStatus struct {
	// name of the group, as the replicatedJobs' annotation
	// alpha.jobset.sigs.k8s.io/in-place-group gives it.
	//
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// syncedEpoch is the epoch every live Pod of the group has joined.
	// Absent means 0. Only ever increases.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self >= oldSelf",message="status.inPlaceGroups[].syncedEpoch must not decrease"
	SyncedEpoch *int32 `json:"syncedEpoch,omitempty"`

	// deprecatedEpoch is the highest epoch of the group that must restart.
	// Absent means 0. Only ever increases, and never exceeds syncedEpoch.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self >= oldSelf",message="status.inPlaceGroups[].deprecatedEpoch must not decrease"
	DeprecatedEpoch *int32 `json:"deprecatedEpoch,omitempty"`

	// inPlaceRestarts counts the group's own restarts in place that count
	// against spec.failurePolicy.maxRestarts (each is in the JobSet's
	// inPlaceRestarts too).
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	InPlaceRestarts int32 `json:"inPlaceRestarts,omitempty"`

	// fencedInPlaceRestarts counts the group's restarts in place that
	// nothing but fences caused (each is in the JobSet's
	// fencedInPlaceRestarts too).
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	FencedInPlaceRestarts int32 `json:"fencedInPlaceRestarts,omitempty"`

	// conditions of the group: InPlaceRestarting, InvalidEpoch and
	// GatherStalled, as the JobSet's are for the default group.
	//
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ReplicatedJobStatus counts the child Jobs of one replicatedJob by state.
type ReplicatedJobStatus struct {
	// name of the replicatedJob.
	Name string `json:"name"`

	// ready counts Jobs whose ready plus succeeded Pods reach the Job's
	// expected Pod count.
	Ready int32 `json:"ready"`

	// succeeded counts completed Jobs.
	Succeeded int32 `json:"succeeded"`

	// failed counts failed Jobs.
	Failed int32 `json:"failed"`

	// active counts Jobs with at least one pending or running Pod.
	Active int32 `json:"active"`

	// suspended counts suspended Jobs.
	Suspended int32 `json:"suspended"`

	// jobRestarts counts, per Job index, the times the failure policy
	// recreated that Job alone (RestartJob or
	// RestartJobAndIgnoreMaxRestarts). Absent until the first.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	JobRestarts []int32 `json:"jobRestarts,omitempty"`

	// jobRestartsCountTowardsMax counts, per Job index, the restarts of
	// that Job alone that count toward spec.failurePolicy.maxRestarts
	// (RestartJob). Absent until the first.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	JobRestartsCountTowardsMax []int32 `json:"jobRestartsCountTowardsMax,omitempty"`
}
