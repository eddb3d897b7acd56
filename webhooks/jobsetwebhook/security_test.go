package jobsetwebhook

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// Admission warns when workers hold the agent's token, when the agent has
// none, and when the agent's resources change the Pod's QoS class.
func TestSecurityWarnings(t *testing.T) {
	guaranteed := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
	}
	for name, tc := range map[string]struct {
		// pod adjusts the Pod template before injection, agent after it
		// (a user's own agent).
		pod, agent func(*corev1.PodSpec)
		options    sidecar.Options
		want       []string
	}{
		"injected": {},
		"injected into a Guaranteed Pod": {
			pod: func(p *corev1.PodSpec) { p.Containers[0].Resources = guaranteed },
		},
		"injected, the template asks for the token explicitly": {
			pod:  func(p *corev1.PodSpec) { p.AutomountServiceAccountToken = ptr.To(true) },
			want: []string{"automountServiceAccountToken is true, so every container of the Pod, the workers too, holds the token"},
		},
		"another ServiceAccount": {
			pod:  func(p *corev1.PodSpec) { p.ServiceAccountName = "trainer" },
			want: []string{`serviceAccountName: the Pod runs as ServiceAccount "trainer", so its agent patches Pods with that identity, which the epoch-only admission policy does not cover`},
		},
		"another ServiceAccount, the agent fencing on its node's Lease": {
			pod:     func(p *corev1.PodSpec) { p.ServiceAccountName = "trainer" },
			options: sidecar.Options{FenceNodeLease: true},
			want: []string{`serviceAccountName: the Pod runs as ServiceAccount "trainer"`,
				`serviceAccountName: the agent fences on its node's Lease (FENCE_NODE_LEASE=true) and starts no worker until ServiceAccount "trainer" may watch leases in kube-node-lease`},
		},
		"the agent fencing on its node's Lease as jobset-agent": {
			options: sidecar.Options{FenceNodeLease: true},
		},
		"a user's own agent with the Pod's token mount": {
			agent: func(p *corev1.PodSpec) {
				p.AutomountServiceAccountToken = nil
				p.Volumes = nil
				p.InitContainers[0].VolumeMounts = nil
			},
			want: []string{"automountServiceAccountToken is unset (true by default)"},
		},
		"a user's own agent without any token": {
			agent: func(p *corev1.PodSpec) { p.InitContainers[0].VolumeMounts = nil },
			want:  []string{"the agent has no token and cannot join any epoch"},
		},
		"a user's own agent without resources in a Guaranteed Pod": {
			pod:   func(p *corev1.PodSpec) { p.Containers[0].Resources = guaranteed },
			agent: func(p *corev1.PodSpec) { p.InitContainers[0].Resources = corev1.ResourceRequirements{} },
			want:  []string{"initContainers[0].resources: the agent's resources make the Pod's QoS class Burstable instead of Guaranteed, which its other containers give it; give it requests equal to limits for cpu and memory, for example resources: {requests: {cpu: 100m, memory: 32Mi}"},
		},
		"a user's own agent with resources in a BestEffort Pod": {
			agent: func(p *corev1.PodSpec) { p.InitContainers[0].Resources = sidecar.Resources(sidecar.Options{}) },
			want:  []string{"QoS class Burstable instead of BestEffort, which its other containers give it; give it no requests or limits"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			rj := wrappers.MakeReplicatedJob("workers").Obj()
			pod := &rj.Template.Spec.Template.Spec
			if tc.pod != nil {
				tc.pod(pod)
			}
			js := wrappers.MakeJobSet("t", "ns").RestartStrategy(jobset.InPlaceRestart).
				Annotations(map[string]string{jobset.InjectAgentKey: "true"}).ReplicatedJob(rj).Obj()
			tc.options.Image = "agent"
			InjectAgent(js, tc.options)
			if tc.agent != nil {
				tc.agent(&js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec)
			}
			got := SecurityWarnings(js)
			if len(got) != len(tc.want) {
				t.Fatalf("warnings %q, want %d", got, len(tc.want))
			}
			for i, want := range tc.want {
				if !strings.Contains(got[i], want) {
					t.Errorf("warning %q does not say %q", got[i], want)
				}
			}
		})
	}
}
