package sidecar

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

func resources(requests, limits string) corev1.ResourceRequirements {
	list := func(s string) corev1.ResourceList {
		if s == "" {
			return nil
		}
		q := resource.MustParse(s)
		return corev1.ResourceList{corev1.ResourceCPU: q, corev1.ResourceMemory: q}
	}
	return corev1.ResourceRequirements{Requests: list(requests), Limits: list(limits)}
}

func TestQOSClass(t *testing.T) {
	for name, tc := range map[string]struct {
		containers []corev1.ResourceRequirements
		podLevel   *corev1.ResourceRequirements
		want       corev1.PodQOSClass
	}{
		"nothing":                       {[]corev1.ResourceRequirements{{}}, nil, corev1.PodQOSBestEffort},
		"requests equal limits":         {[]corev1.ResourceRequirements{resources("1", "1"), resources("2", "2")}, nil, corev1.PodQOSGuaranteed},
		"limits only (requests follow)": {[]corev1.ResourceRequirements{resources("", "1")}, nil, corev1.PodQOSGuaranteed},
		"requests below limits":         {[]corev1.ResourceRequirements{resources("1", "2")}, nil, corev1.PodQOSBurstable},
		"one container without":         {[]corev1.ResourceRequirements{resources("1", "1"), {}}, nil, corev1.PodQOSBurstable},
		"requests only":                 {[]corev1.ResourceRequirements{resources("1", "")}, nil, corev1.PodQOSBurstable},
		"cpu only": {[]corev1.ResourceRequirements{{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}, nil, corev1.PodQOSBurstable},
		"pod-level resources decide": {[]corev1.ResourceRequirements{{}}, ptr.To(resources("1", "1")), corev1.PodQOSGuaranteed},
	} {
		t.Run(name, func(t *testing.T) {
			pod := corev1.PodSpec{Resources: tc.podLevel}
			for _, r := range tc.containers {
				pod.Containers = append(pod.Containers, corev1.Container{Resources: r})
			}
			if got := QOSClass(pod); got != tc.want {
				t.Errorf("QOSClass = %s, want %s", got, tc.want)
			}
		})
	}
}

func job(pod corev1.PodSpec) *batchv1.JobSpec {
	return &batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: pod}}
}

// The injected agent keeps the Pod's QoS class: a Guaranteed Pod that
// turned Burstable would lose static CPU pinning and NUMA alignment.
func TestInjectKeepsTheQOSClass(t *testing.T) {
	for name, worker := range map[string]corev1.ResourceRequirements{
		"Guaranteed": resources("4", "4"),
		"Burstable":  resources("1", "4"),
		"BestEffort": {},
	} {
		t.Run(name, func(t *testing.T) {
			spec := job(corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Resources: worker}}})
			before := QOSClass(spec.Template.Spec)
			Inject(spec, Options{Image: "agent"})
			if after := QOSClass(spec.Template.Spec); after != before {
				t.Errorf("injection changed the QoS class from %s to %s", before, after)
			}
		})
	}
	spec := job(corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Resources: resources("4", "4")}}})
	Inject(spec, Options{Image: "agent", CPU: resource.MustParse("250m"), Memory: resource.MustParse("64Mi")})
	got := spec.Template.Spec.InitContainers[0].Resources
	want := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	if diff := cmp.Diff(corev1.ResourceRequirements{Requests: want, Limits: want}, got); diff != "" {
		t.Errorf("the options' resources must be the agent's requests and limits (-want +got):\n%s", diff)
	}
}

// Only the agent holds the ServiceAccount token: worker code that held it
// could restart or stall the group.
func TestInjectGivesTheTokenToTheAgentOnly(t *testing.T) {
	spec := job(corev1.PodSpec{Containers: []corev1.Container{{Name: "worker"}, {Name: "logger"}}})
	Inject(spec, Options{Image: "agent"})
	pod := spec.Template.Spec
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("automountServiceAccountToken = %v, want false: it would mount the token into every container", pod.AutomountServiceAccountToken)
	}
	if pod.ServiceAccountName != agentspec.ServiceAccountName {
		t.Errorf("serviceAccountName = %q, want %q: a projected token needs one, and the agent's Role is for it", pod.ServiceAccountName, agentspec.ServiceAccountName)
	}
	if diff := cmp.Diff([]corev1.Volume{TokenVolume(), StateVolume()}, pod.Volumes); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}
	for _, c := range append(pod.InitContainers, pod.Containers...) {
		var mounts []string
		for _, m := range c.VolumeMounts {
			mounts = append(mounts, m.Name+":"+m.MountPath)
		}
		want := []string(nil)
		if c.Name == agentspec.ContainerName {
			want = []string{agentspec.TokenVolumeName + ":" + agentspec.TokenMountPath, agentspec.StateVolumeName + ":" + agentspec.StateMountPath}
		}
		if diff := cmp.Diff(want, mounts); diff != "" {
			t.Errorf("container %s mounts (-want +got):\n%s", c.Name, diff)
		}
	}
	sources := pod.Volumes[0].Projected.Sources
	if len(sources) != 3 || sources[0].ServiceAccountToken == nil || sources[1].ConfigMap == nil || sources[2].DownwardAPI == nil {
		t.Errorf("the token volume must project a token, ca.crt and the namespace, as kube-api-access does: %+v", sources)
	}

	explicit := job(corev1.PodSpec{AutomountServiceAccountToken: ptr.To(true), ServiceAccountName: "trainer",
		Containers: []corev1.Container{{Name: "worker"}}})
	Inject(explicit, Options{Image: "agent"})
	if !*explicit.Template.Spec.AutomountServiceAccountToken || explicit.Template.Spec.ServiceAccountName != "trainer" {
		t.Errorf("an explicit automountServiceAccountToken: true and serviceAccountName must be respected: %v, %q",
			*explicit.Template.Spec.AutomountServiceAccountToken, explicit.Template.Spec.ServiceAccountName)
	}
	again := explicit.DeepCopy()
	Inject(again, Options{Image: "agent"})
	if diff := cmp.Diff(explicit, again); diff != "" {
		t.Errorf("injection is not idempotent:\n%s", diff)
	}
}

// What the restricted Pod Security Standard asks of a container (envtest's PodSecurity admission checks the whole Pod in
// //agent).
func TestAgentSecurityContextIsRestricted(t *testing.T) {
	sc := Container(Options{Image: "agent"}).SecurityContext
	switch {
	case sc == nil:
		t.Fatal("no securityContext")
	case !ptr.Deref(sc.RunAsNonRoot, false) || ptr.Deref(sc.RunAsUser, 0) == 0:
		t.Errorf("must run as a non-root user: %+v", sc)
	case ptr.Deref(sc.AllowPrivilegeEscalation, true):
		t.Errorf("allowPrivilegeEscalation must be false")
	case sc.Capabilities == nil || !cmp.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
		t.Errorf("must drop ALL capabilities and add none: %+v", sc.Capabilities)
	case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Errorf("seccompProfile must be RuntimeDefault: %+v", sc.SeccompProfile)
	case !ptr.Deref(sc.ReadOnlyRootFilesystem, false):
		t.Errorf("readOnlyRootFilesystem must be true")
	}
}

func TestCommunityAgentSign(t *testing.T) {
	cases := []struct {
		c    corev1.Container
		want string
	}{
		{corev1.Container{Image: "registry.k8s.io/jobset/in-place-restart-agent:v0.12.0@sha256:0123"}, "its image is in-place-restart-agent"},
		{corev1.Container{Image: "localhost:5000/in-place-restart-agent"}, "its image is in-place-restart-agent"},
		{corev1.Container{Image: "team/agent:1", Env: []corev1.EnvVar{{Name: "POD_NAME"}, {Name: "STARTUP_PROBE_PORT", Value: "8081"}}},
			"it sets STARTUP_PROBE_PORT, which only that agent reads"},
		{Container(Options{Image: "ghcr.io/fastjobset/jobset-agent:v0.1.0"}), ""},
		{corev1.Container{Image: "localhost:5000/in-place-restart-agent-fork:1"}, ""},
	}
	for _, tc := range cases {
		if got := CommunityAgentSign(tc.c); got != tc.want {
			t.Errorf("CommunityAgentSign(%s, env %v) = %q, want %q", tc.c.Image, tc.c.Env, got, tc.want)
		}
	}
}
