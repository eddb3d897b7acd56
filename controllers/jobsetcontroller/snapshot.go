package jobsetcontroller

import (
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
	"github.com/fastjobset/jobset/controllers/internal/metrics"
)

// recordEpochs mirrors the epochs, the GatherStalled condition and the
// restart budget of an InPlaceRestart JobSet in the gauges, from every
// reconcile; a JobSet that is gone loses its series.
func recordEpochs(js *jobset.JobSet) {
	if jobset.RestartStrategyOf(js) != jobset.InPlaceRestart {
		return
	}
	metrics.SetEpochs(js.Namespace, js.Name, ptr.Deref(js.Status.SyncedEpoch, 0), ptr.Deref(js.Status.DeprecatedEpoch, 0))
	var maxRestarts int32
	if js.Spec.FailurePolicy != nil {
		maxRestarts = js.Spec.FailurePolicy.MaxRestarts
	}
	metrics.SetGroupState(js.Namespace, js.Name, meta.IsStatusConditionTrue(js.Status.Conditions, string(jobset.JobSetGatherStalled)),
		restartsUsed(js), maxRestarts, finished(js))
}

func inPlaceRestartEnabled(js *jobset.JobSet) bool {
	return jobset.RestartStrategyOf(js) == jobset.InPlaceRestart && !ptr.Deref(js.Spec.Suspend, false)
}

// epochSnapshot reads the protocol's inputs: the Pods of the current
// restart attempt, the expected Pod count (less the indexes the current
// Jobs count complete, from their status: the Pods that completed them may
// be gone) and the restart budget. A Pod shows a failure signal too when
// signs holds one seen at the epoch it shows (inplace.Tally.Signs). A Pod
// marked lost whose worker fenced reports (nil: none does) is not still
// running, though no kubelet reported it stopped.
func epochSnapshot(js *jobset.JobSet, pods []corev1.Pod, jobs []*batchv1.Job, signs map[string]string, fenced func(*corev1.Pod) bool) inplace.Snapshot {
	current, jobs := groupChildren(js, currentAttempt(js, pods), jobs) // the in-place group's only (ingroup.go)
	s := inplace.Snapshot{
		Synced:       ptr.Deref(js.Status.SyncedEpoch, 0),
		Deprecated:   ptr.Deref(js.Status.DeprecatedEpoch, 0),
		Regathering:  regathering(js),
		RestartsUsed: restartsUsed(js),
	}
	if js.Spec.FailurePolicy != nil {
		s.MaxRestarts = js.Spec.FailurePolicy.MaxRestarts
	}
	members, _ := inPlaceGroup(js)
	for _, rj := range members {
		s.ExpectedPods += rj.Replicas * ptr.Deref(rj.Template.Spec.Parallelism, 1)
	}
	failurePolicies := map[string]*batchv1.PodFailurePolicy{}
	for i := range js.Spec.ReplicatedJobs {
		rj := &js.Spec.ReplicatedJobs[i]
		failurePolicies[rj.Name] = rj.Template.Spec.PodFailurePolicy
	}
	// A failed Job dooms its Pods: the Job controller deletes them next,
	// which must not look like members lost. So does a Pod whose failure
	// fails its Job, seen before the Job's own status. (Pod events arrive in
	// order, so the failed Pod's status is seen before its siblings'
	// deletion.)
	doomedJobs := map[string]bool{}
	completed := map[string]sets.Set[int]{}
	for _, job := range jobs {
		if jobFailure(job) != nil {
			doomedJobs[job.Name] = true
		}
		done := parseIndexes(job.Status.CompletedIndexes)
		completed[job.Name] = done
		s.ExpectedPods -= int32(done.Len())
	}
	// Decide reads failure signals only in sync: while the group gathers,
	// a Pod's sign is not read, and its managedFields check costs more
	// than the rest of the snapshot.
	readsSignals := !inplace.Gathering(s.Synced, s.Deprecated, s.Regathering)
	s.Pods = make([]inplace.Pod, 0, len(current))
	for _, pod := range current {
		if inplace.EndsJob(pod, failurePolicies[pod.Labels[jobset.ReplicatedJobNameKey]]) {
			doomedJobs[pod.Labels[batchv1.JobNameLabel]] = true
		}
	}
	for _, pod := range current {
		job := pod.Labels[batchv1.JobNameLabel]
		index, err := strconv.Atoi(pod.Annotations[batchv1.JobCompletionIndexAnnotation])
		key := "" // unknown: a Pod the Job controller did not create
		if job != "" && err == nil {
			key = job + "/" + strconv.Itoa(index)
		}
		p := readPod(pod, readsSignals)
		if p.StillRunning && fenced != nil && fenced(pod) {
			p.StillRunning = false
		}
		p.Index, p.IndexComplete, p.EndsJob = key, key != "" && completed[job].Has(index), doomedJobs[job]
		if epoch, seen := signs[pod.Name]; readsSignals && p.FailureSignal == "" && seen && epoch == p.Epoch {
			p.FailureSignal = "its status showed a failure at epoch " + epoch + " (a kubelet write seen in an event, written over since)"
		}
		s.Pods = append(s.Pods, p)
	}
	return s
}

// readPod is what the protocol reads of a Pod by itself (its Index,
// IndexComplete and EndsJob need its Jobs): the one reading that both the
// epoch snapshot and the Pod tally (markOf) take. Its failure signal only
// when withSignal: reading it may decode the Pod's managedFields.
func readPod(pod *corev1.Pod, withSignal bool) inplace.Pod {
	marked := jobset.ControllerMark(pod) != nil
	p := inplace.Pod{
		Name:      pod.Name,
		Epoch:     pod.Annotations[jobset.EpochKey],
		Succeeded: pod.Status.Phase == corev1.PodSucceeded,
		Failed:    pod.Status.Phase == corev1.PodFailed || marked,
		Deleting:  pod.DeletionTimestamp != nil,
		Left:      leftWhileRunning(pod),
		Unheld:    !holdsMember(pod),
	}
	p.StillRunning = marked && inplace.Stopping(pod)
	if withSignal {
		p.FailureSignal = inplace.FailureSignal(pod)
	}
	return p
}

// currentAttempt is the JobSet's Pods of its current restart attempt:
// pointers into pods, not copies (a reconcile reads thousands).
func currentAttempt(js *jobset.JobSet, pods []corev1.Pod) []*corev1.Pod {
	current := make([]*corev1.Pod, 0, len(pods))
	for i := range pods {
		if pod := &pods[i]; ofCurrentAttempt(js, pod) {
			current = append(current, pod)
		}
	}
	return current
}

// ofCurrentAttempt: the Pod is the JobSet's (not an earlier JobSet's of the
// same name) and of its current restart attempt.
func ofCurrentAttempt(js *jobset.JobSet, pod *corev1.Pod) bool {
	return pod.Labels[jobset.JobSetUIDKey] == string(js.UID) && pod.Labels[jobset.RestartsKey] == strconv.Itoa(int(js.Status.Restarts))
}

// parseIndexes reads a Job's status.completedIndexes ("1,3-5").
func parseIndexes(list string) sets.Set[int] {
	out := sets.New[int]()
	for _, part := range strings.Split(list, ",") {
		first, last, isRange := strings.Cut(part, "-")
		from, err := strconv.Atoi(first)
		if err != nil {
			continue
		}
		to := from
		if isRange {
			if to, err = strconv.Atoi(last); err != nil {
				continue
			}
		}
		for i := from; i <= to; i++ {
			out.Insert(i)
		}
	}
	return out
}

// regathering: the controller recreated every Pod (a full restart or a
// suspension) since the group last synced; see markRegathering.
func regathering(js *jobset.JobSet) bool {
	c := meta.FindStatusCondition(js.Status.Conditions, string(jobset.JobSetInPlaceRestarting))
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == jobset.ReasonPodsRecreated
}

// gatherOf is the gather the JobSet's in-place group is in, for the Pod
// tally, or nil when the group is in sync.
func gatherOf(js *jobset.JobSet) *inplace.Gather {
	synced := ptr.Deref(js.Status.SyncedEpoch, 0)
	if !inplace.Gathering(synced, ptr.Deref(js.Status.DeprecatedEpoch, 0), regathering(js)) {
		return nil
	}
	_, group := inPlaceGroup(js)
	return &inplace.Gather{
		Attempt: attemptOf(string(js.UID), strconv.Itoa(int(js.Status.Restarts))),
		Group:   group,
		Epoch:   synced + 1,
	}
}

// restartsUsed is what spec.failurePolicy.maxRestarts limits: full restarts
// that count plus group restarts in place.
func restartsUsed(js *jobset.JobSet) int32 {
	return js.Status.RestartsCountTowardsMax + oneJobRestartsCounted(js) + js.Status.InPlaceRestarts
}
