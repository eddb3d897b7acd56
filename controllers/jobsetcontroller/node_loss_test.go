package jobsetcontroller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/api/scheme"
	"github.com/fastjobset/jobset/controllers/nodeloss"
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
	js.Status.Restarts = 2 // the current attempt is 2; attempt 1 is an earlier one
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	silences := map[string]time.Duration{"dead": time.Minute, "late": 29 * time.Second, "slow": 20 * time.Second, "fine": 3 * time.Second, "long-dead": 11 * time.Minute}
	silence := func(node string) (time.Duration, time.Duration, bool) {
		s, ok := silences[node]
		return s, 10 * time.Second, ok
	}
	pod := func(name, node string, mutate ...func(*corev1.Pod)) corev1.Pod { // of restart attempt 2
		return memberOn(name, node, append([]func(*corev1.Pod){func(p *corev1.Pod) { p.Labels[jobset.RestartsKey] = "2" }}, mutate...)...)
	}
	fence := func(seconds string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.InitContainers[sidecar.Index(p.Spec)].Env = append(p.Spec.InitContainers[sidecar.Index(p.Spec)].Env,
				corev1.EnvVar{Name: agentspec.EnvFenceAfterSeconds, Value: seconds})
		}
	}
	markedLost := func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: ReasonNodeLost})
	}
	deleted := func(grace int64) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &metav1.Time{}, ptr.To(grace) }
	}
	containers := func(n int) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			for i := len(p.Spec.Containers); i < n; i++ {
				p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: fmt.Sprintf("side-%d", i), Image: "side"})
			}
		}
	}
	attempt := func(n int) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Labels[jobset.RestartsKey] = strconv.Itoa(n) }
	}
	// Two silent nodes at once are more than one witness allows
	// (TestLostMembersSharedSilence).
	witnesses2 := agentEnv(agentspec.EnvFenceWitnesses, "2")
	// An earlier attempt's witnesses hold no group of the current one: its
	// Pods wait for the deferred bound.
	deferred := defaultDeferredBound
	cases := []struct {
		name      string
		pods      []corev1.Pod
		want      []string
		lookAgain time.Duration
	}{
		{"a member on a node silent past the bound (15 + 10 + 5 s)", []corev1.Pod{pod("w-0", "dead")}, []string{"w-0"}, 0},
		{"members on nodes silent for less: look again when the first bound is reached", []corev1.Pod{pod("w-0", "slow", witnesses2), pod("w-1", "late", witnesses2)}, nil, defaultBound - 29*time.Second},
		{"a node silent for less than a renew interval and a half is not suspect", []corev1.Pod{pod("w-0", "fine")}, nil, 0},
		// A healthy node seen renewing after the controller's own quiet
		// spell was silent for that spell too, as far as it can tell.
		{"a short fence: the bound still covers the controller's quiet spell and a renew interval",
			[]corev1.Pod{pod("w-0", "slow", fence("1"))}, nil, nodeloss.QuietGap + 10400*time.Millisecond - 20*time.Second},
		{"a longer fence makes a longer bound", []corev1.Pod{pod("w-0", "dead", fence("50"))}, nil, 4650 * time.Millisecond},
		// The kubelet kills a Pod's regular containers one after another,
		// each with its 2 s grace: the worker may be the last.
		{"more regular containers make a longer bound", []corev1.Pod{pod("w-0", "late", containers(3))}, nil, 4650 * time.Millisecond},
		{"a wrapped worker is stopped by its agent: the kubelet's kills do not count, and its bound is shorter",
			[]corev1.Pod{pod("w-0", "late", containers(3), agentEnv(agentspec.EnvWrapperControl, agentspec.WrapperControl))}, []string{"w-0"}, 0},
		{"an agent that does not fence is never declared lost", []corev1.Pod{pod("w-0", "dead", fence("0"))}, nil, 0},
		// 24.8 s unrenewed, a tick, the wrapper's 3 s and the delivery
		// slack: 30.05 s.
		{"a wrapped worker whose agent fences on its node's Lease: its bound counts no renew interval, but the Lease's fence",
			[]corev1.Pod{pod("w-0", "late", agentEnv(agentspec.EnvWrapperControl, agentspec.WrapperControl), agentEnv(agentspec.EnvFenceNodeLease, "true"))}, nil, 1050 * time.Millisecond},
		{"an agent that fences on its node's Lease without a wrapper: only the kubelet stops its worker, the contact fence's bound",
			[]corev1.Pod{pod("w-0", "late", containers(3), agentEnv(agentspec.EnvFenceNodeLease, "true"))}, nil, 4650 * time.Millisecond},
		{"a node whose Lease was never seen", []corev1.Pod{pod("w-0", "unknown")}, nil, 0},
		{"a member being deleted on a dead node never ends there: lost", []corev1.Pod{pod("w-0", "dead", func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} })}, []string{"w-0"}, 0},
		{"marked lost and not deleted: deleted again, not marked again", []corev1.Pod{pod("w-0", "dead", markedLost)}, nil, 0},
		{"marked lost and deleted with no grace period: going", []corev1.Pod{pod("w-0", "dead", markedLost, deleted(0))}, nil, 0},
		// A new leadership term, or the controller's own quiet spell,
		// counts a node's silence afresh: the Pod marked before waits for
		// the bound again (fenced), and no event comes when it is reached.
		{"marked lost and going, its node silent for less than the bound as counted now: look again then",
			[]corev1.Pod{pod("w-0", "slow", markedLost, deleted(0))}, nil, defaultBound - 20*time.Second},
		{"marked lost, deleted gracefully after its kubelet wrote it back, lost again", []corev1.Pod{pod("w-0", "dead", markedLost, deleted(30))}, []string{"w-0"}, 0},
		// A full restart deletes the earlier attempt's Jobs in the
		// foreground: one of their Pods held Terminating by a dead kubelet
		// would keep its Job, and so the new Job's name, for ever.
		{"an earlier attempt's Pod being deleted on a node dead past the deferred bound: lost", []corev1.Pod{pod("old", "long-dead", attempt(1), deleted(30))}, []string{"old"}, 0},
		{"an earlier attempt's Pod being deleted on a node silent for less: look again", []corev1.Pod{pod("old", "dead", attempt(1), deleted(30))}, nil, deferred - time.Minute},
		{"not lost: an earlier attempt's Pod not deleted yet, ended, going, or whose agent does not fence", []corev1.Pod{
			pod("not-deleted", "dead", attempt(1)),
			pod("ended", "dead", attempt(1), deleted(30), func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }),
			pod("going", "dead", attempt(1), deleted(0)),
			pod("no-fence", "dead", attempt(1), deleted(30), fence("0")),
			pod("no-agent", "dead", attempt(1), deleted(30), func(p *corev1.Pod) { p.Spec.InitContainers = nil }),
			pod("other-jobset", "dead", attempt(1), deleted(30), func(p *corev1.Pod) { p.Labels[jobset.JobSetUIDKey] = "uid-0" }),
		}, nil, 0},
		{"not members: ended, another attempt, outside the group, not scheduled", []corev1.Pod{
			pod("ended", "dead", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }),
			pod("old", "dead", attempt(1)),
			pod("launcher", "dead", func(p *corev1.Pod) { p.Labels[jobset.ReplicatedJobNameKey] = "launcher" }),
			pod("pending", ""),
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
				if m.earlier != (m.pod.Labels[jobset.RestartsKey] != "2") {
					t.Errorf("earlier %v, for a Pod of attempt %s", m.earlier, m.pod.Labels[jobset.RestartsKey])
				}
				if m.again != (jobset.ControllerMark(m.pod) != nil) {
					t.Errorf("again %v, for a Pod with the mark %+v", m.again, jobset.ControllerMark(m.pod))
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
	if lost, _ := lostMembers(js, []corev1.Pod{pod("w-0", "dead")}, nodeLoss{silence: silence}, now); lost != nil {
		t.Errorf("with no threshold, lost %v", lost)
	}
}

// A Pod marked lost that is not being deleted is deleted again, whatever
// its node: its deletion after the mark failed, or the leader stopped
// between the two writes.
func TestLostUndeleted(t *testing.T) {
	pod := func(name string, phase corev1.PodPhase, deleting bool, conditions ...corev1.PodCondition) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: phase, Conditions: conditions}}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{}
		}
		return p
	}
	lost := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: ReasonNodeLost}
	pods := []corev1.Pod{
		pod("lost-failed", corev1.PodFailed, false, lost),
		pod("lost-written-back", corev1.PodRunning, false, lost),
		pod("lost-deleting", corev1.PodFailed, true, lost),
		pod("replaced-off-node", corev1.PodFailed, false, corev1.PodCondition{Type: ConditionReplacedOffNode, Status: corev1.ConditionTrue}),
		pod("evicted", corev1.PodFailed, false, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"}),
		pod("running", corev1.PodRunning, false),
	}
	var got []string
	for _, p := range lostUndeleted(pods) {
		got = append(got, p.Name)
	}
	if want := []string{"lost-failed", "lost-written-back"}; !slices.Equal(got, want) {
		t.Errorf("deleted again: %v; want %v", got, want)
	}
}

// A platform may forbid tainting nodes (the controller's RBAC, an admission
// policy): a lost member is marked Failed and deleted all the same, and the
// JobSet says that the Pod webhook keeps its replacement off the node.
func TestMarkLostWhenTheNodeCannotBeTainted(t *testing.T) {
	ctx := context.Background()
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").InPlaceReady().Obj()).Obj()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "w-0", Namespace: "ns", UID: "pod-uid", Finalizers: []string{jobset.GroupMemberFinalizer}},
		Spec: corev1.PodSpec{NodeName: "gpu-7"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-7"}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(js, pod, node).WithStatusSubresource(&corev1.Pod{}).
		WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if _, ok := obj.(*corev1.Node); ok {
				return apierrors.NewForbidden(corev1.Resource("nodes"), obj.GetName(), errors.New("tainting nodes is not allowed here"))
			}
			return c.Patch(ctx, obj, patch, opts...)
		}}).Build()
	recorder := events.NewFakeRecorder(10)
	r := NewReconciler(c, recorder)
	lost := []lostMember{{pod: pod.DeepCopy(), node: "gpu-7", why: "node gpu-7 has not renewed its Lease for 31s", lastHeard: time.Now().Add(-31 * time.Second)}}

	if err := r.markLost(ctx, js, lost); err != nil {
		t.Errorf("markLost: %v; the taint is not what replaces the member", err)
	}
	got := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != corev1.PodFailed || got.DeletionTimestamp == nil {
		t.Errorf("phase %s, being deleted %v; want Failed and deleted", got.Status.Phase, got.DeletionTimestamp != nil)
	}
	if mark := jobset.ControllerMark(got); mark == nil || mark.Type != corev1.DisruptionTarget || mark.Reason != ReasonNodeLost {
		t.Errorf("the controller's mark: %+v, want DisruptionTarget with reason %s", mark, ReasonNodeLost)
	}
	close(recorder.Events)
	var warned bool
	for e := range recorder.Events {
		warned = warned || (strings.HasPrefix(e, corev1.EventTypeWarning+" "+ReasonNodeNotTainted+" ") &&
			strings.Contains(e, "gpu-7") && strings.Contains(e, "Pod webhook"))
	}
	if !warned {
		t.Errorf("no %s warning naming the node and the Pod webhook", ReasonNodeNotTainted)
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
	silences := map[string]time.Duration{"a": time.Minute, "b": time.Minute, "c": 3 * time.Second, "long-a": 11 * time.Minute, "long-b": 11 * time.Minute,
		"rack-back": 3 * time.Second, "rack-back-long-ago": 3 * time.Second, "blip": 3 * time.Second}
	// The last spells of silence that ended: rack-back was silent with a
	// (from 70 s ago) until 5 s ago, rack-back-long-ago until 40 s ago; blip
	// missed no renewal.
	ended := map[string]nodeloss.Spell{
		"rack-back":          {From: now.Add(-70 * time.Second), To: now.Add(-5 * time.Second), RenewInterval: 10 * time.Second},
		"rack-back-long-ago": {From: now.Add(-90 * time.Second), To: now.Add(-40 * time.Second), RenewInterval: 10 * time.Second},
		"blip":               {From: now.Add(-14 * time.Second), To: now.Add(-4 * time.Second), RenewInterval: 10 * time.Second},
	}
	loss := nodeLoss{threshold: DefaultNodeLossThreshold, silence: func(node string) (time.Duration, time.Duration, bool) {
		s, ok := silences[node]
		return s, 10 * time.Second, ok
	}, ended: func(node string) (nodeloss.Spell, bool) {
		spell, ok := ended[node]
		return spell, ok
	}}
	env := agentEnv
	declaredLost := func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: ReasonNodeLost}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	}
	reportedStopped := func(p *corev1.Pod) {
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}
	}
	markedAgo := func(d time.Duration) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-d)) }
	}
	deferred := defaultDeferredBound
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
		{"a member declared lost long ago that its kubelet reported stopped does not count",
			[]corev1.Pod{memberOn("w-0", "a"), memberOn("gone", "b", declaredLost, reportedStopped), memberOn("w-1", "c")}, []string{"w-0"}, 0},
		// Its agent may have lost contact before it read the deprecation and
		// vouched, not knowing it was replaced, for the member on node a.
		{"a member declared lost within its witness bound counts, though its node renews and its kubelet reported it stopped",
			[]corev1.Pod{memberOn("w-0", "a"), memberOn("gone", "c", declaredLost, reportedStopped, markedAgo(time.Minute)), memberOn("w-1", "c")},
			nil, deliverySlack + agentspec.DefaultFenceDeferLimitSeconds*time.Second + agentspec.WitnessPromiseSeconds*time.Second - time.Minute},
		{"a member declared lost past its witness bound does not count",
			[]corev1.Pod{memberOn("w-0", "a"), memberOn("gone", "c", declaredLost, reportedStopped, markedAgo(11*time.Minute)), memberOn("w-1", "c")},
			[]string{"w-0"}, 0},
		{"a Pod of an earlier attempt declared lost within its witness bound does not count: agents vouch only within their attempt",
			[]corev1.Pod{memberOn("w-0", "a"), memberOn("old", "c", declaredLost, reportedStopped, markedAgo(time.Minute), func(p *corev1.Pod) { p.Labels[jobset.RestartsKey] = "1" }),
				memberOn("w-1", "c")},
			[]string{"w-0"}, 0},
		{"a Pod of an earlier attempt that may still run counts",
			[]corev1.Pod{memberOn("w-0", "a"), memberOn("old", "b", func(p *corev1.Pod) { p.Labels[jobset.RestartsKey] = "1"; p.DeletionTimestamp = &metav1.Time{} })},
			nil, deferred - time.Minute},
		{"two silent nodes, two witnesses asked for: both lost",
			[]corev1.Pod{memberOn("w-0", "a", env(agentspec.EnvFenceWitnesses, "2")), memberOn("w-1", "b", env(agentspec.EnvFenceWitnesses, "2"))}, []string{"w-0", "w-1"}, 0},
		{"the least number of witnesses of the group's agents rules",
			[]corev1.Pod{memberOn("w-0", "a", env(agentspec.EnvFenceWitnesses, "2")), memberOn("w-1", "b"), memberOn("w-2", "c", env(agentspec.EnvFenceWitnesses, "2"))}, nil, deferred - time.Minute},
		{"agents that ask no witness fence alone: no wait",
			[]corev1.Pod{memberOn("w-0", "a", env(agentspec.EnvFenceWitnesses, "0")), memberOn("w-1", "b", env(agentspec.EnvFenceWitnesses, "0"))}, []string{"w-0", "w-1"}, 0},
		// Nodes cut off together come back one after another: the bound
		// of the one still silent counts from when the other came back.
		{"a node silent with another that came back since: its bound counts from then",
			[]corev1.Pod{memberOn("w-0", "a"), memberOn("w-1", "rack-back")}, nil, defaultBound - 5*time.Second},
		{"a node silent with another that came back a bound ago: lost",
			[]corev1.Pod{memberOn("w-0", "a"), memberOn("w-1", "rack-back-long-ago")}, []string{"w-0"}, 0},
		{"a node whose silence outlived its shared start past the deferred bound: lost",
			[]corev1.Pod{memberOn("w-0", "long-a"), memberOn("w-1", "rack-back")}, []string{"w-0"}, 0},
		{"another node that came back from no silence of its own (no missed renewal) changes nothing",
			[]corev1.Pod{memberOn("w-0", "a"), memberOn("w-1", "blip")}, []string{"w-0"}, 0},
		{"a node that came back but runs no Pod of the group changes nothing",
			[]corev1.Pod{memberOn("w-0", "a"), memberOn("w-1", "c")}, []string{"w-0"}, 0},
		{"agents that ask no witness fence alone: the silence counts whole",
			[]corev1.Pod{memberOn("w-0", "a", env(agentspec.EnvFenceWitnesses, "0")), memberOn("w-1", "rack-back", env(agentspec.EnvFenceWitnesses, "0"))}, []string{"w-0"}, 0},
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
				if silent, _ := loss.sharedSilence(js, tc.pods, now); silent > 1 && !strings.Contains(m.why, "silent at once") && !strings.Contains(m.why, "the bound is") {
					t.Errorf("why %q does not say which bound applied", m.why)
				}
			}
		})
	}
}

// defaultBound is the bound of a memberOn Pod on a node that renews every
// 10 s: the default fence, a tick, the renew interval with its jitter and
// the kubelet's stop of one regular container.
const defaultBound = agentspec.DefaultFenceAfterSeconds*time.Second + agentspec.FenceTick + 10400*time.Millisecond + 4*time.Second

// defaultDeferredBound is the deferred bound of a memberOn Pod on a node
// that renews every 10 s: the defer limit, a tick, the renew interval with
// its jitter, the kubelet's stop of one regular container and a promise.
const defaultDeferredBound = agentspec.DefaultFenceDeferLimitSeconds*time.Second + agentspec.FenceTick + 10400*time.Millisecond +
	4*time.Second + agentspec.WitnessPromiseSeconds*time.Second

// memberOn is a running member of group "workers" of JobSet uid-1 on node,
// with the agent as injection makes it.
func memberOn(name, node string, mutate ...func(*corev1.Pod)) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			jobset.JobSetUIDKey: "uid-1", jobset.RestartsKey: "0", jobset.ReplicatedJobNameKey: "workers"}},
		Spec: corev1.PodSpec{NodeName: node, InitContainers: []corev1.Container{sidecar.Container(sidecar.Options{Image: "agent"})},
			Containers: []corev1.Container{{Name: "worker", Image: "worker"}}},
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

// A Pod marked lost is stopped for its group's sync once its agent's fence
// stopped its worker: while its node stays silent past the bound at which
// the rule declares it lost. A node that renews again has a kubelet that
// reports the Pod stopped; one nothing is known of leaves the Pod to go.
func TestFencedMarkedLost(t *testing.T) {
	js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").InPlaceReady().Obj()).Obj()
	js.UID = "uid-1"
	silences := map[string]time.Duration{"silent": time.Minute, "silent-2": time.Minute, "renewing": 3 * time.Second, "ok": 3 * time.Second}
	loss := nodeLoss{threshold: DefaultNodeLossThreshold, silence: func(node string) (time.Duration, time.Duration, bool) {
		s, ok := silences[node]
		return s, 10 * time.Second, ok
	}}
	markedLost := func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: ReasonNodeLost}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	}
	cases := []struct {
		name string
		pods []corev1.Pod
		want bool
	}{
		{"its node alone still silent past the bound: fenced", []corev1.Pod{memberOn("lost", "silent", markedLost), memberOn("w-1", "ok")}, true},
		{"its node renews again: its kubelet reports the stop", []corev1.Pod{memberOn("lost", "renewing", markedLost), memberOn("w-1", "ok")}, false},
		{"its node unknown", []corev1.Pod{memberOn("lost", "gone", markedLost), memberOn("w-1", "ok")}, false},
		{"another node silent too, one witness asked for: its agent may ride it out",
			[]corev1.Pod{memberOn("lost", "silent", markedLost), memberOn("w-1", "silent-2")}, false},
		{"agents that fence alone", []corev1.Pod{memberOn("lost", "silent", markedLost, agentEnv(agentspec.EnvFenceWitnesses, "0")),
			memberOn("w-1", "silent-2", agentEnv(agentspec.EnvFenceWitnesses, "0"))}, true},
		{"not marked lost", []corev1.Pod{memberOn("lost", "silent"), memberOn("w-1", "ok")}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := loss.fenced(js, tc.pods, time.Now())(&tc.pods[0]); got != tc.want {
				t.Errorf("fenced = %v, want %v", got, tc.want)
			}
		})
	}
	if (nodeLoss{}).fenced(js, nil, time.Now()) != nil {
		t.Error("no node watched: want no fenced predicate")
	}
}
