package jobsetcontroller

import (
	"crypto/sha1" //nolint:gosec // an identity that fits a label value, not a security hash
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// JobName is the name of the index-th Job of a replicatedJob.
func JobName(jsName, replicatedJob string, index int) string {
	return fmt.Sprintf("%s-%s-%d", jsName, replicatedJob, index)
}

// ServiceName is the name of the headless Service, which is also the Pods'
// subdomain.
func ServiceName(js *jobset.JobSet) string {
	if js.Spec.Network != nil && js.Spec.Network.Subdomain != "" {
		return js.Spec.Network.Subdomain
	}
	return js.Name
}

// DNSHostnamesEnabled reports whether Pods get stable DNS hostnames. Unset
// means enabled, the value the webhook defaults to.
func DNSHostnamesEnabled(js *jobset.JobSet) bool {
	return js.Spec.Network == nil || js.Spec.Network.EnableDNSHostnames == nil || *js.Spec.Network.EnableDNSHostnames
}

func publishNotReadyAddresses(js *jobset.JobSet) bool {
	return js.Spec.Network == nil || js.Spec.Network.PublishNotReadyAddresses == nil || *js.Spec.Network.PublishNotReadyAddresses
}

// jobKey identifies a Job by a fixed-size hash of its namespaced name: 40
// hex characters fit a label value (63) whatever the name's length, which
// SHA-256's 64 would not.
func jobKey(namespace, name string) string {
	sum := sha1.Sum([]byte(namespace + "/" + name))
	return hex.EncodeToString(sum[:])
}

// jobIndexes locates one Job among all Jobs of the JobSet.
type jobIndexes struct {
	replicatedJob  jobset.ReplicatedJob
	index          int // within the replicatedJob
	globalIndex    int // within the JobSet
	groupIndex     int // within the replicatedJob's group
	groupReplicas  int32
	globalReplicas int32
	// generation, under the RestartJob feature gate, is the Job's
	// job-restart-attempt (restart_job.go).
	generation *int32
	// executionAttempt, under the ExecutionAttemptsTracking feature gate,
	// is the JobSet's execution the Job runs in (execution_attempts.go).
	executionAttempt *int32
}

// desiredJobs lists, in spec order, where every Job of the JobSet belongs.
func desiredJobs(js *jobset.JobSet) []jobIndexes {
	var global int32
	groupReplicas := map[string]int32{}
	for _, rj := range js.Spec.ReplicatedJobs {
		global += rj.Replicas
		groupReplicas[rj.GroupName] += rj.Replicas
	}
	var out []jobIndexes
	globalIndex := 0
	groupIndex := map[string]int{}
	for _, rj := range js.Spec.ReplicatedJobs {
		for i := 0; i < int(rj.Replicas); i++ {
			out = append(out, jobIndexes{
				replicatedJob:  rj,
				index:          i,
				globalIndex:    globalIndex,
				groupIndex:     groupIndex[rj.GroupName],
				groupReplicas:  groupReplicas[rj.GroupName],
				globalReplicas: global,
			})
			globalIndex++
			groupIndex[rj.GroupName]++
		}
	}
	return out
}

// constructJob builds a child Job: the replicatedJob's template with the
// JobSet's identity stamped on the Job and on its Pod template, owned by the
// JobSet as its controller.
func constructJob(js *jobset.JobSet, at jobIndexes) *batchv1.Job {
	rj := at.replicatedJob
	name := JobName(js.Name, rj.Name, at.index)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   js.Namespace,
			Labels:      maps.Clone(rj.Template.Labels),
			Annotations: maps.Clone(rj.Template.Annotations),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(js,
				jobset.GroupVersion.WithKind("JobSet"))},
		},
		Spec: *rj.Template.Spec.DeepCopy(),
	}
	identity := jobIdentity(js, at, name)
	job.Labels = withAll(job.Labels, identity)
	job.Annotations = withAll(job.Annotations, identity)
	// Exclusive placement is asked for on the JobSet (every Job) or on a
	// replicatedJob's Job template (its Jobs only); the Pod webhooks read it
	// from the Pods.
	for _, key := range placementKeys {
		if v, ok := js.Annotations[key]; ok {
			job.Annotations[key] = v
		}
	}

	pod := &job.Spec.Template
	pod.Labels = withAll(pod.Labels, identity)
	pod.Annotations = withAll(pod.Annotations, identity)
	// Only a Pod's agent writes its epoch, once it joined: a copied one
	// would make new Pods look joined before their agents started.
	delete(pod.Annotations, jobset.EpochKey)
	for _, key := range placementKeys {
		if v, ok := job.Annotations[key]; ok {
			pod.Annotations[key] = v
		}
	}
	if _, ok := job.Annotations[jobset.NodeSelectorStrategyKey]; ok {
		pinToNamespacedJobNodes(&pod.Spec, js.Namespace, name)
	}
	nameInPlaceGroup(job, inplace.GroupNameOf(&rj))
	if DNSHostnamesEnabled(js) {
		pod.Spec.Subdomain = ServiceName(js)
	}
	mountVolumeClaims(js, &pod.Spec)
	stampExecutionAttempt(job, at.executionAttempt)
	// Pod hostnames <job>-<index> and per-index restarts need Indexed Jobs.
	if job.Spec.CompletionMode == nil {
		job.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	}
	job.Spec.Suspend = ptr.To(ptr.Deref(js.Spec.Suspend, false))
	return job
}

// nameInPlaceGroup labels the Job and its Pods with the in-place group
// their replicatedJob names, and tells their agent which group's epochs
// to follow. Without a name, or without an agent, the Job is left as it
// is: its agent follows the default group.
func nameInPlaceGroup(job *batchv1.Job, group string) {
	pod := &job.Spec.Template
	agent := sidecar.Index(pod.Spec)
	if group == "" || agent < 0 {
		return
	}
	job.Labels[jobset.InPlaceGroupKey] = group
	pod.Labels[jobset.InPlaceGroupKey] = group
	pod.Annotations[jobset.InPlaceGroupKey] = group
	c := &pod.Spec.InitContainers[agent]
	c.Env = slices.DeleteFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == agentspec.EnvInPlaceGroup })
	c.Env = append(c.Env, corev1.EnvVar{Name: agentspec.EnvInPlaceGroup, Value: group})
}

// placementKeys are the exclusive-placement annotations that pass from the
// JobSet to its Jobs and from a Job to its Pod template.
var placementKeys = []string{jobset.ExclusiveKey, jobset.NodeSelectorStrategyKey}

// pinToNamespacedJobNodes applies the node-selector strategy of exclusive
// placement: an administrator labels (and taints) a domain's nodes for one
// Job beforehand, and its Pods select and tolerate exactly those nodes.
func pinToNamespacedJobNodes(pod *corev1.PodSpec, namespace, jobName string) {
	if pod.NodeSelector == nil {
		pod.NodeSelector = map[string]string{}
	}
	pod.NodeSelector[jobset.NamespacedJobKey] = namespace + "_" + jobName
	pod.Tolerations = append(pod.Tolerations, corev1.Toleration{
		Key:      jobset.NoScheduleTaintKey,
		Operator: corev1.TolerationOpExists,
		Effect:   corev1.TaintEffectNoSchedule,
	})
}

// jobIdentity is the set of keys written both as labels and as annotations
// on a Job and its Pod template.
func jobIdentity(js *jobset.JobSet, at jobIndexes, jobName string) map[string]string {
	rj := at.replicatedJob
	id := map[string]string{
		jobset.JobSetNameKey:            js.Name,
		jobset.JobSetUIDKey:             string(js.UID),
		jobset.ReplicatedJobNameKey:     rj.Name,
		jobset.ReplicatedJobReplicasKey: strconv.Itoa(int(rj.Replicas)),
		jobset.GlobalReplicasKey:        strconv.Itoa(int(at.globalReplicas)),
		jobset.JobIndexKey:              strconv.Itoa(at.index),
		jobset.JobGlobalIndexKey:        strconv.Itoa(at.globalIndex),
		jobset.JobKey:                   jobKey(js.Namespace, jobName),
		jobset.RestartsKey:              strconv.Itoa(int(js.Status.Restarts)),
		jobset.GroupNameKey:             rj.GroupName,
		jobset.GroupReplicasKey:         strconv.Itoa(int(at.groupReplicas)),
		jobset.JobGroupIndexKey:         strconv.Itoa(at.groupIndex),
	}
	if endpoint, ok := coordinatorEndpoint(js); ok {
		id[jobset.CoordinatorKey] = endpoint
	}
	if at.generation != nil {
		id[jobset.JobRestartAttemptKey] = strconv.Itoa(int(*at.generation))
	}
	return id
}

// coordinatorEndpoint is the stable network endpoint of the coordinator Pod:
// <jobset>-<replicatedJob>-<jobIndex>-<podIndex>.<subdomain>.
func coordinatorEndpoint(js *jobset.JobSet) (string, bool) {
	c := js.Spec.Coordinator
	if c == nil {
		return "", false
	}
	return fmt.Sprintf("%s-%d.%s", JobName(js.Name, c.ReplicatedJob, c.JobIndex), c.PodIndex, ServiceName(js)), true
}

// constructService builds the headless Service that gives every Pod a DNS
// name under the JobSet's subdomain.
func constructService(js *jobset.JobSet) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:      ServiceName(js),
			Namespace: js.Namespace,
			Labels:    map[string]string{jobset.JobSetNameKey: js.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(js,
				jobset.GroupVersion.WithKind("JobSet"))},
		},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 map[string]string{jobset.JobSetNameKey: js.Name},
			PublishNotReadyAddresses: publishNotReadyAddresses(js),
		},
	}
}

// withAll returns into with every key of from set, allocating when needed.
func withAll(into, from map[string]string) map[string]string {
	if into == nil {
		into = make(map[string]string, len(from))
	}
	maps.Copy(into, from)
	return into
}
