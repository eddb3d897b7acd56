package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
)

func TestConfigFromEnv(t *testing.T) {
	valid := map[string]string{agentspec.EnvNamespace: "team-a", agentspec.EnvPodName: "trainer-workers-0-0-x7k2p", agentspec.EnvJobSetName: "trainer"}
	with := func(k, v string) map[string]string {
		env := map[string]string{}
		for key, value := range valid {
			env[key] = value
		}
		env[k] = v
		return env
	}
	cases := map[string]struct {
		env       map[string]string
		wantErrs  []string
		wantCode  int
		wantPort  int
		wantProbe string
		wantFence time.Duration
	}{
		"defaults":                               {env: valid, wantCode: agentspec.DefaultRestartExitCode, wantPort: agentspec.DefaultBarrierPort, wantProbe: agentspec.DefaultBarrierPath, wantFence: DefaultFenceAfter},
		"overrides":                              {env: with(agentspec.EnvRestartExitCode, "42"), wantCode: 42, wantPort: agentspec.DefaultBarrierPort, wantProbe: agentspec.DefaultBarrierPath, wantFence: DefaultFenceAfter},
		"no fence":                               {env: with(agentspec.EnvFenceAfterSeconds, "0"), wantCode: agentspec.DefaultRestartExitCode, wantPort: agentspec.DefaultBarrierPort, wantProbe: agentspec.DefaultBarrierPath},
		"missing everything":                     {env: map[string]string{}, wantErrs: []string{"NAMESPACE is not set", "POD_NAME is not set", "JOBSET_NAME is not set", "downward API"}},
		"a name that is not a name":              {env: with(agentspec.EnvJobSetName, "Trainer_1"), wantErrs: []string{`JOBSET_NAME="Trainer_1" is not a valid name`}},
		"exit code 0 is not a code":              {env: with(agentspec.EnvRestartExitCode, "0"), wantErrs: []string{"RESTART_POD_IN_PLACE_EXIT_CODE=\"0\": must be an integer from 1 to 255"}},
		"exit code 256 is not a code":            {env: with(agentspec.EnvRestartExitCode, "256"), wantErrs: []string{"from 1 to 255"}},
		"a port out of range":                    {env: with(agentspec.EnvBarrierPort, "70000"), wantErrs: []string{"BARRIER_PORT=\"70000\""}},
		"a relative probe path":                  {env: with(agentspec.EnvBarrierPath, "ready"), wantErrs: []string{"BARRIER_PATH=\"ready\": must be an absolute path"}},
		"a fence time that is not whole seconds": {env: with(agentspec.EnvFenceAfterSeconds, "1.5"), wantErrs: []string{"FENCE_AFTER_SECONDS=\"1.5\": must be a whole number of seconds from 0 (never fence)"}},
		"a negative fence time":                  {env: with(agentspec.EnvFenceAfterSeconds, "-1"), wantErrs: []string{"FENCE_AFTER_SECONDS=\"-1\""}},
		"a group name that is not a name":        {env: with(agentspec.EnvInPlaceGroup, "Trunk_A"), wantErrs: []string{`IN_PLACE_GROUP="Trunk_A" is not a valid group name`, "alpha.jobset.sigs.k8s.io/in-place-group"}},
		"fencing on the node's Lease without the node's name": {env: with(agentspec.EnvFenceNodeLease, "true"), wantErrs: []string{"FENCE_NODE_LEASE=true needs NODE_NAME", "spec.nodeName"}},
		"fencing on the node's Lease, not a boolean":          {env: with(agentspec.EnvFenceNodeLease, "yes"), wantErrs: []string{`FENCE_NODE_LEASE="yes": must be true`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := ConfigFromEnv(func(k string) string { return tc.env[k] })
			if len(tc.wantErrs) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if c.RestartExitCode != tc.wantCode || c.BarrierPort != tc.wantPort || c.BarrierPath != tc.wantProbe || c.FenceAfter != tc.wantFence || c.FenceNodeLease {
					t.Errorf("got %+v", c)
				}
				return
			}
			if err == nil {
				t.Fatal("expected an error")
			}
			for _, want := range tc.wantErrs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// The agent reads what injection writes: every variable of the sidecar
// the webhook injects, with the downward API's values, is a valid
// configuration that carries the webhook's options.
func TestConfigOfTheInjectedAgent(t *testing.T) {
	downward := map[string]string{
		agentspec.FieldPathOf[agentspec.EnvNamespace]: "team-a", agentspec.FieldPathOf[agentspec.EnvPodName]: "trainer-workers-0-0-x7k2p",
		agentspec.FieldPathOf[agentspec.EnvJobSetName]: "trainer", agentspec.FieldPathOf[agentspec.EnvNodeName]: "node-1",
	}
	for name, o := range map[string]sidecar.Options{
		"defaults":             {Image: "agent"},
		"the Lease fence":      {Image: "agent", FenceNodeLease: true},
		"another restart code": {Image: "agent", RestartExitCode: 90},
	} {
		t.Run(name, func(t *testing.T) {
			env := map[string]string{}
			for _, v := range sidecar.Container(o).Env {
				switch {
				case v.ValueFrom == nil:
					env[v.Name] = v.Value
				case v.ValueFrom.FieldRef != nil:
					value, known := downward[v.ValueFrom.FieldRef.FieldPath]
					if !known {
						t.Fatalf("%s: the downward API field %s, which the test does not resolve", v.Name, v.ValueFrom.FieldRef.FieldPath)
					}
					env[v.Name] = value
				default:
					t.Fatalf("%s: a source the test does not resolve", v.Name)
				}
			}
			cfg, err := ConfigFromEnv(func(k string) string { return env[k] })
			if err != nil {
				t.Fatalf("the injected agent's environment %v: %v", env, err)
			}
			if cfg.FenceNodeLease != o.FenceNodeLease {
				t.Errorf("FenceNodeLease = %t, want the webhook's %t", cfg.FenceNodeLease, o.FenceNodeLease)
			}
			wantCode := int(o.RestartExitCode)
			if wantCode == 0 {
				wantCode = agentspec.DefaultRestartExitCode
			}
			if cfg.RestartExitCode != wantCode {
				t.Errorf("RestartExitCode = %d, want the webhook's %d", cfg.RestartExitCode, wantCode)
			}
		})
	}
}
