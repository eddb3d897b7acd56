package jobsetwebhook

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fastjobset/jobset/api/features"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// validateOneJobRestarts checks the failure policy rules that recreate
// only the failed Job (RestartJob, RestartJobAndIgnoreMaxRestarts): they
// need the RestartJob feature gate; every replicatedJob then has at most
// jobset.MaxReplicasWithRestartJob replicas, as the per-Job counters hold
// one item per Job; and with InPlaceRestart such a rule must target only
// replicatedJobs outside the in-place group. A group member's Job
// recreated alone would take its Pods out of the group while the others
// run on: the group would gather and sync without them, short. Group
// members restart together, in place or by RestartJobSet.
func validateOneJobRestarts(js *jobset.JobSet, gates features.Gates) field.ErrorList {
	var errs field.ErrorList
	rulesPath := field.NewPath("spec", "failurePolicy", "rules")
	first := ""
	for i, rule := range js.Spec.FailurePolicy.Rules {
		if !rule.Action.RestartsOneJob() {
			continue
		}
		rulePath := rulesPath.Index(i)
		if !gates.Enabled(features.RestartJob) {
			errs = append(errs, field.Forbidden(rulePath.Child("action"), fmt.Sprintf(
				"%s needs the RestartJob feature gate: start the webhook and the controller with --feature-gates=RestartJob=true, or use %s",
				rule.Action, wholeJobSetAction(rule.Action))))
			continue
		}
		if first == "" {
			first = rule.Name
		}
		if jobset.RestartStrategyOf(js) == jobset.InPlaceRestart {
			errs = append(errs, validateOutsideGroup(js, rule, rulePath)...)
		}
	}
	if first == "" {
		return errs
	}
	for i, rj := range js.Spec.ReplicatedJobs {
		if rj.Replicas > jobset.MaxReplicasWithRestartJob {
			errs = append(errs, field.Invalid(field.NewPath("spec", "replicatedJobs").Index(i).Child("replicas"), rj.Replicas, fmt.Sprintf(
				"at most %d with failure policy rule %q, which restarts one Job at a time (status.replicatedJobsStatus[].jobRestarts holds one count per Job): lower the replicas, or use RestartJobSet",
				jobset.MaxReplicasWithRestartJob, first)))
		}
	}
	return errs
}

// validateOutsideGroup: a rule that recreates one Job of an InPlaceRestart
// JobSet names its targets, none of them in the in-place group.
func validateOutsideGroup(js *jobset.JobSet, rule jobset.FailurePolicyRule, rulePath *field.Path) field.ErrorList {
	members := groupMembers(js)
	if len(rule.TargetReplicatedJobs) == 0 {
		if members.Len() == 0 {
			return nil
		}
		return field.ErrorList{field.Required(rulePath.Child("targetReplicatedJobs"), fmt.Sprintf(
			"with restartStrategy InPlaceRestart, a %s rule must list its targetReplicatedJobs, none of them in the in-place group (%s, whose Pods run the agent): "+
				"a group member's Job recreated alone would leave the group short; group members restart together (use %s for them)",
			rule.Action, strings.Join(sets.List(members), ", "), wholeJobSetAction(rule.Action)))}
	}
	var errs field.ErrorList
	for j, target := range rule.TargetReplicatedJobs {
		if members.Has(target) {
			errs = append(errs, field.Invalid(rulePath.Child("targetReplicatedJobs").Index(j), target, fmt.Sprintf(
				"replicatedJob %s is in the in-place group (its Pods run the agent), whose members restart together: a %s of one of its Jobs would leave the group short; target only replicatedJobs outside the group, or use %s",
				target, rule.Action, wholeJobSetAction(rule.Action))))
		}
	}
	return errs
}

// wholeJobSetAction is the action that restarts every Job with the same
// counting as a per-Job action.
func wholeJobSetAction(a jobset.FailurePolicyAction) jobset.FailurePolicyAction {
	if a == jobset.RestartJobAndIgnoreMaxRestarts {
		return jobset.RestartJobSetAndIgnoreMaxRestarts
	}
	return jobset.RestartJobSet
}
