package jobsetcontroller

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// A worker that fails again and again in place on the same node (a broken
// GPU) burns the restart budget there: an in-place restart keeps the Pod,
// and so the node. After Limit failures in place of the same Pod within
// Window, the controller marks the Pod Failed instead, with the condition
// ConditionReplacedOffNode, and the Pod webhook keeps its replacement off
// that node (webhooks/pod). That is part of the group restart the last
// failure started, and counts with it.
//
// The failures are the group restarts that Pod started (Decide's
// FailedInPlace), recorded on the Pod in the annotation
// FailuresInPlaceAnnotation as the controller's times: the kubelet keeps
// no trace of which container started an in-place restart.

// FailuresInPlaceAnnotation and ConditionReplacedOffNode: the API's.
const (
	FailuresInPlaceAnnotation = jobset.FailuresInPlaceAnnotation
	ConditionReplacedOffNode  = jobset.PodConditionReplacedOffNode
)

// ReasonRepeatedFailures is the reason of that condition and its event.
const ReasonRepeatedFailures = jobset.PodReasonRepeatedFailures

// Defaults of the controller's --repeated-failure-limit and
// --repeated-failure-window: a Pod that failed in place three times within
// ten minutes is not worth a fourth try on the same node.
const (
	DefaultRepeatedFailureLimit  = 3
	DefaultRepeatedFailureWindow = 10 * time.Minute
)

// repeatedFailures is how the reconciler tells a Pod to replace off its
// node: Limit 0 turns it off.
type repeatedFailures struct {
	Limit  int
	Window time.Duration
}

// failureInPlace is what to do about a Pod that just failed in place: the
// annotation to write, and whether to replace it off its node, and why.
type failureInPlace struct {
	pod        *corev1.Pod
	annotation string
	replace    bool
	why        string
}

// recordFailureInPlace adds now to the Pod's failures in place, keeping
// those within the window, and says whether they reached the limit.
func recordFailureInPlace(pod *corev1.Pod, now time.Time, policy repeatedFailures) failureInPlace {
	var times []time.Time
	for _, raw := range strings.Split(pod.Annotations[FailuresInPlaceAnnotation], ",") {
		if t, err := time.Parse(time.RFC3339, raw); err == nil && now.Sub(t) < policy.Window {
			times = append(times, t)
		}
	}
	times = append(times, now)
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	if len(times) > policy.Limit {
		times = times[len(times)-policy.Limit:]
	}
	values := make([]string, len(times))
	for i, t := range times {
		values[i] = t.UTC().Format(time.RFC3339)
	}
	f := failureInPlace{pod: pod, annotation: strings.Join(values, ",")}
	if policy.Limit > 0 && len(times) >= policy.Limit && pod.Spec.NodeName != "" {
		f.replace = true
		f.why = fmt.Sprintf("Pod %s failed in place %d times within %s on node %s: its replacement is kept off that node",
			pod.Name, len(times), policy.Window, pod.Spec.NodeName)
	}
	return f
}

// failedInPlace finds the Pod Decide named, and what to do about it (nil:
// none, or the policy is off).
func failedInPlace(name string, pods []corev1.Pod, now time.Time, policy repeatedFailures) *failureInPlace {
	if name == "" || policy.Limit <= 0 {
		return nil
	}
	for i := range pods {
		if pods[i].Name == name {
			f := recordFailureInPlace(&pods[i], now, policy)
			return &f
		}
	}
	return nil
}

// phaseWrittenBack lists the Pods the controller marked Failed (replaced
// off their node, or their node lost: jobset.ControllerMark) whose phase
// no longer says so. A kubelet's status manager merges the phase it last
// computed over a terminal one it did not set, so a status it made before
// it saw the mark can write the Pod back to Pending or Running; its pod
// worker, whose latest copy of the Pod is then that one, never stops it,
// and its Job, which sees no failure, never replaces it: the group would
// wait for that rank forever. Each is marked Failed again until the phase
// holds, which it does once the kubelet has seen it (a kubelet keeps a
// terminal phase the API server shows). A Pod being deleted needs none:
// its kubelet ends it.
func phaseWrittenBack(pods []corev1.Pod) []*corev1.Pod {
	var written []*corev1.Pod
	for i := range pods {
		pod := &pods[i]
		ended := pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
		if jobset.ControllerMark(pod) != nil && !ended && pod.DeletionTimestamp == nil {
			written = append(written, pod)
		}
	}
	return written
}
