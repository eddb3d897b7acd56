package jobsetcontroller

import (
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/fastjobset/jobset/api/jobset/keepoff"
	"github.com/fastjobset/jobset/api/jobset/placement"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// Under exclusive placement the unit of placement is the Job's topology
// domain: a follower is pinned to its leader's domain. Replaced alone off
// a node where it failed again and again, a follower could never schedule
// where that node is its domain (hostname topology) or where the domain
// has no other free node (a TPU slice); its group would wait for it
// forever. So the controller replaces the whole Job: every other live Pod
// of it, the leader included, is marked Failed too, with the reason
// jobset.PodReasonReplacedWithItsJob, in the group restart the failure
// started. The Pod webhook keeps the Job's new Pods off that node and its
// leader out of the node's domain (webhooks/pod), so the leader lands in
// another domain and the followers follow it there. The group then
// restarts in place around them, counted once, as around one replacement.
//
// The rule reads only what the API holds, so a reconcile that stopped
// half way marks the rest on the next one: a Pod of such a Job that the
// webhook did not keep off the failing node was placed before the failure,
// and goes. Only while the group restart is in progress: once the group
// synced, its members are the Job's new Pods.

// withItsJob is a Pod to replace off its node along with its Job.
type withItsJob struct {
	pod *corev1.Pod
	why string
}

// failedOn is a Pod of an exclusively placed Job that is (or is about to
// be) replaced off its node for failing there again and again.
type failedOn struct {
	pod, node string
}

// replacedWithTheirJobs lists the live Pods among pods (the current
// attempt's) to replace off their node with their Job: those of an
// exclusively placed Job with a Pod replaced off a node for its failures
// (marked, or about to be: failing) that are not kept off that node.
func replacedWithTheirJobs(pods []*corev1.Pod, failing *failureInPlace) []withItsJob {
	failed := map[string][]failedOn{}
	note := func(pod *corev1.Pod, node string) {
		if _, exclusive := placement.TopologyKey(pod); !exclusive || node == "" {
			return
		}
		job := pod.Labels[batchv1.JobNameLabel]
		if !slices.ContainsFunc(failed[job], func(f failedOn) bool { return f.node == node }) {
			failed[job] = append(failed[job], failedOn{pod: pod.Name, node: node})
		}
	}
	for _, pod := range pods {
		note(pod, jobset.NodeToKeepOff(pod))
	}
	if failing != nil && failing.replace {
		note(failing.pod, failing.pod.Spec.NodeName)
	}
	if len(failed) == 0 {
		return nil
	}
	var replace []withItsJob
	for _, pod := range pods {
		job := pod.Labels[batchv1.JobNameLabel]
		on := failed[job]
		if len(on) == 0 || !inplace.Live(pod) || (failing != nil && failing.replace && pod.Name == failing.pod.Name) {
			continue
		}
		nodes := make([]string, len(on))
		for i, f := range on {
			nodes[i] = f.node
		}
		if keepoff.Excludes(pod, nodes) {
			continue // placed since: the webhook kept it off
		}
		topologyKey, _ := placement.TopologyKey(pod)
		blamed := make([]string, len(on))
		for i, f := range on {
			blamed[i] = fmt.Sprintf("Pod %s on node %s", f.pod, f.node)
		}
		replace = append(replace, withItsJob{pod: pod, why: fmt.Sprintf(
			"Pod %s is replaced with its Job %s, placed exclusively over %s: %s failed in place again and again, and the Job moves to another domain as a whole (a follower follows its leader's domain)",
			pod.Name, job, topologyKey, strings.Join(blamed, ", "))})
	}
	return replace
}

// keptOffReportLimit bounds how many Pods the KeptOffNodes report names.
const keptOffReportLimit = 5

// keptOffUnschedulable reports the Pods among pods (the current attempt's)
// that the scheduler could not place and that are kept off nodes where
// their predecessors failed again and again: a replacement Pending for
// good is otherwise silent, and the group gathering for it only says
// that it has not joined. Whether the keep-off alone holds it is the
// scheduler's to say: its message is quoted. "" when there are none.
func keptOffUnschedulable(pods []*corev1.Pod) string {
	var lines []string
	more := 0
	for _, pod := range pods {
		nodes := keepoff.Nodes(pod)
		scheduled := podCondition(pod, corev1.PodScheduled)
		if len(nodes) == 0 || pod.Spec.NodeName != "" || pod.Status.Phase != corev1.PodPending ||
			scheduled == nil || scheduled.Status != corev1.ConditionFalse || scheduled.Reason != corev1.PodReasonUnschedulable {
			continue
		}
		if len(lines) == keptOffReportLimit {
			more++
			continue
		}
		where := "where an earlier Pod of its index failed in place again and again"
		if topologyKey, exclusive := placement.TopologyKey(pod); exclusive {
			where = fmt.Sprintf("where Pods of its Job failed in place again and again; its Job is placed exclusively over %s and needs a free domain without them", topologyKey)
			if !placement.IsLeader(pod) {
				where += " (a follower goes where its leader is)"
			}
		}
		lines = append(lines, fmt.Sprintf("Pod %s is kept off node %s, %s, and cannot be scheduled: %s",
			pod.Name, strings.Join(nodes, ", "), where, scheduled.Message))
	}
	if len(lines) == 0 {
		return ""
	}
	if more > 0 {
		lines = append(lines, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(lines, "; ") + ". Free or add nodes it may use; to let it back on a repaired node, delete the Pods marked " +
		string(jobset.PodConditionReplacedOffNode) + " there and this Pod"
}
