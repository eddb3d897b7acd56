package images_test

import (
	"bytes"
	"os"
	"testing"
)

// The agent runs in every worker Pod: its dependency set is its own. A Go
// binary keeps the import path of every linked function (stack traces need
// them, stripped or not), so the paths of what it must not link are absent
// from its bytes.
var notInTheAgent = []string{
	"github.com/fastjobset/jobset/controllers/",
	"github.com/fastjobset/jobset/webhooks/",
	"github.com/fastjobset/jobset/api/jobset/v1alpha2", // links k8s.io/api's Pod and Job types
	"sigs.k8s.io/controller-runtime/",
	"k8s.io/client-go/",
	"k8s.io/api/",
	"k8s.io/apimachinery/pkg/runtime", // the serializers
}

func TestAgentLinksNoneOfTheControllersDependencies(t *testing.T) {
	if *builtFrom == "" {
		t.Skip("checks the binary Bazel builds: run `bazel test //images:images_test`")
	}
	var agent string
	for _, image := range builtImages(t) {
		if image.files[0].inImage == "/jobset-agent" {
			agent = image.files[0].binary
		}
	}
	if agent == "" {
		t.Fatalf("-images names no binary for /jobset-agent: %s", *builtFrom)
	}
	binary, err := os.ReadFile(agent)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(binary, []byte("github.com/fastjobset/jobset/agent.")) {
		t.Fatalf("%s holds no function of package agent: not the agent, or its names are gone, and this test would prove nothing", agent)
	}
	for _, path := range notInTheAgent {
		if bytes.Contains(binary, []byte(path)) {
			t.Errorf("the agent binary links %s: the agent must depend on api/jobset/agentspec, agent/... and small leaf packages only (see agent/kubeclient)", path)
		}
	}
}
