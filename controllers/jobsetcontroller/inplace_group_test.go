package jobsetcontroller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// TestEpochSnapshotCountsOnlyTheGroup: Kubeflow
// Trainer's initializers and an MPI launcher run without the agent, outside
// the in-place group. The epoch protocol neither expects their Pods nor
// sees them: with the launcher counted, the group would wait for a Pod
// whose agent never joins, and never sync.
func TestEpochSnapshotCountsOnlyTheGroup(t *testing.T) {
	js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).
		ReplicatedJob(wrappers.MakeReplicatedJob("initializer").Pods(1).Obj()).
		ReplicatedJob(wrappers.MakeReplicatedJob("node").Replicas(2).Pods(2).InPlaceReady().Obj()).
		ReplicatedJob(wrappers.MakeReplicatedJob("launcher").Pods(1).Obj()).Obj()
	js.UID = "uid"
	js.Spec.ReplicatedJobs[1].DependsOn = []jobset.DependsOn{{Name: "initializer", Status: jobset.DependencyComplete}}
	js.Spec.ReplicatedJobs[2].DependsOn = []jobset.DependsOn{{Name: "node", Status: jobset.DependencyReady}}
	labels := func(rj, job string) map[string]string {
		return map[string]string{jobset.RestartsKey: "0", jobset.JobSetUIDKey: "uid", jobset.ReplicatedJobNameKey: rj, batchv1.JobNameLabel: job}
	}
	pod := func(name, rj, job string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels(rj, job),
			Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: "0"}}}
	}
	initializer := pod("init-0", "initializer", "js-initializer-0")
	initializer.Status.Phase = corev1.PodSucceeded
	pods := []corev1.Pod{initializer, pod("node-0-0", "node", "js-node-0"), pod("launcher-0", "launcher", "js-launcher-0")}
	jobs := []*batchv1.Job{
		{ObjectMeta: metav1.ObjectMeta{Name: "js-initializer-0", Labels: labels("initializer", "")},
			Status: batchv1.JobStatus{CompletedIndexes: "0"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "js-node-0", Labels: labels("node", "")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "js-launcher-0", Labels: labels("launcher", "")}},
	}

	s := inplace.SnapshotOf(js, inplace.DefaultGroup(js), pods, jobs, nil, nil)
	if s.ExpectedPods != 4 {
		t.Errorf("ExpectedPods = %d, want 4: the node replicatedJob's 2 x 2, not the initializer's nor the launcher's", s.ExpectedPods)
	}
	var names []string
	for _, p := range s.Pods {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"node-0-0"}, names); diff != "" {
		t.Errorf("Pods (-want +got):\n%s", diff)
	}
}
