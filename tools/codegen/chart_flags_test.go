package codegen_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/fastjobset/jobset/tools/testing/framework"
)

// notValues are the binaries' flags the chart does not take from a value,
// each with the reason.
var notValues = map[string]string{
	"version":                          "prints the version and exits",
	"release-group-members":            "a one-off command before a rollback (docs/operations.md), not a way to run",
	"kubeconfig":                       "the Pods use their ServiceAccount",
	"metrics-bind-address":             "wiring: the metrics Services reach port 8443",
	"health-probe-bind-address":        "wiring: the probes reach port 8081",
	"zap-devel":                        "logging details: extraArgs",
	"zap-encoder":                      "logging details: extraArgs",
	"zap-stacktrace-level":             "logging details: extraArgs",
	"zap-time-encoding":                "logging details: extraArgs",
	"port":                             "wiring: the webhook Service reaches port 9443",
	"cert-dir":                         "wiring: where the Deployment mounts the Secret",
	"namespace":                        "wiring: the Pod's own (POD_NAMESPACE)",
	"service-name":                     "wiring: the chart's webhook Service",
	"secret-name":                      "wiring: the Secret the Deployment mounts",
	"mutating-webhook-configuration":   "wiring: the chart's configuration",
	"validating-webhook-configuration": "wiring: the chart's configuration",
	"agent-image":                      "from agent.image and image",
	"cert-manager":                     "from certManager.enabled",
}

// installOverrides are the settings whose chart default is not the
// binary's, on purpose.
var installOverrides = map[string]bool{"leader-elect": true}

type flagHelp struct{ name, def string }

// binaryFlags runs the binary's -help and reads its flags and defaults.
func binaryFlags(t *testing.T, root, pkg string) []flagHelp {
	t.Helper()
	cmd := exec.Command("go", "run", pkg, "-help")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run %s -help: %v\n%s", pkg, err, out)
	}
	var flags []flagHelp
	defaultRE := regexp.MustCompile(`\(default (.*)\)$`)
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "  -") {
			flags = append(flags, flagHelp{name: strings.Fields(line)[0][1:]})
			continue
		}
		if m := defaultRE.FindStringSubmatch(line); m != nil && len(flags) > 0 {
			flags[len(flags)-1].def = strings.Trim(m[1], `"`)
		}
	}
	if len(flags) < 10 {
		t.Fatalf("go run %s -help lists %d flags:\n%s", pkg, len(flags), out)
	}
	return flags
}

// TestEveryFlagIsASettingOrWiring: every flag of the controller and the
// webhook is either a value of the chart (whose default is the binary's
// own, where install.yaml does not deliberately differ) or on the list of
// flags it does not offer, with the reason; and the chart passes no flag
// the binary does not have.
func TestEveryFlagIsASettingOrWiring(t *testing.T) {
	root, err := framework.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	valuesText, err := os.ReadFile(filepath.Join(root, "charts/jobset/values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(valuesText, &values); err != nil {
		t.Fatal(err)
	}
	valueAt := func(path string) (any, bool) {
		var v any = values
		for _, p := range strings.Split(path, ".") {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[p]; !ok {
				return nil, false
			}
		}
		return v, true
	}
	settingRE := regexp.MustCompile(`printf "--([a-z0-9-]+)=%[a-z]" \(?(?:\.Values\.([A-Za-z0-9.]+)|\.)`)
	withRE := regexp.MustCompile(`\{\{- with \.Values\.([A-Za-z0-9.]+) \}\}\n\s*- \{\{ printf "--([a-z0-9-]+)=`)
	literalRE := regexp.MustCompile(`- "--([a-z0-9-]+)[="]`)

	for _, b := range []struct{ pkg, template string }{
		{"./controllers/cmd/jobset-controller", "controller.yaml"},
		{"./webhooks/cmd/jobset-webhook", "webhook.yaml"},
	} {
		text, err := os.ReadFile(filepath.Join(root, "charts/jobset/templates", b.template))
		if err != nil {
			t.Fatal(err)
		}
		paths := map[string]string{} // flag -> values path
		for _, m := range settingRE.FindAllStringSubmatch(string(text), -1) {
			if m[2] != "" {
				paths[m[1]] = m[2]
			}
		}
		for _, m := range withRE.FindAllStringSubmatch(string(text), -1) {
			paths[m[2]] = m[1]
		}
		passed := map[string]bool{}
		for f := range paths {
			passed[f] = true
		}
		for _, m := range literalRE.FindAllStringSubmatch(string(text), -1) {
			passed[m[1]] = true
		}

		known := map[string]bool{}
		for _, f := range binaryFlags(t, root, b.pkg) {
			known[f.name] = true
			path, isValue := paths[f.name]
			if _, wired := notValues[f.name]; !isValue && !wired {
				t.Errorf("%s --%s is neither a value of the chart nor on notValues: add it to the settings of images/cmd/render-manifests/settings.go (or to notValues, with the reason), then run tools/update-generated.sh", b.pkg, f.name)
				continue
			}
			if !isValue || f.def == "" || installOverrides[f.name] {
				continue
			}
			v, ok := valueAt(path)
			if !ok {
				t.Errorf("--%s: the chart reads %s, which values.yaml does not hold", f.name, path)
				continue
			}
			if s := stringOf(v); s != "" && !sameValue(s, f.def) {
				t.Errorf("--%s: the chart's default %s=%s is not the binary's %s: change the setting's default in images/cmd/render-manifests/settings.go, or list it in installOverrides with the reason", f.name, path, s, f.def)
			}
		}
		for f := range passed {
			if !known[f] {
				t.Errorf("the chart passes %s --%s, which it does not have", b.pkg, f)
			}
		}
	}
}

func stringOf(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// sameValue compares a default as the chart writes it and as -help does:
// 5m and 5m0s are the same duration.
func sameValue(a, b string) bool {
	if a == b {
		return true
	}
	da, errA := time.ParseDuration(a)
	db, errB := time.ParseDuration(b)
	return errA == nil && errB == nil && da == db
}
