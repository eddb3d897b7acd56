package jobsetcontroller

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fastjobset/jobset/api/jobset/keepoff"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// jobPod is Pod index of Job job on node, exclusively placed over the
// hostname when exclusive.
func jobPod(job string, index int, node string, exclusive bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        job + "-" + strconv.Itoa(index) + "-" + node,
			Labels:      map[string]string{batchv1.JobNameLabel: job, batchv1.JobCompletionIndexAnnotation: strconv.Itoa(index)},
			Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: strconv.Itoa(index)},
		},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if exclusive {
		p.Annotations[jobset.ExclusiveKey] = "kubernetes.io/hostname"
	}
	return p
}

func marked(p *corev1.Pod, reason string) *corev1.Pod {
	p.Status.Phase = corev1.PodFailed
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: ConditionReplacedOffNode, Status: corev1.ConditionTrue, Reason: reason})
	return p
}

func keptOff(p *corev1.Pod, nodes ...string) *corev1.Pod {
	keepoff.Add(p, nodes)
	return p
}

func TestReplacedWithTheirJobs(t *testing.T) {
	failing := func(p *corev1.Pod) *failureInPlace { return &failureInPlace{pod: p, replace: true} }
	cases := []struct {
		name    string
		pods    []*corev1.Pod
		failing func(pods []*corev1.Pod) *failureInPlace
		want    []string
	}{
		{
			name:    "a follower about to be replaced off its node: its leader and the other followers on the node go with it, not other Jobs",
			pods:    []*corev1.Pod{jobPod("w-0", 0, "x", true), jobPod("w-0", 1, "x", true), jobPod("w-0", 2, "x", true), jobPod("w-1", 0, "y", true)},
			failing: func(pods []*corev1.Pod) *failureInPlace { return failing(pods[1]) },
			want:    []string{"w-0-0-x", "w-0-2-x"},
		},
		{
			name:    "a failure in place below the limit replaces nothing",
			pods:    []*corev1.Pod{jobPod("w-0", 0, "x", true), jobPod("w-0", 1, "x", true)},
			failing: func(pods []*corev1.Pod) *failureInPlace { return &failureInPlace{pod: pods[1]} },
		},
		{
			name:    "without exclusive placement the Pod goes alone",
			pods:    []*corev1.Pod{jobPod("w-0", 0, "x", false), jobPod("w-0", 1, "x", false)},
			failing: func(pods []*corev1.Pod) *failureInPlace { return failing(pods[1]) },
		},
		{
			name: "marked already (a reconcile that stopped half way): the rest go on the next one",
			pods: []*corev1.Pod{marked(jobPod("w-0", 1, "x", true), jobset.PodReasonRepeatedFailures),
				marked(jobPod("w-0", 0, "x", true), jobset.PodReasonReplacedWithItsJob), jobPod("w-0", 2, "x", true)},
			want: []string{"w-0-2-x"},
		},
		{
			name: "Pods the webhook kept off the node were placed since, and stay; ended and deleted ones need nothing",
			pods: []*corev1.Pod{marked(jobPod("w-0", 1, "x", true), jobset.PodReasonRepeatedFailures),
				keptOff(jobPod("w-0", 0, "z", true), "x"), keptOff(jobPod("w-0", 1, "z", true), "x"),
				func() *corev1.Pod { p := jobPod("w-0", 2, "x", true); p.Status.Phase = corev1.PodSucceeded; return p }(),
				func() *corev1.Pod { p := jobPod("w-0", 3, "x", true); p.DeletionTimestamp = &metav1.Time{}; return p }()},
		},
		{
			name: "a Job replaced with one of its Pods blames no node of its own",
			pods: []*corev1.Pod{marked(jobPod("w-0", 0, "x", true), jobset.PodReasonReplacedWithItsJob), jobPod("w-0", 1, "z", true)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var f *failureInPlace
			if tc.failing != nil {
				f = tc.failing(tc.pods)
			}
			var got []string
			for _, r := range replacedWithTheirJobs(tc.pods, f) {
				got = append(got, r.pod.Name)
				if !strings.Contains(r.why, "failed in place again and again") || !strings.Contains(r.why, "node x") {
					t.Errorf("why %q does not say which Pod failed on which node", r.why)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("replaced with their Jobs: %v; want %v", got, tc.want)
			}
		})
	}
}

func TestKeptOffUnschedulable(t *testing.T) {
	unschedulable := func(p *corev1.Pod) *corev1.Pod {
		p.Spec.NodeName, p.Status.Phase = "", corev1.PodPending
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."}}
		return p
	}
	if got := keptOffUnschedulable([]*corev1.Pod{
		jobPod("w-0", 0, "y", false),
		keptOff(jobPod("w-0", 1, "y", false), "x"), // scheduled
		unschedulable(jobPod("w-0", 2, "", false)), // kept off nothing
		func() *corev1.Pod {
			p := keptOff(jobPod("w-0", 3, "", false), "x")
			p.Status.Phase = corev1.PodPending
			return p
		}(), // not tried yet
	}); got != "" {
		t.Errorf("nothing to report, got %q", got)
	}
	got := keptOffUnschedulable([]*corev1.Pod{unschedulable(keptOff(jobPod("w-0", 0, "", true), "x"))})
	for _, want := range []string{"Pod w-0-0- is kept off node x", "placed exclusively over kubernetes.io/hostname", "0/3 nodes are available", "delete the Pods marked"} {
		if !strings.Contains(got, want) {
			t.Errorf("report %q does not say %q", got, want)
		}
	}
	got = keptOffUnschedulable([]*corev1.Pod{unschedulable(keptOff(jobPod("w-0", 2, "", false), "x"))})
	if !strings.Contains(got, "an earlier Pod of its index failed in place") {
		t.Errorf("report %q does not say why a plain replacement is kept off", got)
	}
}
