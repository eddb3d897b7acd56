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
	// are not all created yet. Ours; community JobSet's counterpart is
	// JobSetRestartingJobSet.
	JobSetRestarting JobSetConditionType = "Restarting"
	// JobSetRestartingJobSet is community JobSet's restart condition: True
	// from the failure policy's decision to recreate every Job until every
	// Job of the new attempt is ready; False (and only once it was True)
	// when the JobSet completes, fails or is suspended.
	JobSetRestartingJobSet JobSetConditionType = "RestartingJobSet"
	// JobSetInPlaceRestarting is True while the Pods of an InPlaceRestart
	// JobSet are out of sync, that is between the first sign of a failure
	// and the moment every live Pod has joined the new epoch.
	JobSetInPlaceRestarting JobSetConditionType = "InPlaceRestarting"
	// JobSetInvalidEpoch is True while some live Pod reports an epoch that
	// no agent could have written; its message names the Pod.
	JobSetInvalidEpoch JobSetConditionType = "InvalidEpoch"
	// JobSetGatherStalled is True while the Pods of an InPlaceRestart
	// JobSet have been gathering at the next epoch for longer than the
	// controller's --gather-stall-threshold; its message names the Pods that
	// have not joined and why (their agents' or their own state).
	JobSetGatherStalled JobSetConditionType = "GatherStalled"
	// JobSetKeptOffNodes is True while a Pod of the JobSet cannot be
	// scheduled and is kept off the nodes where Pods of its index (or of
	// its exclusively placed Job) failed in place again and again; its
	// message names the Pods, the nodes and the scheduler's reason.
	JobSetKeptOffNodes JobSetConditionType = "KeptOffNodes"
)

// Condition reasons. They are also the reasons of the matching events.
const (
	// ReasonStartupPolicyInProgress: an InOrder startup is creating the
	// replicatedJobs one after the other. The StartupPolicyInProgress
	// condition keeps it when it turns False, as in community JobSet.
	ReasonStartupPolicyInProgress = "InOrderStartupPolicyInProgress"
	// ReasonStartupPolicyCompleted: every replicatedJob of an InOrder
	// startup has started.
	ReasonStartupPolicyCompleted = "InOrderStartupPolicyCompleted"
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
	ReasonFailJobSetAction = "FailJobSetFailurePolicyAction"
	// ReasonDeadlineExceeded: the JobSet was active longer than
	// spec.activeDeadlineSeconds, as batch/v1 Jobs name it.
	ReasonDeadlineExceeded = "DeadlineExceeded"
	// ReasonRestartJobAction and ReasonRestartJobAndIgnoreMaxRestartsAction
	// are the event reasons of a failure policy rule that recreates only
	// the failed Job, as community JobSet names them.
	ReasonRestartJobAction                     = "RestartJobFailurePolicyAction"
	ReasonRestartJobAndIgnoreMaxRestartsAction = "RestartJobAndIgnoreMaxRestartsFailurePolicyAction"
	// ReasonSuspended and ReasonResumed mark spec.suspend transitions.
	ReasonSuspended = "SuspendedJobs"
	ReasonResumed   = "ResumeJobs"
	// ReasonRecreatingJobs and ReasonJobsRecreated mark the Restarting
	// condition of a full restart.
	ReasonRecreatingJobs = "RecreatingJobs"
	ReasonJobsRecreated  = "JobsRecreated"
	// ReasonDefaultFailurePolicy: RestartingJobSet is True because no
	// failure policy rule matched and the default action, RestartJobSet,
	// applies. A rule that matched gives the reason
	// ReasonFailurePolicyRulePrefix + its name.
	ReasonDefaultFailurePolicy    = "DefaultFailurePolicy"
	ReasonFailurePolicyRulePrefix = "FailurePolicy_"
	// Reasons of RestartingJobSet False: every Job of the new attempt is
	// ready, or the JobSet failed, completed or was suspended.
	ReasonJobsReady       = "JobsReady"
	ReasonJobSetFailed    = "JobSetFailed"
	ReasonJobSetCompleted = "JobSetCompleted"
	ReasonJobSetSuspended = "JobSetSuspended"
	// ReasonInPlaceRestartStarted: a Pod left the synced epoch.
	ReasonInPlaceRestartStarted = "InPlaceRestartStarted"
	// ReasonFencedRestartStarted: a group restart in place started whose
	// only cause is Pods whose agents fenced; not counted toward
	// maxRestarts.
	ReasonFencedRestartStarted = "FencedRestartStarted"
	// ReasonHang: a group restart in place started because a member's
	// worker made no progress within the JobSet's hang timeouts (its
	// agent stopped it); counted toward maxRestarts as any failure.
	ReasonHang = "Hang"
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
	// ReasonPodsNotJoined: GatherStalled is True; ReasonGatherCompleted: the
	// gather it reported ended (the group synced, or the JobSet stopped
	// gathering).
	ReasonPodsNotJoined   = "PodsNotJoined"
	ReasonGatherCompleted = "GatherCompleted"
	// ReasonKeptOffUnschedulable: KeptOffNodes is True;
	// ReasonKeptOffScheduled: every Pod it reported was scheduled, or left.
	ReasonKeptOffUnschedulable = "ReplacementUnschedulable"
	ReasonKeptOffScheduled     = "ReplacementsScheduled"
)

// Condition messages of the conditions community JobSet defines. Clients
// read them (Kueue copies the Completed and Failed messages into its
// Workloads), so they are community JobSet v0.12.0's, word for word; our
// own detail goes into the events that record the same decisions. Failure
// messages that name a Job go through WithFirstFailedJob.
const (
	MessageAllJobsCompleted   = "jobset completed successfully"
	MessageFailedJobs         = "jobset failed due to one or more job failures"
	MessageReachedMaxRestarts = "jobset failed due to reaching max number of restarts"
	MessageFailJobSetAction   = "applying FailJobSet failure policy action"
	MessageRestartJobSet      = "applying RestartJobSet failure policy action"
	// MessageRestartJobSetAndIgnoreMaxRestarts: RestartingJobSet True by a
	// rule with action RestartJobSetAndIgnoreMaxRestarts.
	MessageRestartJobSetAndIgnoreMaxRestarts = "applying RestartJobSetAndIgnoreMaxRestarts failure policy action"
	MessageSuspended                         = "jobset is suspended"
	MessageResumed                           = "jobset is resumed"
	MessageStartupPolicyInProgress           = "in order startup policy is in progress"
	MessageStartupPolicyCompleted            = "in order startup policy has completed"
	MessageJobsReady                         = "all jobs are ready"
	MessageJobSetFailed                      = "jobset failed"
)

// WithFirstFailedJob appends the name of the Job whose failure decided, in
// community JobSet's form.
func WithFirstFailedJob(message, job string) string {
	return message + " (first failed job: " + job + ")"
}
