package agent

import (
	"encoding/json"
	"testing"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

func TestProcessTier(t *testing.T) {
	for _, c := range []struct {
		name        string
		wrapped     bool
		annotations map[string]string
		want        bool
	}{
		{"no wrapper: the Pod tier", false, nil, false},
		{"a wrapper: the process tier", true, nil, true},
		{"the JobSet asks for the Pod tier", true, map[string]string{agentspec.RestartTierAnnotation: agentspec.RestartTierPod}, false},
		{"another value: the process tier", true, map[string]string{agentspec.RestartTierAnnotation: "process"}, true},
		{"no wrapper, whatever the JobSet asks", false, map[string]string{agentspec.RestartTierAnnotation: "process"}, false},
	} {
		if got := ProcessTier(c.wrapped, c.annotations); got != c.want {
			t.Errorf("%s: ProcessTier(%v, %v) = %v, want %v", c.name, c.wrapped, c.annotations, got, c.want)
		}
	}
}

// specOf reads a JobSet spec as the agent does from its watch.
func specOf(t *testing.T, raw string) jobSetSpec {
	t.Helper()
	var js jobSet
	if err := json.Unmarshal([]byte(`{"spec":`+raw+`}`), &js); err != nil {
		t.Fatal(err)
	}
	return js.Spec
}

// agentInit is an injected agent: a sidecar with its RestartAllContainers
// rule.
const agentInit = `"initContainers":[{"name":"jobset-agent","restartPolicy":"Always","restartPolicyRules":[{"action":"RestartAllContainers","exitCodes":{"operator":"NotIn","values":[]}}]}]`

func rjJSON(name, containers string) string {
	return `{"name":"` + name + `","template":{"spec":{"template":{"spec":{` + agentInit + `,"containers":[` + containers + `]}}}}}`
}

const (
	// wrappedWorker restarts in place on every code but 0 and the FailJob
	// code 42.
	wrappedWorker = `{"name":"w","command":["` + agentspec.WrapperBinary + `","--","train"],"restartPolicyRules":[{"action":"RestartAllContainers","exitCodes":{"operator":"NotIn","values":[0,42]}}]}`
	// wrappedIn restarts in place on 137 only.
	wrappedIn   = `{"name":"w","command":["` + agentspec.WrapperBinary + `","--","train"],"restartPolicyRules":[{"action":"RestartAllContainers","exitCodes":{"operator":"In","values":[137]}}]}`
	plainWorker = `{"name":"w","command":["train"],"restartPolicyRules":[{"action":"RestartAllContainers","exitCodes":{"operator":"NotIn","values":[0]}}]}`
	noRules     = `{"name":"w","command":["` + agentspec.WrapperBinary + `","--","train"]}`
)

func TestExitRestartsInPlace(t *testing.T) {
	one := `{"replicatedJobs":[` + rjJSON("workers", wrappedWorker) + `]}`
	for _, c := range []struct {
		name string
		spec string
		code int
		want bool
	}{
		{"a crash restarts in place", one, 1, true},
		{"killed (137) restarts in place", one, 137, true},
		{"0 leaves the container: the Pod succeeds", one, 0, false},
		{"a FailJob code leaves the container: the Job fails", one, 42, false},
		{"an In rule: its code restarts in place", `{"replicatedJobs":[` + rjJSON("workers", wrappedIn) + `]}`, 137, true},
		{"an In rule: another code leaves the container", `{"replicatedJobs":[` + rjJSON("workers", wrappedIn) + `]}`, 1, false},
		{"no rule: the code leaves the container", `{"replicatedJobs":[` + rjJSON("workers", noRules) + `]}`, 1, false},
		{"replicatedJobs that disagree: leave the container", `{"replicatedJobs":[` + rjJSON("a", wrappedWorker) + `,` + rjJSON("b", wrappedIn) + `]}`, 1, false},
		{"replicatedJobs that agree", `{"replicatedJobs":[` + rjJSON("a", wrappedWorker) + `,` + rjJSON("b", wrappedIn) + `]}`, 137, true},
		{"an unwrapped replicatedJob does not count", `{"replicatedJobs":[` + rjJSON("a", wrappedWorker) + `,` + rjJSON("b", plainWorker) + `]}`, 42, false},
		{"an unwrapped replicatedJob does not count (a crash)", `{"replicatedJobs":[` + rjJSON("a", wrappedWorker) + `,` + rjJSON("b", plainWorker) + `]}`, 1, true},
		{"no wrapped worker at all: nothing restarts in place", `{"replicatedJobs":[` + rjJSON("a", plainWorker) + `]}`, 1, false},
		{"a replicatedJob without the agent does not count", `{"replicatedJobs":[{"name":"x","template":{"spec":{"template":{"spec":{"containers":[` + wrappedIn + `]}}}}},` + rjJSON("a", wrappedWorker) + `]}`, 1, true},
	} {
		if got := ExitRestartsInPlace(specOf(t, c.spec), c.code); got != c.want {
			t.Errorf("%s: ExitRestartsInPlace(code %d) = %v, want %v", c.name, c.code, got, c.want)
		}
	}
}

func TestRestartsAllOnFirstMatch(t *testing.T) {
	rules := []restartRule{
		{Action: "Restart", ExitCodes: &struct {
			Operator string  `json:"operator"`
			Values   []int32 `json:"values"`
		}{"In", []int32{3}}},
		{Action: "RestartAllContainers"},
	}
	if restartsAllOn(rules, 3) {
		t.Error("code 3: the first rule (Restart, this container alone) decides, not the second")
	}
	if !restartsAllOn(rules, 4) {
		t.Error("code 4: the second rule, which matches every code, restarts every container")
	}
}
