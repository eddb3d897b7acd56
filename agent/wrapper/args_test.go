package wrapper

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseArgs(t *testing.T) {
	env := map[string]string{"JOBSET_WRAPPER_CONTROL": "/jobset/wrapper.sock"}
	for name, tc := range map[string]struct {
		args      []string
		env       map[string]string
		want      Config
		wantError string
	}{
		"defaults": {
			args: []string{"--", "python", "-m", "train"},
			want: Config{Command: []string{"python", "-m", "train"}, AgentWait: DefaultAgentWait},
		},
		"control from the environment": {
			args: []string{"python"}, env: env,
			want: Config{Command: []string{"python"}, Control: "/jobset/wrapper.sock", AgentWait: DefaultAgentWait},
		},
		"flags win over the environment": {
			args: []string{"-control=/x.sock", "-agent-wait=0", "-cgroup=/c/cgroup.procs", "--", "python", "-u"}, env: env,
			want: Config{Command: []string{"python", "-u"}, Control: "/x.sock", CgroupProcs: "/c/cgroup.procs"},
		},
		"cgroup off": {
			args: []string{"-cgroup=off", "python"},
			want: Config{Command: []string{"python"}, AgentWait: DefaultAgentWait},
		},
		"a PID namespace's proc filesystem": {
			args: []string{"-pid-namespace=/host/proc", "python"},
			want: Config{Command: []string{"python"}, AgentWait: DefaultAgentWait, PIDNamespace: "/host/proc"},
		},
		"PID namespace off": {
			args: []string{"-pid-namespace=off", "python"},
			want: Config{Command: []string{"python"}, AgentWait: DefaultAgentWait},
		},
		"the command's flags are its own": {
			args: []string{"-agent-wait=1s", "--", "-dash"},
			want: Config{Command: []string{"-dash"}, AgentWait: time.Second},
		},
		"install": {
			args: []string{"-install=/var/run/jobset-wrapper/jobset-wrapper"}, env: env,
			want: Config{Install: "/var/run/jobset-wrapper/jobset-wrapper"},
		},
		"install runs nothing": {args: []string{"-install=/w/jobset-wrapper", "--", "python"}, wantError: "runs nothing"},
		"no command":           {args: []string{"-control=/x.sock"}, wantError: "no command"},
		"negative agent wait":  {args: []string{"-agent-wait=-1s", "python"}, wantError: "negative"},
		"unknown flag":         {args: []string{"-contrl=/x.sock", "python"}, wantError: "not defined"},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			got, err := ParseArgs(tc.args, func(k string) string { return tc.env[k] }, &out)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("error = %v, want one saying %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// auto: this test does not run as PID 1, so there is neither a
			// cgroup nor a PID namespace to use; the detections have their
			// own tests.
			got.Log = nil
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}
