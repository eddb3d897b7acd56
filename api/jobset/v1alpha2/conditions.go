package v1alpha2

// JobSetConditionType is the type of a condition in status.conditions.
type JobSetConditionType string

// Condition types of a JobSet.
const (
	// JobSetCompleted is True once the success policy is met.
	JobSetCompleted JobSetConditionType = "Completed"
	// JobSetFailed is True once the failure policy gave up.
	JobSetFailed JobSetConditionType = "Failed"
	// JobSetSuspended is True while spec.suspend is true.
	JobSetSuspended JobSetConditionType = "Suspended"
	// JobSetStartupPolicyInProgress is True while an InOrder startup policy
	// is still creating replicatedJobs.
	JobSetStartupPolicyInProgress JobSetConditionType = "StartupPolicyInProgress"
	// JobSetStartupPolicyCompleted is True once every replicatedJob of an
	// InOrder startup policy is ready.
	JobSetStartupPolicyCompleted JobSetConditionType = "StartupPolicyCompleted"
	// JobSetRestarting is True while a full restart is under way: Jobs of
	// an earlier restart attempt are being deleted or their replacements
	// are not all created yet.
	JobSetRestarting JobSetConditionType = "Restarting"
	// JobSetInPlaceRestarting is True while the Pods of an InPlaceRestart
	// JobSet are out of sync, that is between the first sign of a failure
	// and the moment every live Pod has joined the new epoch.
	JobSetInPlaceRestarting JobSetConditionType = "InPlaceRestarting"
	// JobSetInvalidEpoch is True while some live Pod reports an epoch that
	// no agent could have written; its message names the Pod.
	JobSetInvalidEpoch JobSetConditionType = "InvalidEpoch"
)

// Condition reasons. They are also the reasons of the matching events.
const (
	// ReasonStartupPolicyInProgress: an InOrder startup is creating the
	// replicatedJobs one after the other.
	ReasonStartupPolicyInProgress = "StartupPolicyInProgress"
	// ReasonStartupPolicyCompleted: every replicatedJob of an InOrder
	// startup has started.
	ReasonStartupPolicyCompleted = "StartupPolicyCompleted"
	// ReasonAllJobsCompleted: every child Job the success policy looks at
	// completed.
	ReasonAllJobsCompleted = "AllJobsCompleted"
	// ReasonFailedJobs: a child Job failed and the failure policy fails the
	// JobSet.
	ReasonFailedJobs = "FailedJobs"
	// ReasonReachedMaxRestarts: the restart budget of spec.failurePolicy
	// .maxRestarts is spent.
	ReasonReachedMaxRestarts = "ReachedMaxRestarts"
	// ReasonFailJobSetAction: a failure policy rule with action FailJobSet
	// matched.
	ReasonFailJobSetAction = "FailJobSetActionTaken"
	// ReasonSuspended and ReasonResumed mark spec.suspend transitions.
	ReasonSuspended = "SuspendedJobs"
	ReasonResumed   = "ResumeJobs"
	// ReasonRecreatingJobs and ReasonJobsRecreated mark the Restarting
	// condition of a full restart.
	ReasonRecreatingJobs = "RecreatingJobs"
	ReasonJobsRecreated  = "JobsRecreated"
	// ReasonInPlaceRestartStarted: a Pod left the synced epoch.
	ReasonInPlaceRestartStarted = "InPlaceRestartStarted"
	// ReasonInPlaceRestartCompleted: every live Pod joined the new epoch.
	ReasonInPlaceRestartCompleted = "InPlaceRestartCompleted"
	// ReasonEpochSynced: every live Pod joined a new epoch, outside a group
	// restart (first run, after a full restart or a resume).
	ReasonEpochSynced = "EpochSynced"
	// ReasonPodsRecreated: a full restart or a suspension recreates every
	// Pod; the new Pods gather at the next epoch without a group restart.
	ReasonPodsRecreated = "PodsRecreated"
	// ReasonEpochsValid: no live Pod reports an invalid epoch any more.
	ReasonEpochsValid = "EpochsValid"
	// ReasonInvalidEpoch: a Pod's epoch annotation is not one an agent writes.
	ReasonInvalidEpoch = "InvalidEpoch"
)
