package jobsetcontroller

import (
	"fmt"
	"regexp"
	"slices"

	batchv1 "k8s.io/api/batch/v1"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// failurePolicyDecision applies spec.failurePolicy to the failed Jobs of the
// current attempt. The first Job to fail decides; its first matching rule
// gives the action, RestartJobSet when none matches. Without a failure
// policy, any failed Job fails the JobSet. RestartJob and
// RestartJobAndIgnoreMaxRestarts recreate the failed Job alone under the
// RestartJob feature gate (restart_job.go).
func failurePolicyDecision(js *jobset.JobSet, failed []*batchv1.Job, restartJobGate bool) decision {
	if len(failed) == 0 {
		return decision{}
	}
	first := slices.MinFunc(failed, func(a, b *batchv1.Job) int {
		return failureTime(a).Compare(failureTime(b).Time)
	})
	why := jobFailureDescription(first)

	policy := js.Spec.FailurePolicy
	if policy == nil {
		return failDecision(jobset.ReasonFailedJobs, "%s, and the JobSet has no failurePolicy", why)
	}

	action, ruleName := jobset.RestartJobSet, ""
	rule := firstMatchingRule(policy.Rules, first)
	if rule != nil {
		action, ruleName = rule.Action, rule.Name
	}
	switch action {
	case jobset.RestartJob, jobset.RestartJobAndIgnoreMaxRestarts:
		return oneJobRestart(js, first, rule, why, restartJobGate)
	case jobset.FailJobSet:
		return failDecision(jobset.ReasonFailJobSetAction, "%s; failure policy rule %q fails the JobSet", why, ruleName)
	case jobset.RestartJobSetAndIgnoreMaxRestarts:
		return restartDecision(false, "%s; %s recreates all Jobs (not counted toward maxRestarts)", why, describeRule(ruleName))
	default:
		return countedRestart(js, why, describeRule(ruleName)+" recreates all Jobs")
	}
}

// countedRestart answers a failure with a full restart that counts toward
// maxRestarts, or fails the JobSet when none is left. A full restart is
// one recovery, whatever it answers: during a group restart in place, of
// any in-place group, it escalates that restart, which counted already
// (the Job may have failed because its Pods were the ones restarting),
// and does not count again; any other group's failure it cuts short is
// answered by it too. So what it costs does not depend on which of the
// failures a reconcile saw first.
func countedRestart(js *jobset.JobSet, why, action string) decision {
	if jobset.RestartStrategyOf(js) == jobset.InPlaceRestart && inplace.AnyRestartInProgress(js) {
		return restartDecision(false, "%s; %s (the in-place group restart in progress becomes a full restart; it counts once)", why, action)
	}
	maxRestarts := int32(0)
	if js.Spec.FailurePolicy != nil {
		maxRestarts = js.Spec.FailurePolicy.MaxRestarts
	}
	if used := inplace.RestartsUsed(js); used >= maxRestarts {
		return failDecision(jobset.ReasonReachedMaxRestarts, "%s, and the JobSet has used all %d restarts of failurePolicy.maxRestarts (%d full, %d of one Job, %d in place)",
			why, maxRestarts, js.Status.RestartsCountTowardsMax, inplace.OneJobRestartsCounted(js), js.Status.InPlaceRestarts)
	}
	return restartDecision(true, "%s; %s (restart %d of %d)", why, action, inplace.RestartsUsed(js)+1, maxRestarts)
}

func describeRule(name string) string {
	if name == "" {
		return "no failure policy rule matched, so the default action RestartJobSet"
	}
	return fmt.Sprintf("failure policy rule %q", name)
}

func jobFailureDescription(job *batchv1.Job) string {
	c := inplace.JobFailure(job)
	return fmt.Sprintf("Job %s failed (reason %s: %s)", job.Name, c.Reason, c.Message)
}

// firstMatchingRule returns the first rule whose every requirement the failed
// Job meets: its replicatedJob, its failure reason and its failure message.
func firstMatchingRule(rules []jobset.FailurePolicyRule, job *batchv1.Job) *jobset.FailurePolicyRule {
	failure := inplace.JobFailure(job)
	for i := range rules {
		rule := &rules[i]
		if len(rule.TargetReplicatedJobs) > 0 && !slices.Contains(rule.TargetReplicatedJobs, job.Labels[jobset.ReplicatedJobNameKey]) {
			continue
		}
		if len(rule.OnJobFailureReasons) > 0 && !slices.Contains(rule.OnJobFailureReasons, failure.Reason) {
			continue
		}
		if len(rule.OnJobFailureMessagePatterns) > 0 && !anyPatternMatches(rule.OnJobFailureMessagePatterns, failure.Message) {
			continue
		}
		return rule
	}
	return nil
}

// anyPatternMatches skips patterns that do not compile: validation rejects
// them at admission, so one here predates the webhook and must not match.
func anyPatternMatches(patterns []string, message string) bool {
	for _, p := range patterns {
		if re, err := regexp.Compile(p); err == nil && re.MatchString(message) {
			return true
		}
	}
	return false
}
