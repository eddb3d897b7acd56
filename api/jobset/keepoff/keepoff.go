// Package keepoff is how a Pod is kept off nodes where its predecessors
// failed in place again and again (jobset.PodConditionReplacedOffNode): a
// required node affinity on the node's name, and, for the leader of an
// exclusively placed Job, on the topology domain too. The Pod webhook
// (webhooks/pod) writes it; the controller reads it, to know which Pods
// of a Job replaced off a node were placed before that, and which Pods
// the scheduler cannot place because of it.
package keepoff

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// nodeNameField is the field a node selector requirement matches the
// node's name by (MatchFields supports this one only).
const nodeNameField = "metadata.name"

// Add requires, in every node selector term of the Pod's required node
// affinity (one term when it has none), that the node not be one of nodes.
func Add(pod *corev1.Pod, nodes []string) {
	if len(nodes) == 0 {
		return
	}
	addRequirement(pod, func(term *corev1.NodeSelectorTerm) {
		term.MatchFields = append(term.MatchFields, corev1.NodeSelectorRequirement{
			Key: nodeNameField, Operator: corev1.NodeSelectorOpNotIn, Values: nodes})
	})
}

// AddDomains requires, in every node selector term, that the node's
// topologyKey label not be one of domains: a leader of an exclusively
// placed Job is kept out of the domains its Job was replaced off.
func AddDomains(pod *corev1.Pod, topologyKey string, domains []string) {
	if len(domains) == 0 {
		return
	}
	addRequirement(pod, func(term *corev1.NodeSelectorTerm) {
		term.MatchExpressions = append(term.MatchExpressions, corev1.NodeSelectorRequirement{
			Key: topologyKey, Operator: corev1.NodeSelectorOpNotIn, Values: domains})
	})
}

func addRequirement(pod *corev1.Pod, add func(*corev1.NodeSelectorTerm)) {
	if pod.Spec.Affinity == nil {
		pod.Spec.Affinity = &corev1.Affinity{}
	}
	if pod.Spec.Affinity.NodeAffinity == nil {
		pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	required := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if required == nil || len(required.NodeSelectorTerms) == 0 {
		required = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{}}}
		pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = required
	}
	for i := range required.NodeSelectorTerms {
		add(&required.NodeSelectorTerms[i])
	}
}

// Nodes returns the nodes the Pod's required node affinity keeps it off
// by name: those that every one of its terms excludes, sorted.
func Nodes(pod *corev1.Pod) []string {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	var common []string
	for i, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		var excluded []string
		for _, r := range term.MatchFields {
			if r.Key == nodeNameField && r.Operator == corev1.NodeSelectorOpNotIn {
				excluded = append(excluded, r.Values...)
			}
		}
		if i == 0 {
			common = excluded
			continue
		}
		common = slices.DeleteFunc(common, func(n string) bool { return !slices.Contains(excluded, n) })
	}
	slices.Sort(common)
	return slices.Compact(common)
}

// Excludes reports whether the Pod is kept off every one of nodes.
func Excludes(pod *corev1.Pod, nodes []string) bool {
	kept := Nodes(pod)
	for _, n := range nodes {
		if !slices.Contains(kept, n) {
			return false
		}
	}
	return true
}
