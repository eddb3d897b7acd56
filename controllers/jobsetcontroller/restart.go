package jobsetcontroller

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// decisionKind is the state the restart machine moves the JobSet to.
type decisionKind int

const (
	// keepRunning: nothing finished or failed; keep the children converged.
	keepRunning decisionKind = iota
	// completeJobSet: the success policy is met.
	completeJobSet
	// failJobSet: the failure policy gives up.
	failJobSet
	// restartJobSet: recreate every child Job (status.restarts + 1).
	restartJobSet
	// restartOneJob: recreate only the failed Job (its entry of
	// jobRestarts + 1); the rest keep running, converged.
	restartOneJob
)

func (k decisionKind) String() string {
	return [...]string{"KeepRunning", "Complete", "Fail", "Restart", "RestartJob"}[k]
}

// keepsRunning: the JobSet runs on, its children converged (a restart of
// one Job leaves the others running).
func (k decisionKind) keepsRunning() bool {
	return k == keepRunning || k == restartOneJob
}

// decision is what the policies decided for one reconcile. Policies are pure
// functions returning one; the reconciler applies it.
type decision struct {
	kind decisionKind
	// reason and message go into the condition (complete, fail) or the
	// event (restart) that records the decision.
	reason  string
	message string
	// countsTowardMax: a restart that uses one of failurePolicy.maxRestarts.
	countsTowardMax bool
	// replicatedJob and jobIndex: the Job a restartOneJob recreates.
	replicatedJob string
	jobIndex      int
	// conditionReason and conditionMessage: community JobSet's wording of
	// the condition, when it differs from reason and message
	// (community_conditions.go).
	conditionReason, conditionMessage string
}

func failDecision(reason, format string, args ...any) decision {
	return decision{kind: failJobSet, reason: reason, message: fmt.Sprintf(format, args...)}
}

func restartDecision(countsTowardMax bool, format string, args ...any) decision {
	return decision{kind: restartJobSet, reason: ReasonRestarting, message: fmt.Sprintf(format, args...), countsTowardMax: countsTowardMax}
}

// ReasonRestarting is the event reason of a full restart.
const ReasonRestarting = "Restarting"

// policyDecision runs the policies in order: a failed Job goes to the
// failure policy first (a JobSet whose Job failed is not complete), then
// the success policy.
func policyDecision(js *jobset.JobSet, children childJobs, restartJobGate bool) decision {
	if d := failurePolicyDecision(js, children.failed, restartJobGate); d.kind != keepRunning {
		return withCommunityWording(js, children.failed, d)
	}
	if successPolicyMet(js, children.successful) {
		return decision{kind: completeJobSet, reason: jobset.ReasonAllJobsCompleted, message: "the success policy is met"}
	}
	return decision{kind: keepRunning}
}

// lostIndexDecision answers a lost index with a full restart, which
// recreates the Jobs and so the index. It counts toward maxRestarts when a
// synced group lost a member, once: when it escalates the group restart
// that the Pod's deletion started, that one already counted. A Pod lost
// while the group gathered (its first run, or after a full restart or a
// resume) is, as any failure then, not counted; nor is one that a
// suspension stopped (a preemption, not a failure): the new Jobs are
// created suspended, and the resume starts every index.
func lostIndexDecision(js *jobset.JobSet, g inplace.InPlaceGroup, lost string) decision {
	const action = "a full restart recreates all Jobs and so the index"
	if ptr.Deref(js.Spec.Suspend, false) {
		return restartDecision(false, "%s; %s (not counted: the JobSet is suspended, which stopped the worker)", lost, action)
	}
	lost = g.Describe() + lost
	if g.Synced == 0 || g.Regathering() {
		return restartDecision(false, "%s; %s (not counted: the group had not synced)", lost, action)
	}
	return countedRestart(js, lost, action)
}

// childrenPlan is the create and delete work that converges the child Jobs
// on the current restart attempt.
type childrenPlan struct {
	// create holds the Jobs of the current attempt that can be created now.
	create []*batchv1.Job
	// delete holds the Jobs of earlier attempts.
	delete []*batchv1.Job
	// blocked counts Jobs of the current attempt that must wait for an
	// older Job to go away first.
	blocked int
	// waiting counts Jobs held back by the startup policy or dependsOn.
	waiting int
	// inOrderPending: an InOrder startup has replicatedJobs still to start.
	inOrderPending bool
	// olderAttempt counts the Jobs of earlier restart attempts left,
	// deleted or not.
	olderAttempt int
	// rescale maps active Jobs to copies with the parallelism and
	// completions their replicatedJob changed to (ElasticJobSet; elastic.go).
	rescale map[*batchv1.Job]*batchv1.Job
	// executionAttempt is what the Jobs created and resumed carry
	// (ExecutionAttemptsTracking; nil when off).
	executionAttempt *int32
}

// planChildren decides which Jobs to delete and create. A new Job reuses its
// predecessor's name, so it waits until that name is free. Recreate creates
// each Job as soon as its own predecessor is gone; BlockingRecreate creates
// none until every Job of earlier attempts is gone. The startup policy and
// dependsOn hold back the Jobs of replicatedJobs whose turn has not come,
// judged by status (replicatedJobsStatus of the same children). The Jobs
// created carry executionAttempt, unless it is nil.
func planChildren(js *jobset.JobSet, children childJobs, status []jobset.ReplicatedJobStatus, restartJobGate bool, executionAttempt *int32) childrenPlan {
	plan := childrenPlan{delete: children.previous, executionAttempt: executionAttempt}
	for _, job := range slices.Concat(children.previous, children.deleting) {
		if restartAttempt(job) < js.Status.Restarts {
			plan.olderAttempt++
		}
	}
	current := map[string]bool{}
	for _, job := range children.current() {
		current[job.Name] = true
	}
	taken := children.names()
	blocking := jobset.RestartStrategyOf(js) == jobset.BlockingRecreate && len(children.previous)+len(children.deleting) > 0
	allowed, inOrderPending := startupGate(js, status)
	plan.inOrderPending = inOrderPending

	for _, at := range desiredJobs(js) {
		name := JobName(js.Name, at.replicatedJob.Name, at.index)
		switch {
		case current[name]:
		case !allowed[at.replicatedJob.Name]:
			plan.waiting++
		case blocking || taken[name]:
			plan.blocked++
		default:
			if restartJobGate {
				at.generation = ptr.To(jobGeneration(js, at.replicatedJob.Name, at.index))
			}
			at.executionAttempt = executionAttempt
			plan.create = append(plan.create, constructJob(js, at))
		}
	}
	return plan
}

// restarting reports whether a full restart is still under way: Jobs of an
// earlier attempt remain, or, while its Restarting condition stands, Jobs
// of the current one are not all created. A Job missing from the current
// attempt once that restart was over (a Job that RestartJob recreates
// alone) starts no full restart.
func (p childrenPlan) restarting(js *jobset.JobSet) bool {
	if js.Status.Restarts == 0 {
		return false
	}
	if p.olderAttempt > 0 {
		return true
	}
	return meta.IsStatusConditionTrue(js.Status.Conditions, string(jobset.JobSetRestarting)) &&
		(len(p.delete) > 0 || p.blocked > 0 || p.waiting > 0 || len(p.create) > 0)
}
