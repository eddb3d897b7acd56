package sidecar

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// agentPod is a Pod of containers with the agent injected.
func agentPod(containers ...corev1.Container) *corev1.PodSpec {
	job := job(corev1.PodSpec{Containers: containers})
	Inject(job, Options{Image: "agent:1"})
	return &job.Template.Spec
}

func TestInjectWrapper(t *testing.T) {
	worker := corev1.Container{Name: "worker", Image: "w", Command: []string{"python", "-m", "train"}, Args: []string{"--lr", "0.1"}}

	p := agentPod(worker)
	if !InjectWrapper(p, Options{Image: "agent:1"}) {
		t.Fatal("a worker that names its command is not wrapped")
	}
	pod := *p
	if got := pod.Containers[0].Command; !cmp.Equal(got, []string{agentspec.WrapperBinary, "-control=" + agentspec.WrapperControl, "--", "python", "-m", "train"}) {
		t.Errorf("worker command = %q", got)
	}
	if got := pod.Containers[0].Args; !cmp.Equal(got, worker.Args) {
		t.Errorf("worker args = %q, want them as they were", got)
	}
	if len(pod.InitContainers) != 2 || pod.InitContainers[0].Name != agentspec.WrapperInstallerName || Index(pod) != 1 {
		t.Fatalf("init containers %v: want the installer ahead of the agent, which holds back every init container after it", pod.InitContainers)
	}
	installer := pod.InitContainers[0]
	if !cmp.Equal(installer.SecurityContext, SecurityContext()) || !cmp.Equal(installer.Resources, pod.InitContainers[1].Resources) {
		t.Errorf("installer runs as %+v with %+v: want the agent's securityContext and resources", installer.SecurityContext, installer.Resources)
	}
	if installer.Image != "agent:1" || installer.RestartPolicy != nil {
		t.Errorf("installer: image %q, restartPolicy %v; want the agent's image, run once", installer.Image, installer.RestartPolicy)
	}

	again := pod.DeepCopy()
	if InjectWrapper(again, Options{Image: "agent:1"}) || !cmp.Equal(*again, pod) {
		t.Errorf("a wrapped Pod is wrapped again:\n%s", cmp.Diff(pod, *again))
	}

	for name, tc := range map[string]struct {
		pod  corev1.PodSpec
		want string
	}{
		"no command":      {*agentPod(corev1.Container{Name: "worker", Image: "w", Args: []string{"x"}}), `"worker" sets no command`},
		"two containers":  {*agentPod(worker, corev1.Container{Name: "side", Command: []string{"s"}}), "2 containers"},
		"no agent at all": {corev1.PodSpec{Containers: []corev1.Container{worker}}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			before := tc.pod.DeepCopy()
			if InjectWrapper(&tc.pod, Options{Image: "agent:1"}) || !cmp.Equal(*before, tc.pod) {
				t.Errorf("wrapped: %s", cmp.Diff(*before, tc.pod))
			}
			if _, why := WorkerToWrap(tc.pod); tc.want != "" && !strings.Contains(why, tc.want) {
				t.Errorf("WorkerToWrap says %q, want %q", why, tc.want)
			}
		})
	}
}
