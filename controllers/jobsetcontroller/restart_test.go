package jobsetcontroller

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

func TestPlanChildren(t *testing.T) {
	jobSet := func(strategy jobset.JobSetRestartStrategy, restarts int32) *jobset.JobSet {
		return wrappers.MakeJobSet("js", "ns").RestartStrategy(strategy).RestartsStatus(restarts, restarts).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Obj()).Obj()
	}
	job := func(index, attempt int) batchv1.Job {
		return *wrappers.MakeJob(JobName("js", "workers", index), "ns", "workers").RestartAttempt(attempt).Obj()
	}
	restartingCondition := func(js *jobset.JobSet) *jobset.JobSet {
		js.Status.Conditions = []metav1.Condition{{Type: string(jobset.JobSetRestarting), Status: metav1.ConditionTrue}}
		return js
	}
	deleting := func(j batchv1.Job) batchv1.Job {
		j.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		return j
	}

	type want struct {
		create, delete []string
		blocked        int
		restarting     bool
	}
	cases := map[string]struct {
		js   *jobset.JobSet
		jobs []batchv1.Job
		want want
	}{
		"first run creates every Job": {
			js:   jobSet(jobset.Recreate, 0),
			want: want{create: []string{"js-workers-0", "js-workers-1"}},
		},
		"converged: nothing to do": {
			js:   jobSet(jobset.Recreate, 0),
			jobs: []batchv1.Job{job(0, 0), job(1, 0)},
			want: want{},
		},
		"Recreate: Jobs of the old attempt are deleted": {
			js:   jobSet(jobset.Recreate, 1),
			jobs: []batchv1.Job{job(0, 0), job(1, 0)},
			want: want{delete: []string{"js-workers-0", "js-workers-1"}, blocked: 2, restarting: true},
		},
		"Recreate: a Job is recreated as soon as its own predecessor is gone": {
			js:   jobSet(jobset.Recreate, 1),
			jobs: []batchv1.Job{deleting(job(1, 0))},
			want: want{create: []string{"js-workers-0"}, blocked: 1, restarting: true},
		},
		"BlockingRecreate: nothing is created while any old Job remains": {
			js:   jobSet(jobset.BlockingRecreate, 1),
			jobs: []batchv1.Job{deleting(job(1, 0))},
			want: want{blocked: 2, restarting: true},
		},
		"BlockingRecreate: everything is created once all old Jobs are gone": {
			js:   restartingCondition(jobSet(jobset.BlockingRecreate, 1)),
			want: want{create: []string{"js-workers-0", "js-workers-1"}, restarting: true},
		},
		"a Job recreated alone after a full restart is over is no full restart": {
			js:   jobSet(jobset.Recreate, 1),
			jobs: []batchv1.Job{job(0, 1), deleting(job(1, 1))},
			want: want{blocked: 1},
		},
		"restart finished: every Job of the new attempt exists": {
			js:   jobSet(jobset.BlockingRecreate, 1),
			jobs: []batchv1.Job{job(0, 1), job(1, 1)},
			want: want{},
		},
	}
	names := func(jobs []*batchv1.Job) []string {
		var out []string
		for _, j := range jobs {
			out = append(out, j.Name)
		}
		return out
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			children := classifyJobs(tc.js, tc.jobs, false)
			plan := planChildren(tc.js, children, replicatedJobsStatus(tc.js, children), false, nil)
			got := want{create: names(plan.create), delete: names(plan.delete), blocked: plan.blocked, restarting: plan.restarting(tc.js)}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConstructJob(t *testing.T) {
	js := wrappers.MakeJobSet("trainer", "ns").
		ReplicatedJob(wrappers.MakeReplicatedJob("driver").GroupName("control").Obj()).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(3).Pods(4).GroupName("compute").Obj()).
		RestartsStatus(2, 1).Obj()
	js.UID = "uid-1"
	js.Spec.Coordinator = &jobset.Coordinator{ReplicatedJob: "driver"}

	at := desiredJobs(js)[2] // workers, index 1
	job := constructJob(js, at)

	if job.Name != "trainer-workers-1" {
		t.Errorf("name = %s, want trainer-workers-1", job.Name)
	}
	want := map[string]string{
		jobset.JobSetNameKey:            "trainer",
		jobset.JobSetUIDKey:             "uid-1",
		jobset.ReplicatedJobNameKey:     "workers",
		jobset.ReplicatedJobReplicasKey: "3",
		jobset.GlobalReplicasKey:        "4",
		jobset.JobIndexKey:              "1",
		jobset.JobGlobalIndexKey:        "2",
		jobset.JobKey:                   jobKey("ns", "trainer-workers-1"),
		jobset.RestartsKey:              "2",
		jobset.GroupNameKey:             "compute",
		jobset.GroupReplicasKey:         "3",
		jobset.JobGroupIndexKey:         "1",
		jobset.CoordinatorKey:           "trainer-driver-0-0.trainer",
	}
	for what, got := range map[string]map[string]string{
		"Job labels":               job.Labels,
		"Job annotations":          job.Annotations,
		"Pod template labels":      job.Spec.Template.Labels,
		"Pod template annotations": job.Spec.Template.Annotations,
	} {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	if owner := metav1.GetControllerOf(job); owner == nil || owner.UID != "uid-1" || owner.Kind != "JobSet" {
		t.Errorf("controller owner = %+v, want the JobSet", owner)
	}
	if job.Spec.Template.Spec.Subdomain != "trainer" {
		t.Errorf("subdomain = %q, want the JobSet's name", job.Spec.Template.Spec.Subdomain)
	}
	if *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode = %s, want Indexed", *job.Spec.CompletionMode)
	}
	if *job.Spec.Parallelism != 4 {
		t.Errorf("parallelism = %d, want the template's 4", *job.Spec.Parallelism)
	}
}

func TestConstructJobExclusivePlacement(t *testing.T) {
	const rack = "example.com/rack"
	cases := map[string]struct {
		jobSetAnnotations, templateAnnotations map[string]string
		wantExclusive                          bool
		wantNodeSelector                       map[string]string
	}{
		"not asked for": {},
		"on the JobSet: every Job": {
			jobSetAnnotations: map[string]string{jobset.ExclusiveKey: rack},
			wantExclusive:     true,
		},
		"on the replicatedJob's template: its Jobs": {
			templateAnnotations: map[string]string{jobset.ExclusiveKey: rack},
			wantExclusive:       true,
		},
		"node-selector strategy: select and tolerate the Job's own nodes": {
			jobSetAnnotations: map[string]string{jobset.ExclusiveKey: rack, jobset.NodeSelectorStrategyKey: "true"},
			wantExclusive:     true,
			wantNodeSelector:  map[string]string{jobset.NamespacedJobKey: "ns_trainer-workers-0"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			js := wrappers.MakeJobSet("trainer", "ns").Annotations(tc.jobSetAnnotations).
				ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
			js.Spec.ReplicatedJobs[0].Template.Annotations = tc.templateAnnotations
			job := constructJob(js, desiredJobs(js)[0])
			pod := job.Spec.Template

			for what, annotations := range map[string]map[string]string{"Job": job.Annotations, "Pod template": pod.Annotations} {
				if got := annotations[jobset.ExclusiveKey] == rack; got != tc.wantExclusive {
					t.Errorf("%s annotated %s=%s: %v, want %v", what, jobset.ExclusiveKey, rack, got, tc.wantExclusive)
				}
			}
			if diff := cmp.Diff(tc.wantNodeSelector, pod.Spec.NodeSelector); diff != "" {
				t.Errorf("node selector (-want +got):\n%s", diff)
			}
			tolerates := len(pod.Spec.Tolerations) == 1 && pod.Spec.Tolerations[0].Key == jobset.NoScheduleTaintKey
			if tolerates != (tc.wantNodeSelector != nil) {
				t.Errorf("tolerations = %v, want the %s toleration only with the node-selector strategy", pod.Spec.Tolerations, jobset.NoScheduleTaintKey)
			}
		})
	}
}
