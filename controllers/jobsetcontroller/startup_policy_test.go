package jobsetcontroller

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

func TestStartupGate(t *testing.T) {
	threeInOrder := func() *jobset.JobSet {
		js := wrappers.MakeJobSet("js", "ns").
			ReplicatedJob(wrappers.MakeReplicatedJob("a").Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("b").Replicas(2).Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("c").Obj()).Obj()
		js.Spec.StartupPolicy = &jobset.StartupPolicy{StartupPolicyOrder: jobset.InOrder}
		return js
	}
	dependsOn := func(status jobset.DependsOnStatus) *jobset.JobSet {
		js := wrappers.MakeJobSet("js", "ns").
			ReplicatedJob(wrappers.MakeReplicatedJob("init").Replicas(2).Obj()).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		js.Spec.ReplicatedJobs[1].DependsOn = []jobset.DependsOn{{Name: "init", Status: status}}
		return js
	}
	st := func(name string, ready, succeeded, failed int32) jobset.ReplicatedJobStatus {
		return jobset.ReplicatedJobStatus{Name: name, Ready: ready, Succeeded: succeeded, Failed: failed}
	}
	cases := map[string]struct {
		js          *jobset.JobSet
		status      []jobset.ReplicatedJobStatus
		wantAllowed map[string]bool
		wantPending bool
	}{
		"AnyOrder: everything at once": {
			js:          wrappers.MakeJobSet("js", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("a").Obj()).ReplicatedJob(wrappers.MakeReplicatedJob("b").Obj()).Obj(),
			wantAllowed: map[string]bool{"a": true, "b": true},
		},
		"InOrder, nothing ready: the first only": {
			js:          threeInOrder(),
			wantAllowed: map[string]bool{"a": true, "b": false, "c": false},
			wantPending: true,
		},
		"InOrder, a ready, b half ready: up to b": {
			js:          threeInOrder(),
			status:      []jobset.ReplicatedJobStatus{st("a", 1, 0, 0), st("b", 1, 0, 0)},
			wantAllowed: map[string]bool{"a": true, "b": true, "c": false},
			wantPending: true,
		},
		"InOrder, a succeeded and b ready: c too": {
			js:          threeInOrder(),
			status:      []jobset.ReplicatedJobStatus{st("a", 0, 1, 0), st("b", 2, 0, 0)},
			wantAllowed: map[string]bool{"a": true, "b": true, "c": true},
			wantPending: true,
		},
		"InOrder, all started: completed": {
			js:          threeInOrder(),
			status:      []jobset.ReplicatedJobStatus{st("a", 1, 0, 0), st("b", 2, 0, 0), st("c", 1, 0, 0)},
			wantAllowed: map[string]bool{"a": true, "b": true, "c": true},
		},
		"dependsOn Ready, dependency not ready": {
			js:          dependsOn(jobset.DependencyReady),
			status:      []jobset.ReplicatedJobStatus{st("init", 1, 0, 0)},
			wantAllowed: map[string]bool{"init": true, "workers": false},
		},
		"dependsOn Ready: ready, succeeded and failed all count": {
			js:          dependsOn(jobset.DependencyReady),
			status:      []jobset.ReplicatedJobStatus{st("init", 0, 1, 1)},
			wantAllowed: map[string]bool{"init": true, "workers": true},
		},
		"dependsOn Complete: ready is not enough": {
			js:          dependsOn(jobset.DependencyComplete),
			status:      []jobset.ReplicatedJobStatus{st("init", 2, 0, 0)},
			wantAllowed: map[string]bool{"init": true, "workers": false},
		},
		"dependsOn Complete: every Job succeeded": {
			js:          dependsOn(jobset.DependencyComplete),
			status:      []jobset.ReplicatedJobStatus{st("init", 0, 2, 0)},
			wantAllowed: map[string]bool{"init": true, "workers": true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			allowed, pending := startupGate(tc.js, tc.status)
			if diff := cmp.Diff(tc.wantAllowed, allowed); diff != "" || pending != tc.wantPending {
				t.Errorf("allowed (-want +got):\n%s\npending = %v, want %v", diff, pending, tc.wantPending)
			}
		})
	}
}
