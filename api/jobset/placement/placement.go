// Package placement implements exclusive placement
// (alpha.jobset.sigs.k8s.io/exclusive-topology): each child Job of a JobSet
// gets a topology domain (the value of a node label) to itself.
//
// The leader Pod of a Job (completion index 0) carries a Pod affinity to its
// own Job and an anti-affinity to every other Job, both over the topology
// key, so the scheduler gives it a domain no other Job uses. The followers
// are not admitted until the leader is scheduled, and are then pinned to the
// leader's domain with a node selector. Because a leader can be rescheduled
// into another domain after its followers were admitted, a reconciler
// deletes followers whose node selector no longer matches their leader.
//
// The functions here are pure, and shared by the two components that must
// agree on them: the Pod webhooks (webhooks/pod), which place leaders and pin
// followers, and the controller's reconciler
// (controllers/placementcontroller), which deletes followers pinned to a
// domain their leader left. Both read Pods and Nodes and call them.
package placement

import (
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// TopologyKey returns the node label that pod's Job is placed exclusively
// over, and whether pod uses affinity-based exclusive placement at all. The
// node-selector strategy (nodes pre-labelled per Job) needs no Pod webhooks.
func TopologyKey(pod *corev1.Pod) (string, bool) {
	key := pod.Annotations[jobset.ExclusiveKey]
	if key == "" {
		return "", false
	}
	if _, nodeSelector := pod.Annotations[jobset.NodeSelectorStrategyKey]; nodeSelector {
		return "", false
	}
	return key, true
}

// IsLeader reports whether pod is its Job's leader: the Pod of completion
// index 0, which picks the domain its followers join.
func IsLeader(pod *corev1.Pod) bool {
	return pod.Labels[batchv1.JobCompletionIndexAnnotation] == "0"
}

// LeaderSelector selects the leader Pod of follower's Job.
func LeaderSelector(follower *corev1.Pod) labels.Selector {
	return labels.SelectorFromSet(labels.Set{
		jobset.JobKey:                        follower.Labels[jobset.JobKey],
		batchv1.JobCompletionIndexAnnotation: "0",
	})
}

// JobSelector selects every Pod of pod's Job.
func JobSelector(pod *corev1.Pod) labels.Selector {
	return labels.SelectorFromSet(labels.Set{jobset.JobKey: pod.Labels[jobset.JobKey]})
}

// LabelPriority labels pod with its priority (jobset.PriorityKey), which
// SetLeaderAffinities matches on; a Pod of the node-selector strategy, or
// of no priority (the API server's Priority admission is off), is left
// alone.
func LabelPriority(pod *corev1.Pod) {
	if _, nodeSelector := pod.Annotations[jobset.NodeSelectorStrategyKey]; nodeSelector || pod.Spec.Priority == nil {
		return
	}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[jobset.PriorityKey] = strconv.Itoa(int(*pod.Spec.Priority))
}

// SetLeaderAffinities makes the scheduler put leader into a domain where
// Pods of its own Job may run and Pods of no other JobSet Job (in any
// namespace) of leader's priority do (LabelPriority). Adding them twice
// changes nothing, so admission may run again.
func SetLeaderAffinities(leader *corev1.Pod, topologyKey string) {
	jobKey := leader.Labels[jobset.JobKey]
	sameJob := corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: jobset.JobKey, Operator: metav1.LabelSelectorOpIn, Values: []string{jobKey}},
		}},
		TopologyKey: topologyKey,
	}
	otherJobs := corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: jobset.JobKey, Operator: metav1.LabelSelectorOpExists},
			{Key: jobset.JobKey, Operator: metav1.LabelSelectorOpNotIn, Values: []string{jobKey}},
		}},
		TopologyKey:       topologyKey,
		NamespaceSelector: &metav1.LabelSelector{},
	}
	if priority, ok := leader.Labels[jobset.PriorityKey]; ok {
		otherJobs.LabelSelector.MatchExpressions = append(otherJobs.LabelSelector.MatchExpressions,
			metav1.LabelSelectorRequirement{Key: jobset.PriorityKey, Operator: metav1.LabelSelectorOpIn, Values: []string{priority}})
	}
	a := leader.Spec.Affinity
	if a == nil {
		a = &corev1.Affinity{}
		leader.Spec.Affinity = a
	}
	if a.PodAffinity == nil {
		a.PodAffinity = &corev1.PodAffinity{}
	}
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution =
		appendTerm(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, sameJob)
	a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution =
		appendTerm(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, otherJobs)
}

func appendTerm(terms []corev1.PodAffinityTerm, term corev1.PodAffinityTerm) []corev1.PodAffinityTerm {
	for i := range terms {
		if terms[i].String() == term.String() {
			return terms
		}
	}
	return append(terms, term)
}

// Domain returns the topology domain node belongs to: the value of its
// topologyKey label.
func Domain(node *corev1.Node, topologyKey string) (string, error) {
	v, ok := node.Labels[topologyKey]
	if !ok {
		return "", fmt.Errorf("node %s has no label %s, so it belongs to no topology domain: label every node that may run exclusively placed JobSets", node.Name, topologyKey)
	}
	return v, nil
}

// PinToDomain sets follower's node selector to its leader's domain.
func PinToDomain(follower *corev1.Pod, topologyKey, domain string) {
	if follower.Spec.NodeSelector == nil {
		follower.Spec.NodeSelector = map[string]string{}
	}
	follower.Spec.NodeSelector[topologyKey] = domain
}

// FollowsLeader reports whether follower is pinned to domain.
func FollowsLeader(follower *corev1.Pod, topologyKey, domain string) bool {
	return follower.Spec.NodeSelector[topologyKey] == domain
}

// Leader chooses the leader of a Job among the Pods of its completion
// index 0 (a leader and its predecessors): a live one, else one being
// deleted, else one that succeeded, else one that failed, which leads no
// follower (LeaderNotReady): its replacement will. Should a recreated
// leader briefly coexist with its predecessor, the live one leads. nil when
// there is none.
func Leader(pods []corev1.Pod) *corev1.Pod {
	rank := func(p *corev1.Pod) int {
		switch {
		case p.Status.Phase == corev1.PodFailed:
			return 3
		case p.Status.Phase == corev1.PodSucceeded:
			return 2
		case p.DeletionTimestamp != nil:
			return 1
		}
		return 0
	}
	var leader *corev1.Pod
	for i := range pods {
		if p := &pods[i]; leader == nil || rank(p) < rank(leader) {
			leader = p
		}
	}
	return leader
}

// Leads reports whether a leader Pod places its Job's followers: it was
// scheduled and has not failed (a failed leader's replacement chooses the
// domain anew, and may choose another).
func Leads(leader *corev1.Pod) bool {
	return leader.Spec.NodeName != "" && leader.Status.Phase != corev1.PodFailed
}

// LeaderNotReady explains why follower cannot be admitted yet, given its
// leader (nil when none exists), or returns nil when the leader is
// scheduled. The Job controller retries a refused Pod with backoff, so a
// refusal only delays the follower until the leader has a node.
func LeaderNotReady(follower, leader *corev1.Pod) error {
	job := follower.Labels[batchv1.JobNameLabel]
	switch {
	case leader == nil:
		return fmt.Errorf("exclusive placement: the leader Pod of Job %s (completion index 0) does not exist yet; followers are admitted once it is scheduled, and the Job controller retries", job)
	case leader.Spec.NodeName == "":
		return fmt.Errorf("exclusive placement: the leader Pod %s of Job %s is not scheduled yet; followers are admitted once it is, and the Job controller retries", leader.Name, job)
	case !Leads(leader):
		return fmt.Errorf("exclusive placement: the leader Pod %s of Job %s failed; followers are admitted once its replacement is scheduled, and the Job controller retries", leader.Name, job)
	}
	return nil
}

// MisplacedFollowers returns the followers among pods (Pods of one Job) that
// are not pinned to domain, the domain their leader runs in. A follower
// that ended runs nowhere, and its Job has replaced it or is done with it.
func MisplacedFollowers(pods []corev1.Pod, topologyKey, domain string) []*corev1.Pod {
	var misplaced []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		if IsLeader(p) || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
			continue
		}
		if !FollowsLeader(p, topologyKey, domain) {
			misplaced = append(misplaced, p)
		}
	}
	return misplaced
}
