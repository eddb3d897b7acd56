package inplace

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// Live reports whether the Pod counts toward its group: it has not ended,
// is not being deleted, and the controller has not marked it Failed
// (jobset.ControllerMark: replaced off its node, or its node lost). The
// mark, not the phase, says so: the kubelet's status manager may write
// back the running phase of a status it computed before it saw the mark,
// until the controller marks the Pod Failed again; the mark's condition
// stays through that write.
func Live(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && !ended(pod) && jobset.ControllerMark(pod) == nil
}

// Stopping reports whether the Pod's containers may still run though it
// left its group: it is being deleted and has not ended, or the controller
// marked it Failed and its kubelet has not reported every container
// stopped (Pod.stopping, for a Pod of the API). A dead kubelet never
// reports a member marked lost stopped: the controller knows from its
// node's silence when its agent's fence stopped it.
func Stopping(pod *corev1.Pod) bool {
	return (pod.DeletionTimestamp != nil && !ended(pod)) || (jobset.ControllerMark(pod) != nil && !ContainersStopped(pod))
}

// ContainersStopped reports whether the Pod's status shows every container terminated,
// as the kubelet reports a Pod it stopped.
func ContainersStopped(pod *corev1.Pod) bool {
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, s := range statuses {
			if s.State.Terminated == nil {
				return false
			}
		}
	}
	return true
}

func ended(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// FailureSignal returns a sign that the Pod's containers failed or began
// restarting since its agent started, or "".
//
// Every sign is dated by the node, and so is the reference: the start of
// the Pod's running agent, which joined the Pod's current epoch. No node
// time is compared with the controller's (a node clock a second or two
// ahead made the restart that led to a sync look like a new failure after
// it, group restart after group restart until the budget ran out).
//
// The exit code of the container that triggered an in-place restart is
// visible in one Pod status update only, briefly, before the kubelet
// replaces it; the Pod condition AllContainersRestarting is set when the
// restart begins. Both count from the agent's start (times have a
// one-second resolution: a termination in the same second counts, a
// restart condition must be later, and stop a worker that ran since the
// agent started: see workerStopped). Neither is there a sign in a status
// the kubelet posted before the Pod's agent joined its current epoch
// (statusPredatesJoin).
//
// The marks of a restart in place last longer: every container waiting
// with reason RestartingAllContainers while the agent is down, then each
// one's last termination RestartingAllContainers and its restartCount one
// higher. But they are no sign: the restart that brought the Pod to its
// epoch left the same marks, and nothing in the Pod tells the two apart.
// The kubelet drops every time that would (the trigger's exit, every
// finish time), and the agent that joined, the reference, is gone from the
// status. No restart count from the join is kept to compare with. When the
// kubelet posted the status (managedFields) is on the API server's clock,
// as the join is, but says nothing of when the kubelet made it: a status
// made before the agent that joined started, held in the API server's
// queues, is posted after the join, as long after as the queues take.
// (Marks posted a few seconds after the join, counted as signs, started
// group restarts one after another under load.) So the brief signs are
// kept instead: the Pod event handler sees every status the kubelet posts,
// and the tally keeps a sign it saw for the decision (Tally.Signs).
func FailureSignal(pod *corev1.Pod) string {
	agentStarted, ok := agentStart(pod)
	if !ok {
		return ""
	}
	// statusPredatesJoin last, and only for a Pod that shows a sign: it
	// decodes the Pod's managedFields, which costs more than every other
	// check together, and every reconcile asks this of every Pod.
	if sign := failureSign(pod, agentStarted); sign != "" && !statusPredatesJoin(pod) {
		return sign
	}
	return ""
}

// failureSign is FailureSignal before the managedFields check.
func failureSign(pod *corev1.Pod, agentStarted time.Time) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == jobset.PodConditionAllContainersRestarting && c.Status == corev1.ConditionTrue && c.LastTransitionTime.After(agentStarted) &&
			workerStopped(pod, agentStarted) {
			return "its containers are restarting (" + string(jobset.PodConditionAllContainersRestarting) + ")"
		}
	}
	since := func(t metav1.Time) bool { return !t.IsZero() && !t.Time.Before(agentStarted) }
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, c := range statuses {
			if t := c.State.Terminated; t != nil && t.ExitCode != 0 && since(t.FinishedAt) {
				return fmt.Sprintf("container %s terminated with exit code %d", c.Name, t.ExitCode)
			}
			if t := c.LastTerminationState.Terminated; t != nil && t.ExitCode != 0 && since(t.FinishedAt) {
				return fmt.Sprintf("container %s restarted after exiting with code %d at %s", c.Name, t.ExitCode, t.FinishedAt.UTC().Format(time.RFC3339))
			}
		}
	}
	return ""
}

// statusPredatesJoin reports whether the kubelet last posted the Pod's
// status before (or in the same second as) its agent wrote the Pod's
// current epoch, both as the API server dated the writes (managedFields:
// one-second resolution). Such a status shows an agent older than the one that joined
// and that agent's end: a failure the group restart this agent joined for
// answered already. A failure of the current epoch comes after its join
// (its workers start once the barrier lifts), so the kubelet posts it
// after too. Seen after an API server outage: the restarted agent
// reconnected and joined before the kubelet, in backoff, posted the
// restart, and its failed worker and restart condition looked new (a
// second group restart as the first one synced).
func statusPredatesJoin(pod *corev1.Pod) bool {
	joined := EpochWritten(pod)
	var posted time.Time
	for _, f := range pod.ManagedFields {
		if postsContainerStatuses(f) {
			posted = later(posted, f.Time.Time)
		}
	}
	// The API server dates writes to the second, so a status posted in
	// the second of the join may be from either side of it. It is taken as
	// from before: counting a stale status starts a group restart, counted
	// against the budget, for a failure answered already; passing over a
	// new one costs only until the kubelet's next status write, a second
	// later at most, or the failed Pod's rejoin at the next epoch. (With
	// several API servers, each dates its own writes: their clocks must
	// agree to within a second for this to hold.)
	return !joined.IsZero() && !posted.IsZero() && !posted.After(joined)
}

// EpochWritten is when the Pod's agent last wrote its epoch annotation,
// its join of the Pod's current epoch, as the API server dated the write
// (managedFields: one-second resolution); zero when unknown.
func EpochWritten(pod *corev1.Pod) time.Time {
	var joined time.Time
	for _, f := range pod.ManagedFields {
		if writesEpoch(f) {
			joined = later(joined, f.Time.Time)
		}
	}
	return joined
}

// The managedFields paths the decisions read: who last wrote the epoch
// annotation (EpochWritten) and the containers' statuses
// (statusPredatesJoin).
var (
	epochPath                 = []string{"f:metadata", "f:annotations", "f:" + agentspec.EpochAnnotation}
	containerStatusesPath     = []string{"f:status", "f:containerStatuses"}
	initContainerStatusesPath = []string{"f:status", "f:initContainerStatuses"}
)

// writesEpoch: a dated write of the Pod's epoch annotation.
func writesEpoch(f metav1.ManagedFieldsEntry) bool {
	return f.Time != nil && f.FieldsV1 != nil && f.Subresource == "" && ownsField(f.FieldsV1.GetRawBytes(), epochPath...)
}

// postsContainerStatuses: a dated status write that set containers'
// statuses, as the kubelet posts them.
func postsContainerStatuses(f metav1.ManagedFieldsEntry) bool {
	return f.Time != nil && f.FieldsV1 != nil && f.Subresource == "status" &&
		(ownsField(f.FieldsV1.GetRawBytes(), containerStatusesPath...) || ownsField(f.FieldsV1.GetRawBytes(), initContainerStatusesPath...))
}

// ManagedFieldsRead returns the entries of a Pod's managedFields that the
// decisions read, each cut down to the paths they look for, with its
// manager, operation, subresource and time: EpochWritten and
// FailureSignal read the same from them as from all of managedFields.
// A controller that caches Pods keeps these only (a few hundred bytes,
// where a Pod's managedFields are kilobytes). Applying it again changes
// nothing.
func ManagedFieldsRead(entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	var kept []metav1.ManagedFieldsEntry
	for _, f := range entries {
		var paths [][]string
		if writesEpoch(f) {
			paths = append(paths, epochPath)
		}
		if postsContainerStatuses(f) {
			for _, path := range [][]string{containerStatusesPath, initContainerStatusesPath} {
				if ownsField(f.FieldsV1.GetRawBytes(), path...) {
					paths = append(paths, path)
				}
			}
		}
		if len(paths) == 0 {
			continue
		}
		kept = append(kept, metav1.ManagedFieldsEntry{Manager: f.Manager, Operation: f.Operation, APIVersion: f.APIVersion,
			Time: f.Time, FieldsType: f.FieldsType, FieldsV1: metav1.NewFieldsV1(string(fieldsOf(paths))), Subresource: f.Subresource})
	}
	return kept
}

// fieldsOf is the fieldsV1 that owns paths, and nothing else.
func fieldsOf(paths [][]string) []byte {
	root := map[string]any{}
	for _, path := range paths {
		node := root
		for _, key := range path {
			next, ok := node[key].(map[string]any)
			if !ok {
				next = map[string]any{}
				node[key] = next
			}
			node = next
		}
	}
	raw, _ := json.Marshal(root) // maps of maps always marshal
	return raw
}

// ownsField reports whether a managedFields entry's fieldsV1 holds path.
func ownsField(fieldsV1 []byte, path ...string) bool {
	var fields map[string]json.RawMessage
	for _, key := range path {
		if json.Unmarshal(fieldsV1, &fields) != nil {
			return false
		}
		next, ok := fields[key]
		if !ok {
			return false
		}
		fieldsV1, fields = next, nil
	}
	return true
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// workerStopped: a worker (a regular container) ran since the agent
// started, and some worker does not run now. The restart condition counts
// only then. After an API server outage the kubelet was seen to post it
// dated after the new agent's start: once every container ran again, and
// at the sync, while the workers still waited for the barrier (a second
// group restart each time). A restart that begins after the agent's start
// stops a worker that ran in the agent's epoch.
func workerStopped(pod *corev1.Pod, agentStarted time.Time) bool {
	ran := false
	for _, c := range pod.Status.ContainerStatuses {
		for _, started := range []metav1.Time{startedAt(c.State), startedAt(c.LastTerminationState)} {
			ran = ran || (!started.IsZero() && !started.Time.Before(agentStarted))
		}
	}
	running := 0
	for _, c := range pod.Status.ContainerStatuses {
		if c.State.Running != nil {
			running++
		}
	}
	return ran && running < len(pod.Spec.Containers)
}

func startedAt(s corev1.ContainerState) metav1.Time {
	switch {
	case s.Running != nil:
		return s.Running.StartedAt
	case s.Terminated != nil:
		return s.Terminated.StartedAt
	}
	return metav1.Time{}
}

// agentStart is when the Pod's agent sidecar (the restartable init
// container with a RestartAllContainers rule) last started, if it runs.
func agentStart(pod *corev1.Pod) (time.Time, bool) {
	i := sidecar.Index(pod.Spec)
	if i < 0 {
		return time.Time{}, false
	}
	name := pod.Spec.InitContainers[i].Name
	for _, c := range pod.Status.InitContainerStatuses {
		if c.Name == name && c.State.Running != nil && !c.State.Running.StartedAt.IsZero() {
			return c.State.Running.StartedAt.Time, true
		}
	}
	return time.Time{}, false
}

// EndsJob reports whether the Pod's failure ends its Job rather than its
// group: the first rule of the Job's podFailurePolicy that matches the Pod
// (as the Job controller matches them) fails the Job or the Pod's index.
// Such a failure must not start a group restart: the Job fails, and the
// JobSet's failure policy decides (for example FailJobSet at once).
//
// Rules are matched on containers that have terminated already, before the
// Pod is Failed, because the group restart would otherwise start first.
// Exit code 0 never matches, as in the Job controller.
func EndsJob(pod *corev1.Pod, policy *batchv1.PodFailurePolicy) bool {
	if policy == nil {
		return false
	}
	for _, rule := range policy.Rules {
		if !ruleMatches(pod, rule) {
			continue
		}
		return rule.Action == batchv1.PodFailurePolicyActionFailJob || rule.Action == batchv1.PodFailurePolicyActionFailIndex
	}
	return false
}

func ruleMatches(pod *corev1.Pod, rule batchv1.PodFailurePolicyRule) bool {
	if r := rule.OnExitCodes; r != nil {
		for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
			for _, c := range statuses {
				t := c.State.Terminated
				if t == nil || t.ExitCode == 0 || (r.ContainerName != nil && *r.ContainerName != c.Name) {
					continue
				}
				if slices.Contains(r.Values, t.ExitCode) == (r.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn) {
					return true
				}
			}
		}
		return false
	}
	for _, p := range rule.OnPodConditions {
		for _, c := range pod.Status.Conditions {
			if c.Type == p.Type && c.Status == p.Status {
				return true
			}
		}
	}
	return false
}
