//go:build peersbuilt

package peers

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestBuiltManifests renders the manifests of the peers built on this
// machine, listed in JOBSET_PEERS as tools/e2e.sh lists them, installs and
// removes each on envtest's apiserver (where no webhook of theirs serves:
// a ConfigMap stands in for their probe), and switches community JobSet
// in for a stand-in of ours and back. The builds take minutes and need the
// module proxy, so it runs only when asked for, with its build tag:
//
//	JOBSET_PEERS=$(tools/peers/kueue.sh build):$(tools/peers/trainer.sh build):$(tools/peers/jobset.sh build) \
//	  go test -tags peersbuilt -run TestBuiltManifests ./tools/testing/peers
func TestBuiltManifests(t *testing.T) {
	var dirs []string
	for _, p := range built {
		dir, err := Find(p)
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	if strings.Join(dirs, "") == "" {
		t.Fatalf("%s lists no peer's build (tools/peers/*.sh print theirs)", Env)
	}
	cl, out := apiserver(t)
	playControllers(t, cl)
	ctx, cancel := context.WithTimeout(context.Background(), 4*timeout)
	defer cancel()
	for i, p := range built {
		if dirs[i] == "" {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			m, err := Load(p, dirs[i])
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range only(m.Objects, "Deployment") {
				containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
				for _, c := range containers {
					c := c.(map[string]any)
					t.Logf("Deployment %s, container %s: image %s, imagePullPolicy %s", ref(d), c["name"], c["image"], c["imagePullPolicy"])
				}
			}
			kinds := map[string]int{}
			for _, u := range m.Objects {
				kinds[u.GetKind()]++
			}
			t.Logf("%d objects: %v", len(m.Objects), kinds)
			if cm, _, err := m.Peer.config.in(m.Objects, m.Peer.Namespace); err == nil {
				text, _, _ := unstructured.NestedString(cm.Object, "data", m.Peer.config.Key)
				t.Logf("its Configuration:\n%s", text)
			}

			served := *p
			served.probe = configMapProbe
			m.Peer = &served
			if p != CommunityJobSet {
				if err := m.Install(ctx, cl); err != nil {
					t.Fatalf("Install: %v\n%s", err, out)
				}
				if err := m.Uninstall(ctx, cl); err != nil {
					t.Fatalf("Uninstall: %v", err)
				}
				return
			}
			ours := &Manifests{Peer: &Peer{Name: "ours", Namespace: jobSetNamespace, probe: configMapProbe, probeAttempts: 1},
				Objects: []*unstructured.Unstructured{ourCRD(t)}}
			if err := SwitchJobSet(ctx, cl, ours, m); err != nil {
				t.Fatalf("to community JobSet: %v\n%s", err, out)
			}
			if err := SwitchJobSet(ctx, cl, m, ours); err != nil {
				t.Fatalf("back to ours: %v\n%s", err, out)
			}
			for _, u := range without(m.Objects, "CustomResourceDefinition", "Namespace") {
				if _, err := get(ctx, cl.Client, u); client.IgnoreNotFound(err) != nil || err == nil {
					t.Errorf("community JobSet's %s %s is left (%v)", u.GetKind(), ref(u), err)
				}
			}
		})
	}
}

// configMapProbe is a probe that any apiserver admits.
func configMapProbe() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": "probe", "namespace": "default"},
	}}
}
