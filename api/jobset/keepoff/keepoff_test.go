package keepoff

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestAddThenNodes(t *testing.T) {
	zone := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}
	cases := map[string]struct {
		affinity *corev1.Affinity
		add      [][]string
		want     []string
	}{
		"no affinity, no nodes": {},
		"no affinity":           {add: [][]string{{"n1", "n2"}}, want: []string{"n1", "n2"}},
		"added twice, deduped":  {add: [][]string{{"n2"}, {"n1", "n2"}}, want: []string{"n1", "n2"}},
		"in every term of the user's": {
			affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{zone}}, {}}}}},
			add:  [][]string{{"n1"}},
			want: []string{"n1"},
		},
		"a node only one term of the user's excludes is not kept off": {
			affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
					{Key: nodeNameField, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"n9"}}}}, {}}}}},
			add:  [][]string{{"n1"}},
			want: []string{"n1"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Affinity: tc.affinity}}
			for _, nodes := range tc.add {
				Add(pod, nodes)
			}
			if diff := cmp.Diff(tc.want, Nodes(pod)); diff != "" {
				t.Errorf("Nodes (-want +got):\n%s", diff)
			}
			if !Excludes(pod, tc.want) || (len(tc.want) > 0 && Excludes(pod, append(tc.want, "other"))) {
				t.Errorf("Excludes disagrees with Nodes %v", tc.want)
			}
		})
	}
}

func TestAddDomainsKeepsTermsAndNodes(t *testing.T) {
	pod := &corev1.Pod{}
	Add(pod, []string{"n1"})
	AddDomains(pod, "rack", []string{"rack-a"})
	AddDomains(pod, "rack", nil)
	terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	want := []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "rack", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"rack-a"}}},
		MatchFields:      []corev1.NodeSelectorRequirement{{Key: nodeNameField, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"n1"}}},
	}}
	if diff := cmp.Diff(want, terms); diff != "" {
		t.Errorf("terms (-want +got):\n%s", diff)
	}
}
