package jobsetcontroller

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
	"github.com/fastjobset/jobset/controllers/internal/metrics"
)

// PodJobSetNameIndex indexes Pods by the name of their JobSet (the
// jobset-name label every child Pod carries), so that the Pods of a JobSet
// that is gone, or of an earlier JobSet of the same name, are found too:
// they may still hold the group-member finalizer.
const PodJobSetNameIndex = "jobset.x-k8s.io/pod-jobset-name"

func indexPodByJobSetName(o client.Object) []string {
	if name, ok := o.GetLabels()[jobset.JobSetNameKey]; ok {
		return []string{name}
	}
	return nil
}

// listPods lists, from the cache, the Pods labelled with the JobSet's name:
// its own and any that a JobSet of the same name left behind. Read only:
// the cache's objects are used as they are, without copying thousands of
// Pods on every Pod event.
func (r *Reconciler) listPods(ctx context.Context, namespace, name string) ([]corev1.Pod, error) {
	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, client.InNamespace(namespace),
		client.MatchingFields{PodJobSetNameIndex: name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing the Pods of JobSet %s: %w", name, err)
	}
	return pods.Items, nil
}

// podToJobSet maps a child Pod event to its JobSet.
func podToJobSet(_ context.Context, o client.Object) []reconcile.Request {
	name, ok := o.GetLabels()[jobset.JobSetNameKey]
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// recordEpochs mirrors the epochs of an InPlaceRestart JobSet in the
// gauges, from every reconcile; a JobSet that is gone loses its series.
func recordEpochs(js *jobset.JobSet) {
	if jobset.RestartStrategyOf(js) != jobset.InPlaceRestart {
		return
	}
	metrics.SetEpochs(js.Namespace, js.Name, ptr.Deref(js.Status.SyncedEpoch, 0), ptr.Deref(js.Status.DeprecatedEpoch, 0))
}

func inPlaceRestartEnabled(js *jobset.JobSet) bool {
	return jobset.RestartStrategyOf(js) == jobset.InPlaceRestart && !ptr.Deref(js.Spec.Suspend, false)
}

// decideEpochs runs the epoch protocol on the JobSet's current Pods and
// Jobs. The cache may be behind the API server, and an epoch decision is
// acted on at once by every agent, so a decision that writes is made again
// on a fresh read of the Pods and Jobs: a sync must not count a member that
// is already gone, and a Pod that its failed Job deletes (the Job's
// FailureTarget is written before the deletions, but arrives on another
// informer) must not start a group restart on top of the full restart that
// answers the same failure.
func (r *Reconciler) decideEpochs(ctx context.Context, js *jobset.JobSet, snapshot inplace.Snapshot) (inplace.Decision, inplace.Snapshot, error) {
	d := inplace.Decide(snapshot)
	if !writes(d, snapshot) {
		return d, snapshot, nil
	}
	fresh, freshJobs, err := r.readChildrenFresh(ctx, js)
	if err != nil {
		return inplace.Decision{}, inplace.Snapshot{}, err
	}
	snapshot = epochSnapshot(js, fresh, freshJobs)
	return inplace.Decide(snapshot), snapshot, nil
}

func writes(d inplace.Decision, s inplace.Snapshot) bool {
	return d.Synced != s.Synced || d.Deprecated != s.Deprecated || d.BudgetExceeded || d.LostIndex != ""
}

// readChildrenFresh lists the JobSet's current Jobs and its Pods from the
// API server, bypassing the cache. The Jobs first: a Job counts an index
// complete only after its Pod ended, so Pods read afterwards show every
// Pod that a completed index stands for as ended. The other way round, a
// worker deleted while it ran could still look running in the Pods and
// already complete in its Job: not live, not expected, and the rest of
// the group would sync without it.
func (r *Reconciler) readChildrenFresh(ctx context.Context, js *jobset.JobSet) ([]corev1.Pod, []*batchv1.Job, error) {
	var jobs batchv1.JobList
	if err := r.apiReader.List(ctx, &jobs, client.InNamespace(js.Namespace),
		client.MatchingLabels{jobset.JobSetUIDKey: string(js.UID)}); err != nil {
		return nil, nil, fmt.Errorf("reading the Jobs of JobSet %s from the API server: %w", js.Name, err)
	}
	var pods corev1.PodList
	if err := r.apiReader.List(ctx, &pods, client.InNamespace(js.Namespace),
		client.MatchingLabels{jobset.JobSetUIDKey: string(js.UID)}); err != nil {
		return nil, nil, fmt.Errorf("reading the Pods of JobSet %s from the API server: %w", js.Name, err)
	}
	var current []*batchv1.Job
	for i := range jobs.Items {
		if job := &jobs.Items[i]; job.DeletionTimestamp == nil && restartAttempt(job) == js.Status.Restarts {
			current = append(current, job)
		}
	}
	return pods.Items, current, nil
}

// epochSnapshot reads the protocol's inputs: the Pods of the current
// restart attempt, the expected Pod count (less the indexes the current
// Jobs count complete, from their status: the Pods that completed them may
// be gone) and the restart budget.
func epochSnapshot(js *jobset.JobSet, pods []corev1.Pod, jobs []*batchv1.Job) inplace.Snapshot {
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
		s.Pods = append(s.Pods, inplace.Pod{
			Name:          pod.Name,
			Index:         key,
			IndexComplete: key != "" && completed[job].Has(index),
			Epoch:         pod.Annotations[jobset.EpochKey],
			Succeeded:     pod.Status.Phase == corev1.PodSucceeded,
			Failed:        pod.Status.Phase == corev1.PodFailed,
			Deleting:      pod.DeletionTimestamp != nil,
			Left:          leftWhileRunning(pod),
			EndsJob:       doomedJobs[job],
			FailureSignal: inplace.FailureSignal(pod),
		})
	}
	return s
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
// tally (tally.go), or nil when the group is in sync.
func gatherOf(js *jobset.JobSet) *gather {
	synced := ptr.Deref(js.Status.SyncedEpoch, 0)
	if !inplace.Gathering(synced, ptr.Deref(js.Status.DeprecatedEpoch, 0), regathering(js)) {
		return nil
	}
	_, group := inPlaceGroup(js)
	return &gather{
		jobSetUID: string(js.UID),
		restarts:  strconv.Itoa(int(js.Status.Restarts)),
		epoch:     strconv.Itoa(int(synced) + 1),
		group:     group,
	}
}

// markRegathering records, in the same status write as the full restart or
// suspension that recreates every Pod, that the new Pods gather at the next
// epoch without a group restart: a sync past a synced epoch without it is a
// group restart that the budget counts (Decide).
func (u *statusUpdate) markRegathering(why string) {
	if jobset.RestartStrategyOf(u.js) != jobset.InPlaceRestart || ptr.Deref(u.js.Status.SyncedEpoch, 0) < 1 {
		return
	}
	u.setCondition(jobset.JobSetInPlaceRestarting, metav1.ConditionTrue, jobset.ReasonPodsRecreated,
		fmt.Sprintf("%s: the new Pods gather at epoch %d without an in-place group restart", why, ptr.Deref(u.js.Status.SyncedEpoch, 0)+1))
}

// restartsUsed is what spec.failurePolicy.maxRestarts limits: full restarts
// that count plus group restarts in place.
func restartsUsed(js *jobset.JobSet) int32 {
	return js.Status.RestartsCountTowardsMax + js.Status.InPlaceRestarts
}

// applyEpochs records an epoch decision in the status, with its condition,
// events and metrics.
func (u *statusUpdate) applyEpochs(d inplace.Decision, s inplace.Snapshot) {
	js, ns := u.js, u.js.Namespace
	u.setInvalidEpochs(d.InvalidEpochs)
	if d.BudgetExceeded {
		u.apply(failDecision(jobset.ReasonReachedMaxRestarts, "%s", d.Message))
		return
	}

	if d.Deprecated != s.Deprecated {
		js.Status.DeprecatedEpoch = ptr.To(d.Deprecated)
	}
	if d.RestartStarted {
		js.Status.InPlaceRestarts++
		note := fmt.Sprintf("in-place group restart %d started: %s; every Pod at epoch %d or below restarts in place",
			js.Status.InPlaceRestarts, d.Trigger, d.Deprecated)
		u.setCondition(jobset.JobSetInPlaceRestarting, metav1.ConditionTrue, jobset.ReasonInPlaceRestartStarted, note)
		u.event(corev1.EventTypeWarning, jobset.ReasonInPlaceRestartStarted, "RestartInPlace", note)
		u.recorded = append(u.recorded, func() { metrics.InPlaceRestarts.WithLabelValues(ns).Inc() })
	}
	if d.Synced != s.Synced {
		js.Status.SyncedEpoch = ptr.To(d.Synced)
		if d.RestartCompleted {
			note := fmt.Sprintf("in-place group restart %d completed: every live Pod joined epoch %d", js.Status.InPlaceRestarts, d.Synced)
			// Its duration is known when its start was recorded by an
			// earlier reconcile.
			if started := meta.FindStatusCondition(u.original.Status.Conditions, string(jobset.JobSetInPlaceRestarting)); started != nil && started.Status == metav1.ConditionTrue {
				took := u.now.Sub(started.LastTransitionTime.Time)
				note = fmt.Sprintf("in-place group restart %d completed in %.1fs: every live Pod joined epoch %d",
					js.Status.InPlaceRestarts, took.Seconds(), d.Synced)
				u.recorded = append(u.recorded, func() { metrics.InPlaceRestartDuration.WithLabelValues(ns).Observe(took.Seconds()) })
			}
			u.markSynced(jobset.ReasonInPlaceRestartCompleted, note)
			u.event(corev1.EventTypeNormal, jobset.ReasonInPlaceRestartCompleted, "RestartInPlace", note)
		} else {
			note := fmt.Sprintf("every live Pod joined epoch %d", d.Synced)
			u.markSynced(jobset.ReasonEpochSynced, note)
			u.logOnly(jobset.ReasonEpochSynced, note)
		}
	}
}

// markSynced sets InPlaceRestarting False with a transition time of now,
// even when it was False already: that time is when the group last synced.
func (u *statusUpdate) markSynced(reason, message string) {
	meta.RemoveStatusCondition(&u.js.Status.Conditions, string(jobset.JobSetInPlaceRestarting))
	u.setCondition(jobset.JobSetInPlaceRestarting, metav1.ConditionFalse, reason, message)
}

// setInvalidEpochs names, in the InvalidEpoch condition, the live Pods whose
// epoch annotation no agent could have written.
func (u *statusUpdate) setInvalidEpochs(invalid []inplace.InvalidEpoch) {
	if len(invalid) == 0 {
		if meta.IsStatusConditionTrue(u.js.Status.Conditions, string(jobset.JobSetInvalidEpoch)) {
			u.setCondition(jobset.JobSetInvalidEpoch, metav1.ConditionFalse, jobset.ReasonEpochsValid, "every live Pod reports a valid epoch")
		}
		return
	}
	note := fmt.Sprintf("ignored for sync until fixed (only the agent writes %s): %s", jobset.EpochKey, describeInvalidEpochs(invalid))
	if u.setCondition(jobset.JobSetInvalidEpoch, metav1.ConditionTrue, jobset.ReasonInvalidEpoch, note) {
		u.event(corev1.EventTypeWarning, jobset.ReasonInvalidEpoch, "ReadEpochs", note)
	}
}

// A condition's message is limited to 32 KiB by the CRD's schema, and a
// status write with a longer one fails, taking every other status change
// with it: an admin who "resets" the epochs of a thousand Pods must not
// leave the JobSet unable to record even its failure. So a message names a
// few Pods, each described in a bounded size, and counts the rest.
const (
	podsNamed             = 10
	podDescriptionSize    = 512
	invalidEpochValueSize = 32
)

func describeInvalidEpochs(invalid []inplace.InvalidEpoch) string {
	descriptions := make([]string, 0, min(len(invalid), podsNamed))
	for _, e := range invalid[:min(len(invalid), podsNamed)] {
		if len(e.Value) > invalidEpochValueSize {
			e.Value = e.Value[:invalidEpochValueSize] + "..."
		}
		descriptions = append(descriptions, e.String())
	}
	return boundedList(descriptions, len(invalid))
}

// boundedList joins the descriptions of the first podsNamed of total
// Pods, each cut to podDescriptionSize, and counts the others.
func boundedList(descriptions []string, total int) string {
	named := make([]string, 0, podsNamed+1)
	for _, d := range descriptions[:min(len(descriptions), podsNamed)] {
		if len(d) > podDescriptionSize {
			d = d[:podDescriptionSize] + "..."
		}
		named = append(named, d)
	}
	if more := total - len(named); more > 0 {
		named = append(named, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(named, "; ")
}
