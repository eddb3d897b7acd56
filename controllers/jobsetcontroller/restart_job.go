package jobsetcontroller

import (
	"fmt"
	"slices"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// The failure policy actions RestartJob and RestartJobAndIgnoreMaxRestarts
// (the RestartJob feature gate) recreate only the failed Job. Each Job
// carries the generation it was created for in the label
// jobset.sigs.k8s.io/job-restart-attempt; the action counts one more in
// status.replicatedJobsStatus[].jobRestarts at the Job's index, which makes
// the Job an older generation: it is deleted, and recreated under its name
// once gone, while every other Job keeps running.
//
// A Job whose Pods are members of the in-place group is never restarted
// alone: its Pods would leave the group, which would then gather without
// them, and a member recreated later would find the others synced at an
// epoch it never joined. The webhook refuses such a rule; a rule that
// matches one anyway (a JobSet admitted before the rule was, or with the
// gate off in the controller) is answered with a full restart, which is
// always safe.

// oneJobRestart answers a failure that a RestartJob or
// RestartJobAndIgnoreMaxRestarts rule matched.
func oneJobRestart(js *jobset.JobSet, failed *batchv1.Job, rule *jobset.FailurePolicyRule, why string, gateOn bool) decision {
	counted := rule.Action == jobset.RestartJob
	fullInstead := func(because string) decision {
		action := fmt.Sprintf("failure policy rule %q (%s) recreates all Jobs instead: %s", rule.Name, rule.Action, because)
		if counted {
			return countedRestart(js, why, action)
		}
		return restartDecision(false, "%s; %s (not counted toward maxRestarts)", why, action)
	}
	if !gateOn {
		return fullInstead("the RestartJob feature gate is off in the controller")
	}
	rjName := failed.Labels[jobset.ReplicatedJobNameKey]
	if jobset.RestartStrategyOf(js) == jobset.InPlaceRestart {
		if _, group := inplace.Group(js); group.Has(rjName) {
			return fullInstead(fmt.Sprintf("replicatedJob %s is in the in-place group, whose members restart together", rjName))
		}
	}
	index, ok := jobIndex(js, failed)
	if !ok {
		return fullInstead(fmt.Sprintf("the Job's %s label is not an index of replicatedJob %s", jobset.JobIndexKey, rjName))
	}
	d := decision{kind: restartOneJob, replicatedJob: rjName, jobIndex: index, countsTowardMax: counted}
	if !counted {
		d.reason = jobset.ReasonRestartJobAndIgnoreMaxRestartsAction
		d.message = fmt.Sprintf("%s; failure policy rule %q recreates only this Job (not counted toward maxRestarts)", why, rule.Name)
		return d
	}
	maxRestarts := js.Spec.FailurePolicy.MaxRestarts
	if used := inplace.RestartsUsed(js); used >= maxRestarts {
		return failDecision(jobset.ReasonReachedMaxRestarts, "%s, and the JobSet has used all %d restarts of failurePolicy.maxRestarts (%d full, %d of one Job, %d in place)",
			why, maxRestarts, js.Status.RestartsCountTowardsMax, inplace.OneJobRestartsCounted(js), js.Status.InPlaceRestarts)
	}
	d.reason = jobset.ReasonRestartJobAction
	d.message = fmt.Sprintf("%s; failure policy rule %q recreates only this Job (restart %d of %d)", why, rule.Name, inplace.RestartsUsed(js)+1, maxRestarts)
	return d
}

// jobIndex is the failed Job's index within its replicatedJob, if it is
// one the spec has.
func jobIndex(js *jobset.JobSet, job *batchv1.Job) (int, bool) {
	i, err := strconv.Atoi(job.Labels[jobset.JobIndexKey])
	if err != nil || i < 0 {
		return 0, false
	}
	for _, rj := range js.Spec.ReplicatedJobs {
		if rj.Name == job.Labels[jobset.ReplicatedJobNameKey] {
			return i, i < int(rj.Replicas)
		}
	}
	return 0, false
}

// jobGeneration is the entry of jobRestarts for a Job index: the
// job-restart-attempt its current Job must carry.
func jobGeneration(js *jobset.JobSet, replicatedJob string, index int) int32 {
	for _, s := range js.Status.ReplicatedJobsStatus {
		if s.Name == replicatedJob && index < len(s.JobRestarts) {
			return s.JobRestarts[index]
		}
	}
	return 0
}

// olderJobGeneration reports whether a Job of the current restart attempt
// was created before RestartJob last restarted its index. A Job without
// the label (created before the gate was on) is taken as current, as in
// community JobSet: it is relabelled when it is next recreated.
func olderJobGeneration(js *jobset.JobSet, job *batchv1.Job) bool {
	raw, ok := job.Labels[jobset.JobRestartAttemptKey]
	if !ok {
		return false
	}
	index, err := strconv.Atoi(job.Labels[jobset.JobIndexKey])
	if err != nil || index < 0 {
		return false
	}
	created, err := strconv.ParseInt(raw, 10, 32)
	if err != nil {
		return true // unreadable: replaced rather than trusted
	}
	return int32(created) < jobGeneration(js, job.Labels[jobset.ReplicatedJobNameKey], index)
}

// countOneJobRestart adds a restart of one Job to the status counters,
// sized to the replicatedJob's replicas.
func countOneJobRestart(js *jobset.JobSet, replicatedJob string, index int, countsTowardMax bool) {
	replicas := 0
	for _, rj := range js.Spec.ReplicatedJobs {
		if rj.Name == replicatedJob {
			replicas = int(rj.Replicas)
		}
	}
	for i := range js.Status.ReplicatedJobsStatus {
		s := &js.Status.ReplicatedJobsStatus[i]
		if s.Name != replicatedJob {
			continue
		}
		s.JobRestarts = bumped(s.JobRestarts, replicas, index)
		if countsTowardMax {
			s.JobRestartsCountTowardsMax = bumped(s.JobRestartsCountTowardsMax, replicas, index)
		}
	}
}

// bumped returns counts, grown to n entries, with one more at index.
func bumped(counts []int32, n, index int) []int32 {
	counts = slices.Clone(counts)
	if len(counts) < n {
		counts = append(counts, make([]int32, n-len(counts))...)
	}
	counts[index]++
	return counts
}

// keepOneJobRestarts carries the per-Job counters of the written status
// over into freshly counted replicatedJob statuses.
func keepOneJobRestarts(status, written []jobset.ReplicatedJobStatus) {
	for i := range status {
		for _, w := range written {
			if w.Name == status[i].Name {
				status[i].JobRestarts, status[i].JobRestartsCountTowardsMax = w.JobRestarts, w.JobRestartsCountTowardsMax
			}
		}
	}
}
