package jobsetcontroller

import (
	"fmt"
	"regexp"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// failurePolicyDecision applies spec.failurePolicy to the failed Jobs of the
// current attempt. The first Job to fail decides; its first matching rule
// gives the action, RestartJobSet when none matches. Without a failure
// policy, any failed Job fails the JobSet.
func failurePolicyDecision(js *jobset.JobSet, failed []*batchv1.Job) decision {
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
	if rule := firstMatchingRule(policy.Rules, first); rule != nil {
		action, ruleName = rule.Action, rule.Name
	}
	switch action {
	case jobset.FailJobSet:
		return failDecision(jobset.ReasonFailJobSetAction, "%s; failure policy rule %q fails the JobSet", why, ruleName)
	case jobset.RestartJobSetAndIgnoreMaxRestarts:
		return restartDecision(false, "%s; %s recreates all Jobs (not counted toward maxRestarts)", why, describeRule(ruleName))
	default:
		// The Job failed while an in-place group restart was under way: its
		// Pods were the ones that restart, and the group restart already
		// counted. One failure, one unit.
		if inplace.RestartInProgress(ptr.Deref(js.Status.SyncedEpoch, 0), ptr.Deref(js.Status.DeprecatedEpoch, 0)) &&
			jobset.RestartStrategyOf(js) == jobset.InPlaceRestart {
			return restartDecision(false, "%s; %s recreates all Jobs (the in-place group restart in progress becomes a full restart; it counts once)",
				why, describeRule(ruleName))
		}
		if used := restartsUsed(js); used >= policy.MaxRestarts {
			return failDecision(jobset.ReasonReachedMaxRestarts, "%s, and the JobSet has used all %d restarts of failurePolicy.maxRestarts (%d full, %d in place)",
				why, policy.MaxRestarts, js.Status.RestartsCountTowardsMax, js.Status.InPlaceRestarts)
		}
		return restartDecision(true, "%s; %s recreates all Jobs (restart %d of %d)", why, describeRule(ruleName),
			restartsUsed(js)+1, policy.MaxRestarts)
	}
}

func describeRule(name string) string {
	if name == "" {
		return "no failure policy rule matched, so the default action RestartJobSet"
	}
	return fmt.Sprintf("failure policy rule %q", name)
}

func jobFailureDescription(job *batchv1.Job) string {
	c := jobFailure(job)
	return fmt.Sprintf("Job %s failed (reason %s: %s)", job.Name, c.Reason, c.Message)
}

// firstMatchingRule returns the first rule whose every requirement the failed
// Job meets: its replicatedJob, its failure reason and its failure message.
func firstMatchingRule(rules []jobset.FailurePolicyRule, job *batchv1.Job) *jobset.FailurePolicyRule {
	failure := jobFailure(job)
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
