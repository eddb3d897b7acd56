package placement

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

const rack = "example.com/rack"

// pod is a Pod of the Job with key jobKey, at completion index index,
// annotated as the controller annotates exclusively placed Pods.
func pod(name, jobKey, index string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: name,
		Labels: map[string]string{
			jobset.JobKey:                        jobKey,
			batchv1.JobCompletionIndexAnnotation: index,
			batchv1.JobNameLabel:                 "trainer-workers-0",
		},
		Annotations: annotations,
	}}
}

func TestTopologyKey(t *testing.T) {
	cases := map[string]struct {
		annotations map[string]string
		wantKey     string
		wantOK      bool
	}{
		"no annotation":        {},
		"exclusive over racks": {annotations: map[string]string{jobset.ExclusiveKey: rack}, wantKey: rack, wantOK: true},
		"empty topology key":   {annotations: map[string]string{jobset.ExclusiveKey: ""}},
		"node-selector strategy needs no Pod webhooks": {
			annotations: map[string]string{jobset.ExclusiveKey: rack, jobset.NodeSelectorStrategyKey: "true"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			key, ok := TopologyKey(pod("p", "k", "0", tc.annotations))
			if key != tc.wantKey || ok != tc.wantOK {
				t.Errorf("TopologyKey = %q, %v; want %q, %v", key, ok, tc.wantKey, tc.wantOK)
			}
		})
	}
}

func TestIsLeader(t *testing.T) {
	for index, want := range map[string]bool{"0": true, "1": false, "10": false, "": false} {
		if got := IsLeader(pod("p", "k", index, nil)); got != want {
			t.Errorf("IsLeader(index %q) = %v, want %v", index, got, want)
		}
	}
}

func TestSetLeaderAffinities(t *testing.T) {
	leader := pod("leader", "key-a", "0", nil)
	leader.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
	SetLeaderAffinities(leader, rack)
	SetLeaderAffinities(leader, rack) // admission may run twice

	want := &corev1.Affinity{
		NodeAffinity: &corev1.NodeAffinity{},
		PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: jobset.JobKey, Operator: metav1.LabelSelectorOpIn, Values: []string{"key-a"}},
			}},
			TopologyKey: rack,
		}}},
		PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: jobset.JobKey, Operator: metav1.LabelSelectorOpExists},
				{Key: jobset.JobKey, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"key-a"}},
			}},
			TopologyKey:       rack,
			NamespaceSelector: &metav1.LabelSelector{},
		}}},
	}
	if diff := cmp.Diff(want, leader.Spec.Affinity); diff != "" {
		t.Errorf("affinity (-want +got):\n%s", diff)
	}
}

func TestDomain(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{rack: "rack-a"}}}
	if d, err := Domain(node, rack); d != "rack-a" || err != nil {
		t.Errorf("Domain = %q, %v; want rack-a", d, err)
	}
	if _, err := Domain(node, "example.com/zone"); err == nil {
		t.Error("Domain of a node without the label: want an error naming the label")
	}
}

func TestLeaderNotReady(t *testing.T) {
	follower := pod("follower", "k", "1", nil)
	unscheduled := pod("leader", "k", "0", nil)
	scheduled := unscheduled.DeepCopy()
	scheduled.Spec.NodeName = "n1"
	cases := map[string]struct {
		leader  *corev1.Pod
		wantErr bool
	}{
		"no leader yet":        {leader: nil, wantErr: true},
		"leader not scheduled": {leader: unscheduled, wantErr: true},
		"leader has its node":  {leader: scheduled},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := LeaderNotReady(follower, tc.leader); (err != nil) != tc.wantErr {
				t.Errorf("LeaderNotReady = %v, want error: %v", err, tc.wantErr)
			}
		})
	}
}

func TestMisplacedFollowers(t *testing.T) {
	pinned := func(name, domain string) corev1.Pod {
		p := pod(name, "k", "1", nil)
		PinToDomain(p, rack, domain)
		return *p
	}
	terminating := pinned("terminating", "rack-a")
	terminating.DeletionTimestamp = &metav1.Time{}
	pods := []corev1.Pod{
		*pod("leader", "k", "0", nil), // the leader is never misplaced
		pinned("stays", "rack-b"),
		pinned("moved-away", "rack-a"),
		*pod("unpinned", "k", "2", nil),
		terminating,
	}
	var got []string
	for _, p := range MisplacedFollowers(pods, rack, "rack-b") {
		got = append(got, p.Name)
	}
	if diff := cmp.Diff([]string{"moved-away", "unpinned"}, got); diff != "" {
		t.Errorf("misplaced followers (-want +got):\n%s", diff)
	}
}

func TestLeader(t *testing.T) {
	pod := func(name string, phase corev1.PodPhase, deleting bool) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: "n"}, Status: corev1.PodStatus{Phase: phase}}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{}
		}
		return p
	}
	cases := map[string]struct {
		pods      []corev1.Pod
		want      string
		wantLeads bool
	}{
		"none": {},
		"a failed predecessor and its replacement":   {pods: []corev1.Pod{pod("old", corev1.PodFailed, false), pod("new", corev1.PodPending, false)}, want: "new", wantLeads: true},
		"the replacement listed first":               {pods: []corev1.Pod{pod("new", corev1.PodRunning, false), pod("old", corev1.PodFailed, false)}, want: "new", wantLeads: true},
		"a terminating predecessor":                  {pods: []corev1.Pod{pod("old", corev1.PodRunning, true), pod("new", corev1.PodPending, false)}, want: "new", wantLeads: true},
		"only a terminating one":                     {pods: []corev1.Pod{pod("old", corev1.PodRunning, true)}, want: "old", wantLeads: true},
		"a succeeded one before a failed one":        {pods: []corev1.Pod{pod("failed", corev1.PodFailed, false), pod("done", corev1.PodSucceeded, false)}, want: "done", wantLeads: true},
		"only a failed one, which leads no follower": {pods: []corev1.Pod{pod("old", corev1.PodFailed, false)}, want: "old"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Leader(tc.pods)
			if tc.want == "" {
				if got != nil {
					t.Fatalf("Leader = %s, want none", got.Name)
				}
				return
			}
			if got == nil || got.Name != tc.want {
				t.Fatalf("Leader = %v, want %s", got, tc.want)
			}
			if Leads(got) != tc.wantLeads {
				t.Errorf("Leads(%s) = %t, want %t", got.Name, !tc.wantLeads, tc.wantLeads)
			}
		})
	}
}
