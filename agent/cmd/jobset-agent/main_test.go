package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/version"
)

// The agent answers --version without any configuration, refuses arguments
// it does not know, and otherwise goes on to read its environment.
func TestRun(t *testing.T) {
	noEnv := func(string) string { return "" }
	for name, tc := range map[string]struct {
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		"--version":       {args: []string{"--version"}, wantStdout: version.String("jobset-agent") + "\n"},
		"-version":        {args: []string{"-version"}, wantStdout: version.String("jobset-agent") + "\n"},
		"--help":          {args: []string{"--help"}, wantStderr: "reads its configuration from its environment"},
		"an unknown flag": {args: []string{"--namespace=x"}, wantCode: agentspec.ExitConfigError, wantStderr: "flag provided but not defined: -namespace"},
		"a positional":    {args: []string{"serve"}, wantCode: agentspec.ExitConfigError, wantStderr: `unexpected arguments ["serve"]`},
		"no argument":     {wantCode: agentspec.ExitConfigError, wantStderr: agentspec.EnvNamespace + " is not set"},
		"--version=false": {args: []string{"--version=false"}, wantCode: agentspec.ExitConfigError, wantStderr: "invalid configuration"},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, noEnv, &stdout, &stderr); code != tc.wantCode {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.wantCode, stderr.String())
			}
			if stdout.String() != tc.wantStdout {
				t.Errorf("stdout %q, want %q", stdout.String(), tc.wantStdout)
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("stderr %q, want it to contain %q", stderr.String(), tc.wantStderr)
			}
		})
	}
}
