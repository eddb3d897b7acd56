package peers

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestRolledOut: the judgement of `kubectl rollout status`, case by case.
func TestRolledOut(t *testing.T) {
	deployment := func(generation, observed int64, replicas int32, status appsv1.DeploymentStatus) *appsv1.Deployment {
		status.ObservedGeneration = observed
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d", Generation: generation},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
			Status:     status,
		}
	}
	cases := map[string]struct {
		d       *appsv1.Deployment
		done    bool
		why     string
		wantErr bool
	}{
		"created, not yet seen by its controller": {
			d:   deployment(1, 0, 1, appsv1.DeploymentStatus{}),
			why: "waiting for the Deployment's spec update to be observed",
		},
		"restarted, the new template not yet seen": {
			d:   deployment(2, 1, 1, appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}),
			why: "waiting for the Deployment's spec update to be observed",
		},
		"seen, no replica updated": {
			d:   deployment(2, 2, 1, appsv1.DeploymentStatus{Replicas: 1, AvailableReplicas: 1}),
			why: "0 of 1 new replicas updated",
		},
		"updated, the old replica still there": {
			d:   deployment(2, 2, 1, appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 1, AvailableReplicas: 1}),
			why: "1 old replicas pending termination",
		},
		"updated, not yet available": {
			d:   deployment(2, 2, 1, appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1}),
			why: "0 of 1 updated replicas available",
		},
		"rolled out": {
			d:    deployment(2, 2, 1, appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}),
			done: true,
		},
		"past its progress deadline": {
			d: deployment(2, 2, 1, appsv1.DeploymentStatus{Replicas: 1, Conditions: []appsv1.DeploymentCondition{{
				Type: appsv1.DeploymentProgressing, Status: "False", Reason: "ProgressDeadlineExceeded",
			}}}),
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			done, why, err := rolledOut(tc.d)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want one: %t", err, tc.wantErr)
			}
			if done != tc.done || why != tc.why {
				t.Errorf("rolledOut = %t, %q; want %t, %q", done, why, tc.done, tc.why)
			}
		})
	}
}
