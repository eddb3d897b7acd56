package jobsetcontroller

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// TestLostMembers: a member is lost once its node has been silent for its
// bound, the longest of the threshold and its agent's fence plus a renew
// interval plus the kubelet's restart of the Pod.
func TestLostMembers(t *testing.T) {
	js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").InPlaceReady().Obj()).
		ReplicatedJob(wrappers.MakeReplicatedJob("launcher").Obj()).Obj()
	js.UID = "uid-1"
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	silences := map[string]time.Duration{"dead": time.Minute, "late": 29 * time.Second, "slow": 20 * time.Second, "fine": 3 * time.Second}
	silence := func(node string) (time.Duration, time.Duration, bool) {
		s, ok := silences[node]
		return s, 10 * time.Second, ok
	}
	fence := func(seconds string) func(*corev1.Pod) { return agentEnv(agentspec.EnvFenceAfterSeconds, seconds) }
	// Two silent nodes at once are more than one witness allows
	// (TestLostMembersSharedSilence).
	witnesses2 := agentEnv(agentspec.EnvFenceWitnesses, "2")
	cases := []struct {
		name      string
		pods      []corev1.Pod
		want      []string
		lookAgain time.Duration
	}{
		{"a member on a node silent past the bound (15 + 10 + 5 s)", []corev1.Pod{memberOn("w-0", "dead")}, []string{"w-0"}, 0},
		{"members on nodes silent for less: look again when the first bound is reached", []corev1.Pod{memberOn("w-0", "slow", witnesses2), memberOn("w-1", "late", witnesses2)}, nil, time.Second},
		{"a node silent for less than a renew interval and a half is not suspect", []corev1.Pod{memberOn("w-0", "fine")}, nil, 0},
		{"a longer fence makes a longer bound", []corev1.Pod{memberOn("w-0", "dead", fence("50"))}, nil, 5 * time.Second},
		{"an agent that does not fence is never declared lost", []corev1.Pod{memberOn("w-0", "dead", fence("0"))}, nil, 0},
		{"a node whose Lease was never seen", []corev1.Pod{memberOn("w-0", "unknown")}, nil, 0},
		{"a member being deleted on a dead node never ends there: lost", []corev1.Pod{memberOn("w-0", "dead", func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} })}, []string{"w-0"}, 0},
		{"not members: ended, another attempt, outside the group, not scheduled", []corev1.Pod{
			memberOn("ended", "dead", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }),
			memberOn("old", "dead", func(p *corev1.Pod) { p.Labels[jobset.RestartsKey] = "1" }),
			memberOn("launcher", "dead", func(p *corev1.Pod) { p.Labels[jobset.ReplicatedJobNameKey] = "launcher" }),
			memberOn("pending", ""),
		}, nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lost, lookAgain := lostMembers(js, tc.pods, nodeLoss{silence: silence, threshold: DefaultNodeLossThreshold}, now)
			var names []string
			for _, m := range lost {
				names = append(names, m.pod.Name)
				if !strings.Contains(m.why, "node "+m.node+" has not renewed its Lease for") {
					t.Errorf("why %q does not name the node and the silence", m.why)
				}
				if want := now.Add(-silences[m.node]); !m.lastHeard.Equal(want) {
					t.Errorf("last heard of at %s, want %s: the node's last renewal the controller saw", m.lastHeard, want)
				}
			}
			if strings.Join(names, ",") != strings.Join(tc.want, ",") || lookAgain != tc.lookAgain {
				t.Errorf("lost %v, look again in %s; want %v, %s", names, lookAgain, tc.want, tc.lookAgain)
			}
		})
	}
	if lost, _ := lostMembers(js, []corev1.Pod{memberOn("w-0", "dead")}, nodeLoss{silence: silence}, now); lost != nil {
		t.Errorf("with no threshold, lost %v", lost)
	}
}

// TestLostMembersSharedSilence: more silent nodes of a JobSet than its
// agents' witnesses (FENCE_WITNESSES) may be an outage they share, through
// which the agents keep their workers running: their members are declared
// lost only after the agents' defer limit.
func TestLostMembersSharedSilence(t *testing.T) {
	js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").InPlaceReady().Obj()).Obj()
	js.UID = "uid-1"
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	silences := map[string]time.Duration{"a": time.Minute, "b": time.Minute, "c": 3 * time.Second, "long-a": 11 * time.Minute, "long-b": 11 * time.Minute}
	loss := nodeLoss{threshold: DefaultNodeLossThreshold, silence: func(node string) (time.Duration, time.Duration, bool) {
		s, ok := silences[node]
		return s, 10 * time.Second, ok
	}}
	env := agentEnv
	declaredLost := func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: ReasonNodeLost}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	}
	deferred := agentspec.DefaultFenceDeferLimitSeconds*time.Second + 10*time.Second + fenceRestart + agentspec.WitnessPromiseSeconds*time.Second
	cases := []struct {
		name      string
		pods      []corev1.Pod
		want      []string
		lookAgain time.Duration
	}{
		{"one silent node: its member is lost after the bound", []corev1.Pod{memberOn("w-0", "a"), memberOn("w-1", "c")}, []string{"w-0"}, 0},
		{"two silent nodes, one witness asked for: the outage may be shared, wait for the defer limit",
			[]corev1.Pod{memberOn("w-0", "a"), memberOn("w-1", "b"), memberOn("w-2", "c")}, nil, deferred - time.Minute},
		{"two silent nodes past the defer limit: both lost",
			[]corev1.Pod{memberOn("w-0", "long-a"), memberOn("w-1", "long-b"), memberOn("w-2", "c")}, []string{"w-0", "w-1"}, 0},
		{"a member declared lost that may still run counts: its node is silent too",
			[]corev1.Pod{memberOn("w-0", "a"), memberOn("gone", "b", declaredLost), memberOn("w-1", "c")}, nil, deferred - time.Minute},
		{"a member declared lost that its kubelet reported stopped does not count",
			[]corev1.Pod{memberOn("w-0", "a"), memberOn("gone", "b", declaredLost, func(p *corev1.Pod) {
				p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}
			}), memberOn("w-1", "c")}, []string{"w-0"}, 0},
		{"a Pod of an earlier attempt that may still run counts",
			[]corev1.Pod{memberOn("w-0", "a"), memberOn("old", "b", func(p *corev1.Pod) { p.Labels[jobset.RestartsKey] = "1"; p.DeletionTimestamp = &metav1.Time{} })},
			nil, deferred - time.Minute},
		{"two silent nodes, two witnesses asked for: both lost",
			[]corev1.Pod{memberOn("w-0", "a", env(agentspec.EnvFenceWitnesses, "2")), memberOn("w-1", "b", env(agentspec.EnvFenceWitnesses, "2"))}, []string{"w-0", "w-1"}, 0},
		{"the least number of witnesses of the group's agents rules",
			[]corev1.Pod{memberOn("w-0", "a", env(agentspec.EnvFenceWitnesses, "2")), memberOn("w-1", "b"), memberOn("w-2", "c", env(agentspec.EnvFenceWitnesses, "2"))}, nil, deferred - time.Minute},
		{"agents that ask no witness fence alone: no wait",
			[]corev1.Pod{memberOn("w-0", "a", env(agentspec.EnvFenceWitnesses, "0")), memberOn("w-1", "b", env(agentspec.EnvFenceWitnesses, "0"))}, []string{"w-0", "w-1"}, 0},
		{"a shorter defer limit makes a shorter wait",
			[]corev1.Pod{memberOn("w-0", "a", env(agentspec.EnvFenceDeferLimitSeconds, "10")), memberOn("w-1", "b", env(agentspec.EnvFenceDeferLimitSeconds, "10"))},
			[]string{"w-0", "w-1"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lost, lookAgain := lostMembers(js, tc.pods, loss, now)
			var names []string
			for _, m := range lost {
				names = append(names, m.pod.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.want, ",") || lookAgain != tc.lookAgain {
				t.Errorf("lost %v, look again in %s; want %v, %s", names, lookAgain, tc.want, tc.lookAgain)
			}
			for _, m := range lost {
				if silent, _ := loss.sharedSilence(js, tc.pods); silent > 1 && !strings.Contains(m.why, "silent at once") && !strings.Contains(m.why, "the bound is") {
					t.Errorf("why %q does not say which bound applied", m.why)
				}
			}
		})
	}
}

// memberOn is a running member of group "workers" of JobSet uid-1 on node,
// with the agent as injection makes it.
func memberOn(name, node string, mutate ...func(*corev1.Pod)) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			jobset.JobSetUIDKey: "uid-1", jobset.RestartsKey: "0", jobset.ReplicatedJobNameKey: "workers"}},
		Spec:   corev1.PodSpec{NodeName: node, InitContainers: []corev1.Container{sidecar.Container(sidecar.Options{Image: "agent"})}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, m := range mutate {
		m(&p)
	}
	return p
}

// agentEnv sets a variable of the Pod's agent.
func agentEnv(name, value string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		i := sidecar.Index(p.Spec)
		p.Spec.InitContainers[i].Env = append(p.Spec.InitContainers[i].Env, corev1.EnvVar{Name: name, Value: value})
	}
}
