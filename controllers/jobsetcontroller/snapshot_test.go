package jobsetcontroller

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
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

	s := inplace.SnapshotOf(js, inplace.DefaultGroup(js), []corev1.Pod{fatal, sibling, otherJob, pod("b-1", "js-workers-1")}, nil, nil, nil)
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

// What the snapshot takes from the Jobs. The
// expected count leaves out the indexes a Job counts complete (the Pods
// that completed them may be gone); a Pod's index is its Job and
// completion index; a Job whose failure is decided (FailureTarget) dooms its
// Pods, which its controller deletes next.
func TestEpochSnapshotReadsTheJobs(t *testing.T) {
	rj := wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(2).InPlaceReady().Obj()
	js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).ReplicatedJob(rj).Obj()
	js.UID = "uid"
	pod := func(name, job, index string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			jobset.RestartsKey: "0", jobset.JobSetUIDKey: "uid", jobset.ReplicatedJobNameKey: "workers", batchv1.JobNameLabel: job,
		}, Annotations: map[string]string{jobset.EpochKey: "1", batchv1.JobCompletionIndexAnnotation: index},
			Finalizers: []string{jobset.GroupMemberFinalizer}}}
	}
	job := func(name, completed string, conditions ...batchv1.JobConditionType) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{jobset.ReplicatedJobNameKey: "workers"}},
			Status: batchv1.JobStatus{CompletedIndexes: completed}}
		for _, c := range conditions {
			j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: c, Status: corev1.ConditionTrue})
		}
		return j
	}
	oldFailed := pod("a-0-old", "js-workers-0", "0")
	oldFailed.Status.Phase = corev1.PodFailed
	deleting := pod("b-0", "js-workers-1", "0")
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	notHeldYet := pod("a-1", "js-workers-0", "1")
	notHeldYet.Finalizers = nil
	pods := []corev1.Pod{oldFailed, notHeldYet, deleting}
	jobs := []*batchv1.Job{job("js-workers-0", "0"), job("js-workers-1", "", batchv1.JobFailureTarget)}

	s := inplace.SnapshotOf(js, inplace.DefaultGroup(js), pods, jobs, nil, nil)
	if s.ExpectedPods != 3 {
		t.Errorf("ExpectedPods = %d, want 3: four indexes, one complete", s.ExpectedPods)
	}
	want := []inplace.Pod{
		{Name: "a-0-old", Index: "js-workers-0/0", IndexComplete: true, Epoch: "1", Failed: true},
		{Name: "a-1", Index: "js-workers-0/1", Epoch: "1", Unheld: true},
		{Name: "b-0", Index: "js-workers-1/0", Epoch: "1", Deleting: true, EndsJob: true},
	}
	if diff := cmp.Diff(want, s.Pods); diff != "" {
		t.Errorf("Pods (-want +got):\n%s", diff)
	}
}

// Decide reads failure signals only in sync: while the group gathers,
// the snapshot leaves them out, and with them the managedFields check of
// every restarting Pod.
func TestEpochSnapshotReadsSignalsOnlyInSync(t *testing.T) {
	rj := wrappers.MakeReplicatedJob("workers").Replicas(1).Pods(1).InPlaceReady().Obj()
	agentUp := metav1.NewTime(time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC))
	failing := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "a-0", Labels: map[string]string{
			jobset.RestartsKey: "0", jobset.JobSetUIDKey: "uid", jobset.ReplicatedJobNameKey: "workers", batchv1.JobNameLabel: "js-workers-0",
		}, Annotations: map[string]string{jobset.EpochKey: "1"}},
		Spec: rj.Template.Spec.Template.Spec,
		Status: corev1.PodStatus{
			InitContainerStatuses: []corev1.ContainerStatus{{Name: agentspec.ContainerName,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: agentUp}}}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "worker", State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.NewTime(agentUp.Add(time.Minute))}}}},
		},
	}
	for name, tc := range map[string]struct {
		deprecated int32
		sign       bool
	}{"in sync": {deprecated: 0, sign: true}, "gathering": {deprecated: 1}} {
		t.Run(name, func(t *testing.T) {
			js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).ReplicatedJob(rj).Obj()
			js.UID = "uid"
			js.Status.SyncedEpoch, js.Status.DeprecatedEpoch = ptr.To[int32](1), ptr.To(tc.deprecated)
			s := inplace.SnapshotOf(js, inplace.DefaultGroup(js), []corev1.Pod{failing}, nil, nil, nil)
			if got := s.Pods[0].FailureSignal; (got != "") != tc.sign {
				t.Errorf("FailureSignal = %q, want a sign: %v", got, tc.sign)
			}
		})
	}
}

// A Pod the controller marked Failed, to replace it off its node or because
// its node was lost, stays out of its group whatever phase its kubelet
// writes back, and counts as stopping until the kubelet reports every
// container stopped.
func TestReadPodMarkedFailed(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	stopped := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137}}
	replacedOffNode := corev1.PodCondition{Type: jobset.PodConditionReplacedOffNode, Status: corev1.ConditionTrue}
	nodeLost := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: ReasonNodeLost}
	marked := func(mark corev1.PodCondition, phase corev1.PodPhase, agent, worker corev1.ContainerState) *corev1.Pod {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "w-0", Annotations: map[string]string{jobset.EpochKey: "4"}}}
		pod.Status.Phase = phase
		pod.Status.Conditions = []corev1.PodCondition{mark}
		pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "jobset-agent", State: agent}}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", State: worker}}
		return pod
	}
	for name, tc := range map[string]struct {
		pod             *corev1.Pod
		live, stillRuns bool
	}{
		"replaced, its containers not stopped yet":                {marked(replacedOffNode, corev1.PodFailed, running, running), false, true},
		"replaced, its kubelet wrote the running phase back":      {marked(replacedOffNode, corev1.PodRunning, running, running), false, true},
		"replaced, its agent stopped but its worker not yet":      {marked(replacedOffNode, corev1.PodFailed, stopped, running), false, true},
		"replaced, its kubelet stopped every container":           {marked(replacedOffNode, corev1.PodFailed, stopped, stopped), false, false},
		"its node lost, its kubelet silent":                       {marked(nodeLost, corev1.PodFailed, running, running), false, true},
		"its node lost, its kubelet wrote the running phase back": {marked(nodeLost, corev1.PodRunning, running, running), false, true},
		"its node lost, its kubelet stopped every container":      {marked(nodeLost, corev1.PodFailed, stopped, stopped), false, false},
		"a Pod that failed by itself: out, and nothing runs":      {&corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed}}, false, false},
		"a running Pod: live":                                     {&corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}, true, false},
	} {
		t.Run(name, func(t *testing.T) {
			p := inplace.ReadPod(tc.pod, false)
			if live := !p.Succeeded && !p.Failed && !p.Deleting; live != tc.live || inplace.Live(tc.pod) != tc.live {
				t.Errorf("live: read %v, inplace.Live %v; want %v", live, inplace.Live(tc.pod), tc.live)
			}
			if p.StillRunning != tc.stillRuns || inplace.Stopping(tc.pod) != tc.stillRuns {
				t.Errorf("StillRunning %v, inplace.Stopping %v; want %v", p.StillRunning, inplace.Stopping(tc.pod), tc.stillRuns)
			}
		})
	}
}

func TestParseIndexes(t *testing.T) {
	for list, want := range map[string][]int{"": nil, "0": {0}, "1,3-5,9": {1, 3, 4, 5, 9}} {
		if got := sets.List(inplace.ParseIndexes(list)); !slices.Equal(got, want) {
			t.Errorf("inplace.ParseIndexes(%q) = %v, want %v", list, got, want)
		}
	}
}

// The InvalidEpoch message stays within the CRD's 32 KiB limit on a
// condition message however many Pods, and however long their values, an
// admin "reset": past it, every status write of the JobSet would fail.
func TestInvalidEpochMessageIsBounded(t *testing.T) {
	const crdMessageLimit = 32768
	invalid := func(n, valueSize int) []inplace.InvalidEpoch {
		out := make([]inplace.InvalidEpoch, n)
		for i := range out {
			out[i] = inplace.InvalidEpoch{Pod: fmt.Sprintf("%s-%d", strings.Repeat("p", 240), i),
				Value: strings.Repeat("9", valueSize), Problem: "not a decimal int32"}
		}
		return out
	}
	for name, tc := range map[string]struct {
		invalid  []inplace.InvalidEpoch
		contains []string
	}{
		"a few: each named": {invalid: invalid(3, 5), contains: []string{"p-0 ", "p-2 ", `"99999"`}},
		// Named in name order: the tenth of p-0 ... p-4999 is p-1005.
		"thousands":   {invalid: invalid(5000, 5), contains: []string{"p-1005 ", "and 4990 more"}},
		"huge values": {invalid: invalid(20, 100_000), contains: []string{`"` + strings.Repeat("9", 32) + `..."`, "and 10 more"}},
	} {
		t.Run(name, func(t *testing.T) {
			u := nextReconcile(t, statusTestJobSet(nil))
			u.setInvalidEpochs(u.groupStatus(""), tc.invalid)
			c := meta.FindStatusCondition(u.js.Status.Conditions, string(jobset.JobSetInvalidEpoch))
			if c == nil {
				t.Fatal("no InvalidEpoch condition")
			}
			if len(c.Message) > crdMessageLimit {
				t.Errorf("message is %d bytes, over the CRD's limit of %d", len(c.Message), crdMessageLimit)
			}
			for _, want := range tc.contains {
				if !strings.Contains(c.Message, want) {
					t.Errorf("message %.300q... does not contain %q", c.Message, want)
				}
			}
			// The cache lists Pods in no set order: a message that
			// followed it would be a status write at every reconcile.
			reversed := slices.Clone(tc.invalid)
			slices.Reverse(reversed)
			if describeInvalidEpochs(reversed) != describeInvalidEpochs(tc.invalid) {
				t.Errorf("the message depends on the Pods' order")
			}
		})
	}
}
