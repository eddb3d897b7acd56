package jobsetcontroller

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// decided is what a test reads of decide's actions.
type decided struct {
	Confirm            bool
	Delete, Create     []string
	Outcome            string // the terminal or restart condition written, "" for none
	Restarts           int32
	InPlaceRestarts    int32
	Synced, Deprecated int32
	Adopt, Release     []string
	Expired            bool
	RequeueAfter       time.Duration
	Gathering          string // what the Pod tally is told: "unknown", "in sync" or the gather's epoch
	ReadyJobs          int32  // the ready Jobs of the status written
}

func summarize(a actions) decided {
	d := decided{Confirm: a.confirm, Expired: a.expired, RequeueAfter: a.requeueAfter, Gathering: "unknown"}
	for _, job := range a.deleteJobs {
		d.Delete = append(d.Delete, job.Name)
	}
	if a.converge != nil {
		for _, job := range a.converge.create {
			d.Create = append(d.Create, job.Name)
		}
	}
	if a.status != nil {
		st := a.status.js.Status
		d.Restarts, d.InPlaceRestarts = st.Restarts, st.InPlaceRestarts
		d.Synced, d.Deprecated = ptr.Deref(st.SyncedEpoch, 0), ptr.Deref(st.DeprecatedEpoch, 0)
		for _, rj := range st.ReplicatedJobsStatus {
			d.ReadyJobs += rj.Ready
		}
		for _, t := range []jobset.JobSetConditionType{jobset.JobSetCompleted, jobset.JobSetFailed, jobset.JobSetRestarting} {
			if c := meta.FindStatusCondition(st.Conditions, string(t)); c != nil && c.Status == metav1.ConditionTrue {
				d.Outcome = string(t)
			}
		}
	}
	for _, pod := range a.adopt {
		d.Adopt = append(d.Adopt, pod.Name)
	}
	for _, pod := range a.release {
		d.Release = append(d.Release, pod.Name)
	}
	switch {
	case a.gatherKnown && a.gather == nil:
		d.Gathering = "in sync"
	case a.gatherKnown:
		d.Gathering = "epoch " + strconv.Itoa(int(a.gather.Epoch))
	}
	return d
}

// TestDecide runs the reconciler's one decision over what a reconcile of
// an in-place JobSet (one replicatedJob "workers" of 2 Jobs x 1 Pod,
// synced at epoch 1) observed.
func TestDecide(t *testing.T) {
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	base := func() *jobset.JobSet {
		js := wrappers.MakeJobSet("js", "ns").RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).EnableDNSHostnames(false).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).InPlaceReady().Obj()).Obj()
		js.UID = "uid-1"
		js.Status.SyncedEpoch, js.Status.DeprecatedEpoch = ptr.To[int32](1), ptr.To[int32](0)
		return js
	}
	jobsOf := func(js *jobset.JobSet, mutate map[string]func(*batchv1.Job)) []batchv1.Job {
		var jobs []batchv1.Job
		for _, at := range desiredJobs(js) {
			job := constructJob(js, at)
			if m := mutate[job.Name]; m != nil {
				m(job)
			}
			jobs = append(jobs, *job)
		}
		return jobs
	}
	// podOf is the Pod of Job's index 0, at epoch 1, holding the
	// group-member finalizer as every Pod of the group does.
	podOf := func(job *batchv1.Job, mutate ...func(*corev1.Pod)) corev1.Pod {
		pod := corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: job.Name + "-0", UID: "pod-" + job.UID,
				Labels:      withLabel(job.Spec.Template.Labels, batchv1.JobNameLabel, job.Name),
				Annotations: map[string]string{jobset.EpochKey: "1", batchv1.JobCompletionIndexAnnotation: "0"},
				Finalizers:  []string{jobset.GroupMemberFinalizer}},
			Spec:   corev1.PodSpec{NodeName: "node-a", InitContainers: job.Spec.Template.Spec.InitContainers},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		}
		for _, m := range mutate {
			m(&pod)
		}
		return pod
	}
	failed := func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }
	leftWithExitZero := func(p *corev1.Pod) {
		p.Status.Phase, p.DeletionTimestamp = corev1.PodSucceeded, &metav1.Time{Time: now}
	}
	joined := func(epoch string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Annotations[jobset.EpochKey] = epoch }
	}
	indexZeroComplete := func(j *batchv1.Job) { j.Status.CompletedIndexes = "0" }
	succeeded := func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }
	jobComplete := func(j *batchv1.Job) {
		j.Status.CompletedIndexes = "0"
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	}
	suspended := func() *jobset.JobSet {
		js := base()
		js.Spec.Suspend = ptr.To(true)
		return js
	}
	jobFailed := func(j *batchv1.Job) {
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}
	}

	type world struct {
		js    *jobset.JobSet
		jobs  []batchv1.Job
		pods  func(jobs []batchv1.Job) []corev1.Pod
		fresh func(jobs []batchv1.Job) *freshChildren
	}
	both := func(jobs []batchv1.Job, mutate ...func(*corev1.Pod)) []corev1.Pod {
		return []corev1.Pod{podOf(&jobs[0], mutate...), podOf(&jobs[1])}
	}
	// readyWritten: ready of the 2 Jobs were ready when the status was
	// last written; restarting: a group restart gathers at epoch 2.
	readyWritten := func(js *jobset.JobSet, ready int32) *jobset.JobSet {
		js.Status.ReplicatedJobsStatus = []jobset.ReplicatedJobStatus{{Name: "workers", Ready: ready, Active: 2}}
		return js
	}
	restarting := func(ready int32) *jobset.JobSet {
		js := readyWritten(base(), ready)
		js.Status.DeprecatedEpoch, js.Status.InPlaceRestarts = ptr.To[int32](1), 1
		return js
	}
	cases := map[string]struct {
		world world
		want  decided
	}{
		"a group restart gathering, its Jobs all ready when last written and none now: that they are not all ready is written": {
			world: world{js: restarting(2), pods: func(jobs []batchv1.Job) []corev1.Pod { return both(jobs, joined("2")) }},
			want:  decided{Synced: 1, Deprecated: 1, InPlaceRestarts: 1, Gathering: "epoch 2"},
		},
		"a group restart gathering, its Jobs not all ready when last written: the ready count written stands until the sync": {
			world: world{js: restarting(1), pods: func(jobs []batchv1.Job) []corev1.Pod { return both(jobs, joined("2")) }},
			want:  decided{Synced: 1, Deprecated: 1, InPlaceRestarts: 1, Gathering: "epoch 2", ReadyJobs: 1},
		},
		"the sync that ends a group restart writes the ready counts": {
			world: world{js: restarting(1), pods: func(jobs []batchv1.Job) []corev1.Pod {
				return []corev1.Pod{podOf(&jobs[0], joined("2")), podOf(&jobs[1], joined("2"))}
			}},
			want: decided{Confirm: true, Synced: 2, Deprecated: 1, InPlaceRestarts: 1, Gathering: "in sync"},
		},
		"in sync, a Job no longer ready: its count written": {
			world: world{js: readyWritten(base(), 1), pods: func(jobs []batchv1.Job) []corev1.Pod { return both(jobs) }},
			want:  decided{Synced: 1, Gathering: "in sync"},
		},
		"in sync, nothing to do": {
			world: world{js: base(), pods: func(jobs []batchv1.Job) []corev1.Pod { return both(jobs) }},
			want:  decided{Synced: 1, Gathering: "in sync"},
		},
		"a Pod of a Job from before the controller held its Pods: held now": {
			world: world{js: base(), pods: func(jobs []batchv1.Job) []corev1.Pod {
				return both(jobs, func(p *corev1.Pod) { p.Finalizers = nil })
			}},
			want: decided{Synced: 1, Adopt: []string{"js-workers-0-0"}, Gathering: "in sync"},
		},
		"a member failed: a group restart starts, confirmed on a fresh read": {
			world: world{js: base(), pods: func(jobs []batchv1.Job) []corev1.Pod { return both(jobs, failed) }},
			want: decided{Confirm: true, Synced: 1, Deprecated: 1, InPlaceRestarts: 1, Release: []string{"js-workers-0-0"},
				RequeueAfter: DefaultGatherStallThreshold, Gathering: "epoch 2"},
		},
		"the fresh read shows the failure answered already: nothing to do": {
			world: world{js: base(),
				pods: func(jobs []batchv1.Job) []corev1.Pod { return both(jobs, failed) },
				fresh: func(jobs []batchv1.Job) *freshChildren {
					return &freshChildren{pods: both(jobs, joined("2")), jobs: []*batchv1.Job{&jobs[0], &jobs[1]}}
				}},
			want: decided{Synced: 1, Deprecated: 1, InPlaceRestarts: 1, Release: []string{"js-workers-0-0"},
				RequeueAfter: DefaultGatherStallThreshold, Gathering: "epoch 2"},
		},
		"a worker deleted that exited 0, its Job not counting it yet: released once a fresh read confirms it": {
			world: world{js: base(), pods: func(jobs []batchv1.Job) []corev1.Pod { return both(jobs, leftWithExitZero) }},
			want:  decided{Confirm: true, Synced: 1, Release: []string{"js-workers-0-0"}, Gathering: "in sync"},
		},
		"a worker deleted that exited 0, its index complete: a full restart for the lost index, counted": {
			world: world{js: base(), jobs: jobsOf(base(), map[string]func(*batchv1.Job){"js-workers-0": indexZeroComplete}),
				pods: func(jobs []batchv1.Job) []corev1.Pod { return both(jobs, leftWithExitZero) }},
			want: decided{Confirm: true, Outcome: string(jobset.JobSetRestarting), Synced: 1, Restarts: 1,
				Release: []string{"js-workers-0-0", "js-workers-1-0"}, Gathering: "unknown"},
		},
		"the fresh Job counts the lost index complete: the full restart stands": {
			world: world{js: base(),
				pods: func(jobs []batchv1.Job) []corev1.Pod { return both(jobs, leftWithExitZero) },
				fresh: func(jobs []batchv1.Job) *freshChildren {
					indexZeroComplete(&jobs[0])
					return &freshChildren{pods: both(jobs, leftWithExitZero), jobs: []*batchv1.Job{&jobs[0], &jobs[1]}}
				}},
			want: decided{Outcome: string(jobset.JobSetRestarting), Synced: 1, Restarts: 1,
				Release: []string{"js-workers-0-0", "js-workers-1-0"}, Gathering: "unknown"},
		},
		"every Job complete, its Pods seen to finish: completed on a fresh read": {
			world: world{js: base(), jobs: jobsOf(base(), map[string]func(*batchv1.Job){"js-workers-0": jobComplete, "js-workers-1": jobComplete}),
				pods: func(jobs []batchv1.Job) []corev1.Pod {
					return []corev1.Pod{podOf(&jobs[0], succeeded), podOf(&jobs[1], succeeded)}
				}},
			want: decided{Confirm: true, Outcome: string(jobset.JobSetCompleted), Synced: 1,
				Release: []string{"js-workers-0-0", "js-workers-1-0"}, Gathering: "unknown"},
		},
		"suspended, every Job complete because its stopped workers exited 0: a full restart, not counted, never Completed": {
			world: world{js: suspended(), jobs: jobsOf(suspended(), map[string]func(*batchv1.Job){"js-workers-0": jobComplete, "js-workers-1": jobComplete}),
				pods: func(jobs []batchv1.Job) []corev1.Pod {
					return []corev1.Pod{podOf(&jobs[0], leftWithExitZero), podOf(&jobs[1], leftWithExitZero)}
				}},
			want: decided{Confirm: true, Outcome: string(jobset.JobSetRestarting), Synced: 1, Restarts: 1,
				Release: []string{"js-workers-0-0", "js-workers-1-0"}, Gathering: "unknown"},
		},
		"a Job failed: the failure policy restarts fully, before any epoch decision": {
			world: world{js: base(), jobs: jobsOf(base(), map[string]func(*batchv1.Job){"js-workers-0": jobFailed}),
				pods: func(jobs []batchv1.Job) []corev1.Pod { return both(jobs, failed) }},
			want: decided{Outcome: string(jobset.JobSetRestarting), Synced: 1, Restarts: 1,
				Release: []string{"js-workers-0-0", "js-workers-1-0"}, Gathering: "unknown"},
		},
		"the Jobs are missing: created, and the first gather starts": {
			world: world{js: func() *jobset.JobSet {
				js := base()
				js.Status.SyncedEpoch, js.Status.DeprecatedEpoch = nil, nil
				return js
			}(), jobs: []batchv1.Job{}, pods: func([]batchv1.Job) []corev1.Pod { return nil }},
			want: decided{Create: []string{"js-workers-0", "js-workers-1"}, Gathering: "epoch 1"},
		},
		"finished: the active Jobs go, every Pod is let go, the TTL counts down": {
			world: world{js: func() *jobset.JobSet {
				js := base()
				js.Spec.TTLSecondsAfterFinished = ptr.To[int32](60)
				js.Status.Conditions = []metav1.Condition{{Type: string(jobset.JobSetFailed), Status: metav1.ConditionTrue,
					LastTransitionTime: metav1.NewTime(now.Add(-10 * time.Second))}}
				return js
			}(), pods: func(jobs []batchv1.Job) []corev1.Pod { return both(jobs) }},
			want: decided{Delete: []string{"js-workers-0", "js-workers-1"}, Release: []string{"js-workers-0-0", "js-workers-1-0"},
				RequeueAfter: 50 * time.Second, Gathering: "unknown"},
		},
		"finished, the TTL over: the JobSet goes": {
			world: world{js: func() *jobset.JobSet {
				js := base()
				js.Spec.TTLSecondsAfterFinished = ptr.To[int32](5)
				js.Status.Conditions = []metav1.Condition{{Type: string(jobset.JobSetCompleted), Status: metav1.ConditionTrue,
					LastTransitionTime: metav1.NewTime(now.Add(-10 * time.Second))}}
				return js
			}(), jobs: []batchv1.Job{}, pods: func([]batchv1.Job) []corev1.Pod { return nil }},
			want: decided{Expired: true, Gathering: "unknown"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := tc.world
			if w.jobs == nil {
				w.jobs = jobsOf(w.js, nil)
			}
			o := &observed{js: w.js, children: classifyJobs(w.js, w.jobs, false), pods: w.pods(w.jobs), now: now}
			if w.fresh != nil {
				o.fresh = w.fresh(w.jobs)
			}
			if diff := cmp.Diff(tc.want, summarize(decide(o, DefaultGatherStallThreshold))); diff != "" {
				t.Errorf("decide (-want +got):\n%s", diff)
			}
			// The same from the Pods as the manager's cache keeps them.
			cached := &observed{js: w.js, children: classifyJobs(w.js, w.jobs, false), now: now}
			for _, pod := range w.pods(w.jobs) {
				cached.pods = append(cached.pods, *cachedPod(&pod))
			}
			if w.fresh != nil {
				cached.fresh = w.fresh(w.jobs)
			}
			if diff := cmp.Diff(tc.want, summarize(decide(cached, DefaultGatherStallThreshold))); diff != "" {
				t.Errorf("decide on the cached Pods (-want +got):\n%s", diff)
			}
		})
	}
}

func withLabel(labels map[string]string, key, value string) map[string]string {
	out := map[string]string{key: value}
	for k, v := range labels {
		out[k] = v
	}
	return out
}
