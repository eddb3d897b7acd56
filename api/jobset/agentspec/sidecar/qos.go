package sidecar

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// QOSClass is the QoS class the kubelet gives a Pod of this spec, computed
// as Kubernetes does (pkg/apis/core/helper/qos) from the requests and
// limits of CPU and memory of its containers and init containers, with a
// missing request defaulted to its limit as the API server does. A spec
// with Pod-level resources is classed by those.
func QOSClass(pod corev1.PodSpec) corev1.PodQOSClass {
	if pod.Resources != nil {
		return qosOf([]corev1.ResourceRequirements{*pod.Resources})
	}
	all := make([]corev1.ResourceRequirements, 0, len(pod.InitContainers)+len(pod.Containers))
	for _, c := range pod.InitContainers {
		all = append(all, c.Resources)
	}
	for _, c := range pod.Containers {
		all = append(all, c.Resources)
	}
	return qosOf(all)
}

// qosResources are the resources that decide a QoS class.
var qosResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

func qosOf(all []corev1.ResourceRequirements) corev1.PodQOSClass {
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	guaranteed := true
	add := func(list corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
		sum := list[name]
		sum.Add(q)
		list[name] = sum
	}
	for _, r := range all {
		limited := 0
		for _, name := range qosResources {
			limit, hasLimit := r.Limits[name]
			request, hasRequest := r.Requests[name]
			if !hasRequest && hasLimit {
				request, hasRequest = limit, true
			}
			if hasRequest && request.Sign() > 0 {
				add(requests, name, request)
			}
			if hasLimit && limit.Sign() > 0 {
				add(limits, name, limit)
				limited++
			}
		}
		if limited < len(qosResources) {
			guaranteed = false
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if guaranteed && len(requests) == len(limits) {
		for name, request := range requests {
			if limit, ok := limits[name]; !ok || limit.Cmp(request) != 0 {
				return corev1.PodQOSBurstable
			}
		}
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}
