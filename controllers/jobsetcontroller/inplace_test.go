package jobsetcontroller

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// A fatal exit code (podFailurePolicy FailJob) dooms its Job: the failed
// Pod and the siblings the Job controller deletes next are no group
// members lost; the other Job's Pods are.
func TestEpochSnapshotDoomedJobs(t *testing.T) {
	rj := wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(2).InPlaceReady().Obj()
	rj.Template.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
		Action:      batchv1.PodFailurePolicyActionFailJob,
		OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{ContainerName: ptr.To("worker"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
	}}}
	js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).ReplicatedJob(rj).Obj()
	js.UID = "uid"
	pod := func(name, job string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			jobset.RestartsKey: "0", jobset.JobSetUIDKey: "uid", jobset.ReplicatedJobNameKey: "workers", batchv1.JobNameLabel: job,
		}, Annotations: map[string]string{jobset.EpochKey: "1"}}}
	}
	fatal := pod("a-0", "js-workers-0")
	fatal.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: 42}}}}
	sibling := pod("a-1", "js-workers-0")
	sibling.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	otherJob := pod("b-0", "js-workers-1")
	otherJob.DeletionTimestamp = &metav1.Time{Time: time.Now()}

	s := epochSnapshot(js, []corev1.Pod{fatal, sibling, otherJob, pod("b-1", "js-workers-1")}, time.Time{})
	got := map[string]bool{}
	for _, p := range s.Pods {
		got[p.Name] = p.EndsJob
	}
	want := map[string]bool{"a-0": true, "a-1": true, "b-0": false, "b-1": false}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("Pod %s: EndsJob = %v, want %v", name, got[name], w)
		}
	}
}
