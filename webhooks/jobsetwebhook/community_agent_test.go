package jobsetwebhook

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/features"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

// communityAgent is community JobSet v0.12.0's in-place restart agent as
// its users write it: a restartable init container with the environment
// its cmd/in-place-restart-agent reads and a RestartAllContainers rule on
// its restart code, 1.
func communityAgent() corev1.Container {
	return corev1.Container{
		Name:          "in-place-restart-agent",
		Image:         "registry.example.com/jobset/in-place-restart-agent:v0.12.0",
		RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
		Env: []corev1.EnvVar{
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "JOBSET_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + jobset.JobSetNameKey + "']"}}},
			{Name: "IN_PLACE_RESTART_EXIT_CODE", Value: "1"},
		},
		RestartPolicyRules: []corev1.ContainerRestartRule{{
			Action: corev1.ContainerRestartRuleActionRestartAllContainers,
			ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{
				Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{1},
			},
		}},
	}
}

// withCommunityAgent is an in-place JobSet whose workers run community
// JobSet's agent instead of ours.
func withCommunityAgent(agent corev1.Container) *jobset.JobSet {
	js := wrappers.MakeJobSet("trainer", "ns").RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(1).Pods(2).InPlaceReady().Obj()).Obj()
	pod := &js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
	pod.InitContainers[sidecar.Index(*pod)] = agent
	return js
}

// TestValidateTellsCommunityAgentApart: community JobSet's agent has our
// agent's shape (a restartable init container with a RestartAllContainers
// rule) but not its protocol; admission names it as community's and says
// what to do, instead of asking for our agent's environment.
func TestValidateTellsCommunityAgentApart(t *testing.T) {
	const path = "spec.replicatedJobs[0].template.spec.template.spec.initContainers[0]"
	byImage := communityAgent()
	byImage.Env = byImage.Env[:2] // the defaults of everything else
	byEnv := communityAgent()
	byEnv.Image = "registry.example.com/team/agent:1"
	injected := withCommunityAgent(communityAgent())
	injected.Annotations = map[string]string{jobset.InjectAgentKey: "true"}
	InjectAgent(injected, sidecar.Options{Image: wrappers.AgentImage})

	cases := map[string]*jobset.JobSet{
		"community's agent":                  withCommunityAgent(communityAgent()),
		"known by its image alone":           withCommunityAgent(byImage),
		"known by its environment alone":     withCommunityAgent(byEnv),
		"left in place of an injected agent": injected,
	}
	for name, js := range cases {
		t.Run(name, func(t *testing.T) {
			errs := Validate(js, features.Gates{})
			if len(errs) != 1 {
				t.Fatalf("errors %v, want one naming community JobSet's agent", errs)
			}
			e := errs[0]
			if e.Field != path {
				t.Errorf("error at %s, want %s", e.Field, path)
			}
			for _, want := range []string{"community JobSet's in-place restart agent", "remove this container", jobset.InjectAgentKey + `: "true"`, "user-guide.md#migrating-from-community-jobset"} {
				if !strings.Contains(e.Error(), want) {
					t.Errorf("error %q does not say %q", e.Error(), want)
				}
			}
		})
	}

	t.Run("community's agent as the worker's wrapper (WORKER_COMMAND)", func(t *testing.T) {
		js := withCommunityAgent(communityAgent())
		pod := &js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
		pod.InitContainers = nil
		pod.Containers[0].Env = append(pod.Containers[0].Env, corev1.EnvVar{Name: "WORKER_COMMAND", Value: "python train.py"},
			corev1.EnvVar{Name: "IN_PLACE_RESTART_EXIT_CODE", Value: "1"})
		errs := Validate(js, features.Gates{})
		if len(errs) != 1 || errs[0].Field != "spec.replicatedJobs[0].template.spec.template.spec.containers[0]" ||
			!strings.Contains(errs[0].Error(), "community JobSet's in-place restart agent") {
			t.Errorf("errors %v, want one naming containers[0] community JobSet's agent", errs)
		}
	})

	t.Run("our agent is ours", func(t *testing.T) {
		js := wrappers.MakeJobSet("trainer", "ns").RestartStrategy(jobset.InPlaceRestart).MaxRestarts(3).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").InPlaceReady().Obj()).Obj()
		if errs := Validate(js, features.Gates{}); len(errs) != 0 {
			t.Errorf("errors %v, want none", errs)
		}
	})
}
