package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// pod is a worker Pod of rank job/index on node, its agent and worker
// running (and started) or not, its worker restarted restarts times by
// the kubelet, its agent joined epoch ("": none).
type pod struct {
	uid, job, index, node string
	agent, worker         bool
	restarts              int32
	epoch                 string
	phase                 corev1.PodPhase
	failed                bool // Failed, with a DisruptionTarget condition
}

func (p pod) obj() *corev1.Pod {
	o := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: types.UID(p.uid), Name: p.uid,
			Labels:      map[string]string{batchv1.JobNameLabel: p.job},
			Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: p.index}},
		Spec:   corev1.PodSpec{NodeName: p.node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if p.phase != "" {
		o.Status.Phase = p.phase
	}
	if p.epoch != "" {
		o.Annotations[jobset.EpochKey] = p.epoch
	}
	if p.failed {
		o.Status.Phase = corev1.PodFailed
		o.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}
	}
	state := func(running bool) corev1.ContainerState {
		if running {
			return corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
		}
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{}}
	}
	o.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "jobset-agent", State: state(p.agent), Started: ptr.To(p.agent && p.worker)}}
	o.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: workerContainer, State: state(p.worker), Started: ptr.To(p.worker), RestartCount: p.restarts}}
	return o
}

func pods(ps ...pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range ps {
		out = append(out, p.obj())
	}
	return out
}

// Four workers, ranks a/0 and a/1 on node-2 (faulted), b/0 and b/1 on
// node-3.
var (
	a0 = pod{uid: "a0", job: "a", index: "0", node: "node-2", agent: true, worker: true}
	a1 = pod{uid: "a1", job: "a", index: "1", node: "node-2", agent: true, worker: true}
	b0 = pod{uid: "b0", job: "b", index: "0", node: "node-3", agent: true, worker: true}
	b1 = pod{uid: "b1", job: "b", index: "1", node: "node-3", agent: true, worker: true}
)

func inPlaceBase() baseline {
	return baseline{node: "node-2", workers: 4, counter: 1, counterField: "syncedEpoch",
		restarts: map[types.UID]int32{"a0": 0, "a1": 0, "b0": 0, "b1": 0},
		lost:     map[string]types.UID{"a/0": "a0", "a/1": "a1"}}
}

func with(p pod, f func(*pod)) pod {
	f(&p)
	return p
}

func TestEvaluate(t *testing.T) {
	restarted := func(p *pod) { p.restarts = 1 }
	failed := func(p *pod) { p.failed = true }
	waiting := func(p *pod) { p.worker = false }
	recreateBase := inPlaceBase()
	recreateBase.recreate, recreateBase.counterField, recreateBase.counter = true, "", -1
	processBase := inPlaceBase()
	processBase.process = true
	atEpoch := func(e string) func(*pod) { return func(p *pod) { p.epoch = e } }
	// In the process tier every container runs throughout; an agent
	// reports the epoch it joined.
	pa0, pa1 := pod{uid: "a0-new", job: "a", index: "0", node: "node-3", agent: true, worker: true}, pod{uid: "a1-new", job: "a", index: "1", node: "node-3", agent: true, worker: true}

	for name, tc := range map[string]struct {
		base  baseline
		scene scene
		want  progress
	}{
		"the group trains as before the fault: nothing reached": {
			base:  inPlaceBase(),
			scene: scene{pods: pods(a0, a1, b0, b1), nodeReady: true, counter: 1},
			want:  progress{},
		},
		"the node is NotReady, its Pods still Running in the API": {
			base:  inPlaceBase(),
			scene: scene{pods: pods(a0, a1, b0, b1), counter: 1},
			want:  progress{reached: map[string]bool{notReady: true}},
		},
		"one lost Pod marked Failed, the other not yet": {
			base:  inPlaceBase(),
			scene: scene{pods: pods(with(a0, failed), a1, b0, b1), nodeReady: true, counter: 1},
			want:  progress{},
		},
		"both lost Pods marked (one Failed, one gone), one replacement created, unbound": {
			base: inPlaceBase(),
			scene: scene{pods: pods(with(a0, failed), b0, b1,
				pod{uid: "a0-new", job: "a", index: "0"}), nodeReady: true, counter: 1},
			want: progress{reached: map[string]bool{detected: true}},
		},
		"both replacements bound, their agents at the barrier, the others restarting in place": {
			base: inPlaceBase(),
			scene: scene{pods: pods(with(b0, waiting), with(b1, waiting),
				pod{uid: "a0-new", job: "a", index: "0", node: "node-3", agent: true},
				pod{uid: "a1-new", job: "a", index: "1", node: "node-3", agent: true}), nodeReady: true, counter: 1},
			want: progress{reached: map[string]bool{detected: true, removed: true, replaced: true, scheduled: true, started: true}},
		},
		"ours: the lost Pods Failed and deleted, held by their kubelet's silence, their replacements at the barrier": {
			base: inPlaceBase(),
			scene: scene{pods: pods(with(a0, failed), with(a1, failed), with(b0, waiting), with(b1, waiting),
				pod{uid: "a0-new", job: "a", index: "0", node: "node-3", agent: true},
				pod{uid: "a1-new", job: "a", index: "1", node: "node-3", agent: true}), nodeReady: true, counter: 1},
			want: progress{reached: map[string]bool{detected: true, replaced: true, scheduled: true, started: true}},
		},
		"the barrier lifted: every rank trains at the next epoch": {
			base: inPlaceBase(),
			scene: scene{pods: pods(with(b0, restarted), with(b1, restarted),
				pod{uid: "a0-new", job: "a", index: "0", node: "node-3", agent: true, worker: true},
				pod{uid: "a1-new", job: "a", index: "1", node: "node-3", agent: true, worker: true}), nodeReady: true, counter: 2},
			want: progress{reached: map[string]bool{detected: true, removed: true, replaced: true, scheduled: true, started: true, synced: true},
				training: true, replacementWorkers: map[string]bool{"a/0": true, "a/1": true}},
		},
		"a survivor whose worker did not restart is not at the next epoch": {
			base: inPlaceBase(),
			scene: scene{pods: pods(with(b0, restarted), b1,
				pod{uid: "a0-new", job: "a", index: "0", node: "node-3", agent: true, worker: true},
				pod{uid: "a1-new", job: "a", index: "1", node: "node-3", agent: true, worker: true}), nodeReady: true, counter: 2},
			want: progress{reached: map[string]bool{detected: true, removed: true, replaced: true, scheduled: true, started: true, synced: true},
				replacementWorkers: map[string]bool{"a/0": true, "a/1": true}},
		},
		"a Pod of the faulted node never trains, whatever the API says": {
			base: inPlaceBase(),
			scene: scene{pods: pods(with(a1, restarted), with(b0, restarted), with(b1, restarted),
				pod{uid: "a0-new", job: "a", index: "0", node: "node-2", agent: true, worker: true}), nodeReady: true, counter: 2},
			want: progress{reached: map[string]bool{synced: true},
				replacementWorkers: map[string]bool{"a/0": true}},
		},
		"process tier: every agent joined epoch 2, the group not synced yet: the workers wait at the barrier": {
			base: processBase,
			scene: scene{pods: pods(with(b0, atEpoch("2")), with(b1, atEpoch("2")), with(pa0, atEpoch("2")), with(pa1, atEpoch("2"))),
				nodeReady: true, counter: 1},
			want: progress{reached: map[string]bool{detected: true, removed: true, replaced: true, scheduled: true, started: true}},
		},
		"process tier: synced at the epoch every agent joined: every rank trains, no container restarted": {
			base: processBase,
			scene: scene{pods: pods(with(b0, atEpoch("2")), with(b1, atEpoch("2")), with(pa0, atEpoch("2")), with(pa1, atEpoch("2"))),
				nodeReady: true, counter: 2},
			want: progress{reached: map[string]bool{detected: true, removed: true, replaced: true, scheduled: true, started: true, synced: true},
				training: true, replacementWorkers: map[string]bool{"a/0": true, "a/1": true}},
		},
		"process tier: a survivor still at the epoch before the fault trains at none after it": {
			base: processBase,
			scene: scene{pods: pods(with(b0, atEpoch("2")), with(b1, atEpoch("1")), with(pa0, atEpoch("2")), with(pa1, atEpoch("2"))),
				nodeReady: true, counter: 2},
			want: progress{reached: map[string]bool{detected: true, removed: true, replaced: true, scheduled: true, started: true, synced: true},
				replacementWorkers: map[string]bool{"a/0": true, "a/1": true}},
		},
		"process tier: a replacement whose worker container has not started does not train, whatever its agent joined": {
			base: processBase,
			scene: scene{pods: pods(with(b0, atEpoch("2")), with(b1, atEpoch("2")), with(pa0, atEpoch("2")), with(pa1, func(p *pod) { p.epoch, p.worker = "2", false })),
				nodeReady: true, counter: 2},
			want: progress{reached: map[string]bool{detected: true, removed: true, replaced: true, scheduled: true, started: true, synced: true},
				replacementWorkers: map[string]bool{"a/0": true}},
		},
		"recreate: the survivors restarted are not enough, every Pod is new": {
			base: recreateBase,
			scene: scene{pods: pods(with(b0, restarted), with(b1, restarted),
				pod{uid: "a0-new", job: "a", index: "0", node: "node-3", agent: true, worker: true},
				pod{uid: "a1-new", job: "a", index: "1", node: "node-3", agent: true, worker: true}), nodeReady: true},
			want: progress{reached: map[string]bool{detected: true, removed: true, replaced: true, scheduled: true, started: true},
				replacementWorkers: map[string]bool{"a/0": true, "a/1": true}},
		},
		"recreate: every rank in a new Pod": {
			base: recreateBase,
			scene: scene{pods: pods(
				pod{uid: "a0-new", job: "a", index: "0", node: "node-3", agent: true, worker: true},
				pod{uid: "a1-new", job: "a", index: "1", node: "node-3", agent: true, worker: true},
				pod{uid: "b0-new", job: "b", index: "0", node: "node-3", agent: true, worker: true},
				pod{uid: "b1-new", job: "b", index: "1", node: "node-3", agent: true, worker: true}), nodeReady: true},
			want: progress{reached: map[string]bool{detected: true, removed: true, replaced: true, scheduled: true, started: true},
				training: true, replacementWorkers: map[string]bool{"a/0": true, "a/1": true}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := tc.base.evaluate(tc.scene)
			if diff := cmp.Diff(reachedOnly(tc.want), reachedOnly(got), cmp.AllowUnexported(progress{})); diff != "" {
				t.Errorf("evaluate (-want +got):\n%s", diff)
			}
		})
	}
}

// reachedOnly drops what was not reached, so that a want lists only
// what was.
func reachedOnly(p progress) progress {
	out := progress{training: p.training, reached: map[string]bool{}, replacementWorkers: map[string]bool{}}
	for m, ok := range p.reached {
		if ok {
			out.reached[m] = true
		}
	}
	for r, ok := range p.replacementWorkers {
		if ok {
			out.replacementWorkers[r] = true
		}
	}
	return out
}

func TestJudgeOldWorkers(t *testing.T) {
	fault := time.Unix(1000, 0)
	at := func(s float64) time.Time { return fault.Add(time.Duration(s * float64(time.Second))) }
	lost := map[string]types.UID{"a/0": "a0", "a/1": "a1"}
	for name, tc := range map[string]struct {
		lastRunning, stopped, replacements map[string]time.Time
		want                               oldWorkers
	}{
		"fenced before the replacements ran": {
			lastRunning:  map[string]time.Time{"a/0": at(17), "a/1": at(18)},
			stopped:      map[string]time.Time{"a/0": at(17.25), "a/1": at(18.25)},
			replacements: map[string]time.Time{"a/0": at(35), "a/1": at(35)},
			want:         oldWorkers{stopped: 18.25, allStopped: true},
		},
		"one ran on after its replacement, until the node came back": {
			lastRunning:  map[string]time.Time{"a/0": at(17), "a/1": at(90)},
			stopped:      map[string]time.Time{"a/0": at(17.25), "a/1": at(90.25)},
			replacements: map[string]time.Time{"a/0": at(70), "a/1": at(70)},
			want:         oldWorkers{stopped: 90.25, allStopped: true, ranTwice: 1, overlap: 20},
		},
		"one never stopped while polled": {
			lastRunning:  map[string]time.Time{"a/0": at(17), "a/1": at(200)},
			stopped:      map[string]time.Time{"a/0": at(17.25)},
			replacements: map[string]time.Time{"a/0": at(70)},
			want:         oldWorkers{stopped: 17.25},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := judgeOldWorkers(lost, fault, tc.lastRunning, tc.stopped, tc.replacements)
			if diff := cmp.Diff(tc.want, *got, cmp.AllowUnexported(oldWorkers{})); diff != "" {
				t.Errorf("judgeOldWorkers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLostPerJob(t *testing.T) {
	for name, tc := range map[string]struct {
		lost map[string]types.UID
		want int
	}{
		"one rank of each Job":  {lost: map[string]types.UID{"a/0": "a0", "b/1": "b1"}, want: 1},
		"both ranks of one Job": {lost: map[string]types.UID{"a/0": "a0", "a/1": "a1"}, want: 2},
		"none":                  {want: 0},
	} {
		t.Run(name, func(t *testing.T) {
			if got := (baseline{lost: tc.lost}).lostPerJob(); got != tc.want {
				t.Errorf("lostPerJob = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestParseRunningWorkers(t *testing.T) {
	// Two ranks: a/0 with an old container (no task) and a new one, a/1
	// with one container.
	const out = "--\nc-old 0\nc-a0 2\n--\nc-a1 1\n--\nTASK PID STATUS\nc-a0 41 RUNNING\nc-a1 42 RUNNING\n"
	ranks := []string{"a/0", "a/1"}
	for name, tc := range map[string]struct {
		out          string
		minProcesses int
		want         map[string]bool
		wantErr      bool
	}{
		"without the wrapper, a running task is a running worker": {
			out: out, minProcesses: 1, want: map[string]bool{"a/0": true, "a/1": true}},
		"under the wrapper, a task of the wrapper alone runs no worker": {
			out: out, minProcesses: 2, want: map[string]bool{"a/0": true, "a/1": false}},
		"a container whose task stopped runs nothing, whatever its count": {
			out: "--\nc-a0 2\n--\nc-a1 2\n--\nTASK PID STATUS\nc-a0 41 STOPPED\nc-a1 42 RUNNING\n", minProcesses: 2,
			want: map[string]bool{"a/0": false, "a/1": true}},
		"a section missing": {out: "--\nc-a0 2\n--\nTASK PID STATUS\n", minProcesses: 1, wantErr: true},
		"a container line without its count": {
			out: "--\nc-a0\n--\nc-a1 1\n--\nTASK PID STATUS\n", minProcesses: 1, wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := parseRunningWorkers(tc.out, ranks, tc.minProcesses)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseRunningWorkers error = %v, want error %t", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); !tc.wantErr && diff != "" {
				t.Errorf("parseRunningWorkers (-want +got):\n%s", diff)
			}
		})
	}
}
