package jobsetcontroller

import (
	"slices"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/util/sets"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// childJobs sorts the JobSet's Jobs (found through its UID) by what the
// reconciler must do with them.
type childJobs struct {
	// current: Jobs of the current restart attempt, by state.
	active     []*batchv1.Job
	successful []*batchv1.Job
	failed     []*batchv1.Job
	// previous: Jobs of an earlier restart attempt, or of an earlier
	// generation of their index (RestartJob), to be deleted.
	previous []*batchv1.Job
	// deleting: Jobs already being deleted (a deletion timestamp is set).
	// They still hold their names.
	deleting []*batchv1.Job
}

// classifyJobs sorts Jobs by restart attempt (and, under the RestartJob
// feature gate, generation of their index) and state.
func classifyJobs(js *jobset.JobSet, jobs []batchv1.Job, restartJobGate bool) childJobs {
	var c childJobs
	for i := range jobs {
		job := &jobs[i]
		switch {
		case job.DeletionTimestamp != nil:
			c.deleting = append(c.deleting, job)
		case restartAttempt(job) < js.Status.Restarts, restartJobGate && olderJobGeneration(js, job):
			c.previous = append(c.previous, job)
		case jobFinished(job, batchv1.JobComplete):
			c.successful = append(c.successful, job)
		case inplace.JobFailure(job) != nil:
			c.failed = append(c.failed, job)
		default:
			c.active = append(c.active, job)
		}
	}
	return c
}

// current is every Job of the current attempt, whatever its state.
func (c childJobs) current() []*batchv1.Job {
	return slices.Concat(c.active, c.successful, c.failed)
}

// names is the set of Job names still taken in the API server.
func (c childJobs) names() map[string]bool {
	taken := map[string]bool{}
	for _, job := range slices.Concat(c.current(), c.previous, c.deleting) {
		taken[job.Name] = true
	}
	return taken
}

// restartAttempt reads the restart attempt a Job was created for. A Job
// without a readable attempt is treated as the oldest, so that it is
// replaced rather than trusted.
func restartAttempt(job *batchv1.Job) int32 {
	n, err := strconv.ParseInt(job.Labels[jobset.RestartsKey], 10, 32)
	if err != nil {
		return -1
	}
	return int32(n)
}

// jobFinished reports whether the Job has the given terminal condition.
func jobFinished(job *batchv1.Job, t batchv1.JobConditionType) bool {
	return inplace.JobCondition(job, t) != nil
}

// replicatedJobsStatus counts the current Jobs of each replicatedJob by
// state, in spec order, and keeps the per-Job restart counters.
func replicatedJobsStatus(js *jobset.JobSet, c childJobs) []jobset.ReplicatedJobStatus {
	byName := map[string]*jobset.ReplicatedJobStatus{}
	out := make([]jobset.ReplicatedJobStatus, len(js.Spec.ReplicatedJobs))
	for i, rj := range js.Spec.ReplicatedJobs {
		out[i] = jobset.ReplicatedJobStatus{Name: rj.Name}
		byName[rj.Name] = &out[i]
	}
	count := func(jobs []*batchv1.Job, add func(*jobset.ReplicatedJobStatus, *batchv1.Job)) {
		for _, job := range jobs {
			if s, ok := byName[job.Labels[jobset.ReplicatedJobNameKey]]; ok {
				add(s, job)
			}
		}
	}
	count(c.successful, func(s *jobset.ReplicatedJobStatus, _ *batchv1.Job) { s.Succeeded++ })
	count(c.failed, func(s *jobset.ReplicatedJobStatus, _ *batchv1.Job) { s.Failed++ })
	count(c.active, func(s *jobset.ReplicatedJobStatus, job *batchv1.Job) {
		if job.Spec.Suspend != nil && *job.Spec.Suspend {
			s.Suspended++
		}
		if job.Status.Active > 0 {
			s.Active++
		}
		if jobReady(job) {
			s.Ready++
		}
	})
	keepOneJobRestarts(out, js.Status.ReplicatedJobsStatus)
	return out
}

// holdReadyCounts keeps in status the ready count last written of each
// replicatedJob whose Jobs are all ready, or not, as they were when it was
// written. A group restart in place takes the readiness of every Pod away,
// Job by Job as its Pods restart, and every write of the JobSet goes to
// the watch of every Pod's agent, thousands of deliveries a write while
// they gather. What a reader of the counts acts on is whether all of a
// replicatedJob's Jobs are ready (Kueue's PodsReady): that is written at
// once, the rest with the sync that ends the restart. Of a JobSet with
// named in-place groups, only the restarting group's replicatedJobs
// (only); the others' Pods stay ready, and their counts are news.
func holdReadyCounts(js *jobset.JobSet, only sets.Set[string], status, written []jobset.ReplicatedJobStatus) {
	replicas := map[string]int32{}
	for _, rj := range js.Spec.ReplicatedJobs {
		replicas[rj.Name] = rj.Replicas
	}
	allReady := func(s jobset.ReplicatedJobStatus) bool { return s.Ready+s.Succeeded >= replicas[s.Name] }
	for i := range status {
		if only != nil && !only.Has(status[i].Name) {
			continue
		}
		for _, w := range written {
			if w.Name == status[i].Name && allReady(w) == allReady(status[i]) {
				status[i].Ready = w.Ready
			}
		}
	}
}

// jobReady: the Job's ready and succeeded Pods reach its expected Pod count.
func jobReady(job *batchv1.Job) bool {
	expected := int32(1)
	if job.Spec.Parallelism != nil {
		expected = *job.Spec.Parallelism
	}
	if job.Spec.Completions != nil && *job.Spec.Completions < expected {
		expected = *job.Spec.Completions
	}
	ready := int32(0)
	if job.Status.Ready != nil {
		ready = *job.Status.Ready
	}
	return ready+job.Status.Succeeded >= expected
}

// failureTime is when a failed Job failed, for finding the first failure.
func failureTime(job *batchv1.Job) metav1.Time {
	if c := inplace.JobFailure(job); c != nil {
		return c.LastTransitionTime
	}
	return metav1.Time{}
}
