package jobsetcontroller

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// TestDecideScopedGroups: each named group is decided on its own Pods and
// written to its own entry. The trunk group's member joined the next
// epoch (a restart in place); the head group, still gathering past the
// stall threshold, waits for a member the finalizer does not hold yet.
func TestDecideScopedGroups(t *testing.T) {
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).EnableDNSHostnames(false).
		ReplicatedJob(wrappers.MakeReplicatedJob("trunk").InPlaceReady().InPlaceGroup("trunk").Obj()).
		ReplicatedJob(wrappers.MakeReplicatedJob("head").InPlaceReady().InPlaceGroup("head").Obj()).Obj()
	js.UID, js.CreationTimestamp = "uid-1", metav1.NewTime(now.Add(-time.Hour))
	js.Status.InPlaceGroups = []jobset.InPlaceGroupStatus{{Name: "trunk", SyncedEpoch: ptr.To[int32](1), DeprecatedEpoch: ptr.To[int32](0)}}
	var jobs []batchv1.Job
	var pods []corev1.Pod
	for _, at := range desiredJobs(js) {
		job := constructJob(js, at)
		jobs = append(jobs, *job)
		pods = append(pods, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: job.Name + "-0",
				Labels:      withLabel(job.Spec.Template.Labels, batchv1.JobNameLabel, job.Name),
				Annotations: map[string]string{jobset.EpochKey: "1", batchv1.JobCompletionIndexAnnotation: "0"},
				Finalizers:  []string{jobset.GroupMemberFinalizer}},
			Spec:   corev1.PodSpec{NodeName: "node-a", InitContainers: job.Spec.Template.Spec.InitContainers},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		})
	}
	pods[0].Annotations[jobset.EpochKey] = "2" // trunk's only member restarted in place, unseen
	pods[1].Finalizers = nil                   // head's member not held yet

	a := decide(&observed{js: js, children: classifyJobs(js, jobs, false), pods: pods, now: now}, time.Minute)

	st := a.status.js.Status
	if st.SyncedEpoch != nil || st.DeprecatedEpoch != nil {
		t.Errorf("the default group, which has no member, got epochs %v/%v", st.SyncedEpoch, st.DeprecatedEpoch)
	}
	if st.InPlaceRestarts != 1 {
		t.Errorf("status.inPlaceRestarts %d, want the trunk's one restart", st.InPlaceRestarts)
	}
	entry := func(name string) jobset.InPlaceGroupStatus {
		i := slices.IndexFunc(st.InPlaceGroups, func(g jobset.InPlaceGroupStatus) bool { return g.Name == name })
		if i < 0 {
			t.Fatalf("no status.inPlaceGroups entry %q in %+v", name, st.InPlaceGroups)
		}
		return st.InPlaceGroups[i]
	}
	trunk, head := entry("trunk"), entry("head")
	if got := []int32{ptr.Deref(trunk.SyncedEpoch, 0), ptr.Deref(trunk.DeprecatedEpoch, 0), trunk.InPlaceRestarts}; !slices.Equal(got, []int32{2, 1, 1}) {
		t.Errorf("trunk [synced, deprecated, restarts] %v, want [2 1 1]: a group restart no reconcile saw start, counted", got)
	}
	if c := meta.FindStatusCondition(trunk.Conditions, string(jobset.JobSetInPlaceRestarting)); c == nil || c.Reason != jobset.ReasonInPlaceRestartCompleted ||
		!strings.HasPrefix(c.Message, `in-place group "trunk": `) {
		t.Errorf("trunk's InPlaceRestarting condition %+v, want InPlaceRestartCompleted, naming the group", c)
	}
	if head.SyncedEpoch != nil || head.DeprecatedEpoch != nil || head.InPlaceRestarts != 0 {
		t.Errorf("head %+v: its epochs and restarts moved", head)
	}
	c := meta.FindStatusCondition(head.Conditions, string(jobset.JobSetGatherStalled))
	if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "do not carry the finalizer") || !strings.Contains(c.Message, pods[1].Name) {
		t.Errorf("head's GatherStalled condition %+v, want True, naming its unheld Pod %s", c, pods[1].Name)
	}
	if meta.FindStatusCondition(st.Conditions, string(jobset.JobSetGatherStalled)) != nil {
		t.Errorf("the JobSet's own GatherStalled condition is the default group's, which has no member")
	}
	if a.gatherKnown {
		t.Errorf("the Pod tally was told a gather of one group: %+v", a.gather)
	}
}

// TestFullRestartDuringAnotherGroupsRestart: a full restart is one
// recovery. While one group restarts in place (counted when it started),
// a lost index of another group escalates it, uncounted: the same as when
// no reconcile saw the first group's failure before the full restart,
// which then counts once.
func TestFullRestartDuringAnotherGroupsRestart(t *testing.T) {
	js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
		ReplicatedJob(wrappers.MakeReplicatedJob("trunk").InPlaceReady().InPlaceGroup("trunk").Obj()).
		ReplicatedJob(wrappers.MakeReplicatedJob("head").InPlaceReady().InPlaceGroup("head").Obj()).Obj()
	js.Status.InPlaceRestarts = 1
	js.Status.InPlaceGroups = []jobset.InPlaceGroupStatus{
		{Name: "trunk", SyncedEpoch: ptr.To[int32](1), DeprecatedEpoch: ptr.To[int32](0)},
		{Name: "head", SyncedEpoch: ptr.To[int32](2), DeprecatedEpoch: ptr.To[int32](2), InPlaceRestarts: 1},
	}
	trunk := inplace.GroupState(js, "trunk")
	if d := lostIndexDecision(js, trunk, "Pod js-trunk-0-0 was deleted while its worker ran"); d.kind != restartJobSet || d.countsTowardMax {
		t.Errorf("with the head group restarting: %v (counts %v), want a full restart that does not count again", d.kind, d.countsTowardMax)
	}
	js.Status.InPlaceRestarts = 0
	js.Status.InPlaceGroups[1] = jobset.InPlaceGroupStatus{Name: "head", SyncedEpoch: ptr.To[int32](1), DeprecatedEpoch: ptr.To[int32](0)}
	if d := lostIndexDecision(js, trunk, "Pod js-trunk-0-0 was deleted while its worker ran"); d.kind != restartJobSet || !d.countsTowardMax {
		t.Errorf("with no group restarting: %v (counts %v), want a full restart that counts", d.kind, d.countsTowardMax)
	}
}
