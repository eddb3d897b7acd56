// Package wrappers builds valid JobSet objects for tests, one setter per
// field: MakeJobSet("js", "ns").ReplicatedJob(...).Obj().
package wrappers

import (
	"math"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// AgentImage is the agent image of InPlaceReady's sidecar: tests on
// envtest never run it.
const AgentImage = "jobset-agent:test"

// JobSetWrapper wraps a JobSet under construction.
type JobSetWrapper struct{ jobset.JobSet }

// MakeJobSet returns a JobSet with no replicatedJobs yet.
func MakeJobSet(name, namespace string) *JobSetWrapper {
	return &JobSetWrapper{jobset.JobSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	}}
}

// Obj returns a copy of the JobSet.
func (w *JobSetWrapper) Obj() *jobset.JobSet {
	return w.DeepCopy()
}

// ReplicatedJob appends a replicatedJob.
func (w *JobSetWrapper) ReplicatedJob(rj jobset.ReplicatedJob) *JobSetWrapper {
	w.Spec.ReplicatedJobs = append(w.Spec.ReplicatedJobs, rj)
	return w
}

// FailurePolicy sets spec.failurePolicy.
func (w *JobSetWrapper) FailurePolicy(p *jobset.FailurePolicy) *JobSetWrapper {
	w.Spec.FailurePolicy = p
	return w
}

// RestartStrategy sets spec.failurePolicy.restartStrategy, creating the
// failure policy when needed.
func (w *JobSetWrapper) RestartStrategy(s jobset.JobSetRestartStrategy) *JobSetWrapper {
	if w.Spec.FailurePolicy == nil {
		w.Spec.FailurePolicy = &jobset.FailurePolicy{}
	}
	w.Spec.FailurePolicy.RestartStrategy = s
	return w
}

// MaxRestarts sets spec.failurePolicy.maxRestarts, creating the failure
// policy when needed.
func (w *JobSetWrapper) MaxRestarts(n int32) *JobSetWrapper {
	if w.Spec.FailurePolicy == nil {
		w.Spec.FailurePolicy = &jobset.FailurePolicy{}
	}
	w.Spec.FailurePolicy.MaxRestarts = n
	return w
}

// SuccessPolicy sets spec.successPolicy.
func (w *JobSetWrapper) SuccessPolicy(operator jobset.Operator, targets ...string) *JobSetWrapper {
	w.Spec.SuccessPolicy = &jobset.SuccessPolicy{Operator: operator, TargetReplicatedJobs: targets}
	return w
}

// FailurePolicyRule appends a failure policy rule, creating the failure
// policy when needed.
func (w *JobSetWrapper) FailurePolicyRule(rule jobset.FailurePolicyRule) *JobSetWrapper {
	if w.Spec.FailurePolicy == nil {
		w.Spec.FailurePolicy = &jobset.FailurePolicy{}
	}
	w.Spec.FailurePolicy.Rules = append(w.Spec.FailurePolicy.Rules, rule)
	return w
}

// RestartsStatus sets status.restarts and status.restartsCountTowardsMax.
func (w *JobSetWrapper) RestartsStatus(restarts, countTowardsMax int32) *JobSetWrapper {
	w.Status.Restarts = restarts
	w.Status.RestartsCountTowardsMax = countTowardsMax
	return w
}

// EnableDNSHostnames sets spec.network.enableDNSHostnames.
func (w *JobSetWrapper) EnableDNSHostnames(enable bool) *JobSetWrapper {
	if w.Spec.Network == nil {
		w.Spec.Network = &jobset.Network{}
	}
	w.Spec.Network.EnableDNSHostnames = ptr.To(enable)
	return w
}

// Suspend sets spec.suspend.
func (w *JobSetWrapper) Suspend(s bool) *JobSetWrapper {
	w.Spec.Suspend = ptr.To(s)
	return w
}

// Annotations merges annotations into the JobSet's annotations.
func (w *JobSetWrapper) Annotations(annotations map[string]string) *JobSetWrapper {
	w.ObjectMeta.Annotations = merge(w.ObjectMeta.Annotations, annotations)
	return w
}

// VolumeClaimPolicy adds a volumeClaimPolicy with a 1Gi ReadWriteOnce claim
// template per name and the given whenDeleted ("" leaves the default).
func (w *JobSetWrapper) VolumeClaimPolicy(whenDeleted jobset.RetentionPolicyType, names ...string) *JobSetWrapper {
	policy := jobset.VolumeClaimPolicy{}
	if whenDeleted != "" {
		policy.RetentionPolicy = &jobset.VolumeRetentionPolicy{WhenDeleted: ptr.To(whenDeleted)}
	}
	for _, name := range names {
		policy.Templates = append(policy.Templates, corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceStorage: resource.MustParse("1Gi"),
				}},
			},
		})
	}
	w.Spec.VolumeClaimPolicies = append(w.Spec.VolumeClaimPolicies, policy)
	return w
}

// ReplicatedJobWrapper wraps a replicatedJob under construction.
type ReplicatedJobWrapper struct{ jobset.ReplicatedJob }

// MakeReplicatedJob returns a replicatedJob of one Indexed Job with one Pod
// running a single container.
func MakeReplicatedJob(name string) *ReplicatedJobWrapper {
	return &ReplicatedJobWrapper{jobset.ReplicatedJob{
		Name:     name,
		Replicas: 1,
		Template: batchv1.JobTemplateSpec{
			Spec: batchv1.JobSpec{
				Parallelism:    ptr.To[int32](1),
				Completions:    ptr.To[int32](1),
				CompletionMode: ptr.To(batchv1.IndexedCompletion),
				Template: corev1.PodTemplateSpec{
					Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever,
						Containers: []corev1.Container{{
							Name:  "worker",
							Image: "registry.k8s.io/pause:3.10",
						}},
					},
				},
			},
		},
	}}
}

// Obj returns a copy of the replicatedJob.
func (w *ReplicatedJobWrapper) Obj() jobset.ReplicatedJob {
	return *w.DeepCopy()
}

// Replicas sets the number of Jobs.
func (w *ReplicatedJobWrapper) Replicas(n int32) *ReplicatedJobWrapper {
	w.ReplicatedJob.Replicas = n
	return w
}

// Pods sets parallelism and completions of each Job to n.
func (w *ReplicatedJobWrapper) Pods(n int32) *ReplicatedJobWrapper {
	w.Template.Spec.Parallelism = ptr.To(n)
	w.Template.Spec.Completions = ptr.To(n)
	return w
}

// MountVolumes mounts each named volume at /<name> in the first container.
func (w *ReplicatedJobWrapper) MountVolumes(names ...string) *ReplicatedJobWrapper {
	c := &w.Template.Spec.Template.Spec.Containers[0]
	for _, name := range names {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: "/" + name})
	}
	return w
}

// GroupName sets the replicatedJob's group.
func (w *ReplicatedJobWrapper) GroupName(g string) *ReplicatedJobWrapper {
	w.ReplicatedJob.GroupName = g
	return w
}

// InPlaceGroup names the replicatedJob's in-place group (the annotation
// on its Job template).
func (w *ReplicatedJobWrapper) InPlaceGroup(name string) *ReplicatedJobWrapper {
	w.Template.Annotations = merge(w.Template.Annotations, map[string]string{jobset.InPlaceGroupKey: name})
	return w
}

// PodLabels merges labels into the Pod template's labels.
func (w *ReplicatedJobWrapper) PodLabels(labels map[string]string) *ReplicatedJobWrapper {
	w.Template.Spec.Template.Labels = merge(w.Template.Spec.Template.Labels, labels)
	return w
}

func merge(into, from map[string]string) map[string]string {
	if into == nil && len(from) > 0 {
		into = make(map[string]string, len(from))
	}
	for k, v := range from {
		into[k] = v
	}
	return into
}

// JobWrapper wraps a child Job under construction, as the JobSet
// controller would have created it.
type JobWrapper struct{ batchv1.Job }

// MakeJob returns a Job of the given replicatedJob, restart attempt 0.
func MakeJob(name, namespace, replicatedJob string) *JobWrapper {
	return &JobWrapper{batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: namespace,
			Labels: map[string]string{
				jobset.ReplicatedJobNameKey: replicatedJob,
				jobset.RestartsKey:          "0",
			},
		},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1)},
	}}
}

// Obj returns a copy of the Job.
func (w *JobWrapper) Obj() *batchv1.Job {
	return w.DeepCopy()
}

// RestartAttempt sets the restart attempt the Job was created for.
func (w *JobWrapper) RestartAttempt(n int) *JobWrapper {
	w.Labels[jobset.RestartsKey] = strconv.Itoa(n)
	return w
}

// Index sets the Job's index within its replicatedJob.
func (w *JobWrapper) Index(n int) *JobWrapper {
	w.Labels[jobset.JobIndexKey] = strconv.Itoa(n)
	return w
}

// JobRestartAttempt sets the generation of its index the Job was created
// for (the RestartJob failure policy action).
func (w *JobWrapper) JobRestartAttempt(n int) *JobWrapper {
	w.Labels[jobset.JobRestartAttemptKey] = strconv.Itoa(n)
	return w
}

// Failed adds a Failed condition with the given reason, message and time.
func (w *JobWrapper) Failed(reason, message string, at time.Time) *JobWrapper {
	w.Status.Conditions = append(w.Status.Conditions, batchv1.JobCondition{
		Type: batchv1.JobFailed, Status: corev1.ConditionTrue,
		Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(at),
	})
	return w
}

// FailureTarget adds the FailureTarget condition the Job controller sets
// when it has decided the Job fails, before its Pods have terminated.
func (w *JobWrapper) FailureTarget(reason, message string, at time.Time) *JobWrapper {
	w.Status.Conditions = append(w.Status.Conditions, batchv1.JobCondition{
		Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue,
		Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(at),
	})
	return w
}

// Complete adds a Complete condition.
func (w *JobWrapper) Complete() *JobWrapper {
	w.Status.Conditions = append(w.Status.Conditions, batchv1.JobCondition{
		Type: batchv1.JobComplete, Status: corev1.ConditionTrue,
	})
	return w
}

// InPlaceReady makes the replicatedJob what restartStrategy InPlaceRestart
// needs, as docs/user-guide.md shows it: backoffLimit MaxInt32,
// podReplacementPolicy Failed, and the agent sidecar and worker restart
// rules that the webhook injects.
func (w *ReplicatedJobWrapper) InPlaceReady() *ReplicatedJobWrapper {
	spec := &w.Template.Spec
	spec.BackoffLimit = ptr.To[int32](math.MaxInt32)
	spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
	sidecar.Inject(spec, sidecar.Options{Image: AgentImage})
	return w
}
