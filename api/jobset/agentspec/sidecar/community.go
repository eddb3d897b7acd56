package sidecar

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Community JobSet ships an in-place restart agent of its own
// (cmd/in-place-restart-agent of sigs.k8s.io/jobset). As a sidecar it has
// our agent's shape, a restartable init container with a
// RestartAllContainers rule, but another protocol: it writes the Pod
// annotation jobset.sigs.k8s.io/in-place-restart-attempt and lifts its
// barrier on the JobSet's status.currentInPlaceRestartAttempt, which this
// controller never writes. So a Pod that runs it never joins a group here.

// CommunityAgentImage is the name of community JobSet's agent image,
// without registry or tag.
const CommunityAgentImage = "in-place-restart-agent"

// communityAgentEnv are the variables community JobSet's agent reads and
// ours does not.
var communityAgentEnv = []string{"IN_PLACE_RESTART_EXIT_CODE", "STARTUP_PROBE_PATH", "STARTUP_PROBE_PORT", "WORKER_COMMAND"}

// CommunityAgentSign says what shows that c runs community JobSet's
// agent (its image, or a variable only that agent reads), or "" when
// nothing does.
func CommunityAgentSign(c corev1.Container) string {
	if imageName(c.Image) == CommunityAgentImage {
		return "its image is " + CommunityAgentImage
	}
	for _, e := range c.Env {
		if slices.Contains(communityAgentEnv, e.Name) {
			return "it sets " + e.Name + ", which only that agent reads"
		}
	}
	return ""
}

// imageName is an image reference's last path element, without tag or
// digest: "in-place-restart-agent" for
// "registry.k8s.io/jobset/in-place-restart-agent:v0.12.0@sha256:...".
func imageName(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	ref = ref[strings.LastIndex(ref, "/")+1:]
	name, _, _ := strings.Cut(ref, ":")
	return name
}
