package agent

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// Config is the agent's configuration, read from its environment.
type Config struct {
	Namespace, PodName, JobSetName string
	RestartExitCode                int
	BarrierPort                    int
	BarrierPath                    string
	// FenceAfter: how long without contact with the API server before the
	// agent stops its running worker (fence.go); 0: never.
	FenceAfter time.Duration
	// FenceWitnesses: how many peers on other nodes must vouch that the
	// silence is shared before a running worker rides it out (0: none is
	// asked); FenceDeferLimit: the longest silence that rides out.
	FenceWitnesses  int
	FenceDeferLimit time.Duration
	// NodeName names the agent's node to its peers; StateDir keeps its
	// promises to them for the agents that follow in the Pod (witness.go).
	NodeName, StateDir string
}

// ConfigFromEnv reads and validates the configuration. Every problem is
// reported, each naming its variable and how to fix it.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		Namespace:       getenv(agentspec.EnvNamespace),
		PodName:         getenv(agentspec.EnvPodName),
		JobSetName:      getenv(agentspec.EnvJobSetName),
		RestartExitCode: agentspec.DefaultRestartExitCode,
		BarrierPort:     agentspec.DefaultBarrierPort,
		BarrierPath:     agentspec.DefaultBarrierPath,
		FenceAfter:      DefaultFenceAfter,
		FenceWitnesses:  agentspec.DefaultFenceWitnesses,
		FenceDeferLimit: agentspec.DefaultFenceDeferLimitSeconds * time.Second,
		NodeName:        getenv(agentspec.EnvNodeName),
		StateDir:        getenv(agentspec.EnvStateDir),
	}
	var errs []error
	for _, v := range []struct {
		env, value string
		valid      func(string) []string
	}{
		{agentspec.EnvNamespace, c.Namespace, validation.IsDNS1123Label},
		{agentspec.EnvPodName, c.PodName, validation.IsDNS1123Subdomain},
		{agentspec.EnvJobSetName, c.JobSetName, validation.IsDNS1123Subdomain},
	} {
		switch problems := v.valid(v.value); {
		case v.value == "":
			errs = append(errs, fmt.Errorf("%s is not set: set it from the downward API (fieldRef %s)", v.env, agentspec.FieldPathOf[v.env]))
		case len(problems) > 0:
			errs = append(errs, fmt.Errorf("%s=%q is not a valid name (%s): set it from the downward API (fieldRef %s)",
				v.env, v.value, strings.Join(problems, "; "), agentspec.FieldPathOf[v.env]))
		}
	}
	if raw := getenv(agentspec.EnvRestartExitCode); raw != "" {
		code, err := strconv.Atoi(raw)
		if err != nil || code < 1 || code > 255 {
			errs = append(errs, fmt.Errorf("%s=%q: must be an integer from 1 to 255, the same value as the agent's RestartAllContainers rule", agentspec.EnvRestartExitCode, raw))
		}
		c.RestartExitCode = code
	}
	if raw := getenv(agentspec.EnvBarrierPort); raw != "" {
		port, err := strconv.Atoi(raw)
		if err != nil || port < 1 || port > 65535 {
			errs = append(errs, fmt.Errorf("%s=%q: must be a TCP port from 1 to 65535, the port of the agent's startup probe", agentspec.EnvBarrierPort, raw))
		}
		c.BarrierPort = port
	}
	if raw := getenv(agentspec.EnvBarrierPath); raw != "" {
		if !strings.HasPrefix(raw, "/") || raw == agentspec.HealthPath {
			errs = append(errs, fmt.Errorf("%s=%q: must be an absolute path other than %s, the path of the agent's startup probe", agentspec.EnvBarrierPath, raw, agentspec.HealthPath))
		}
		c.BarrierPath = raw
	}
	if raw := getenv(agentspec.EnvFenceAfterSeconds); raw != "" {
		seconds, err := strconv.Atoi(raw)
		if err != nil || seconds < 0 || seconds > agentspec.MaxFenceAfterSeconds {
			errs = append(errs, fmt.Errorf("%s=%q: must be a whole number of seconds from 0 (never fence) to %d, and no more than the controller's --node-loss-threshold allows (see docs/user-guide.md)",
				agentspec.EnvFenceAfterSeconds, raw, agentspec.MaxFenceAfterSeconds))
		}
		c.FenceAfter = time.Duration(seconds) * time.Second
	}
	if raw := getenv(agentspec.EnvFenceWitnesses); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 || n > agentspec.MaxFenceWitnesses {
			errs = append(errs, fmt.Errorf("%s=%q: must be a whole number from 0 (fence alone, asking no peer) to %d, the peers on other nodes that must vouch for a shared outage",
				agentspec.EnvFenceWitnesses, raw, agentspec.MaxFenceWitnesses))
		}
		c.FenceWitnesses = n
	}
	if raw := getenv(agentspec.EnvFenceDeferLimitSeconds); raw != "" {
		seconds, err := strconv.Atoi(raw)
		if err != nil || seconds < 0 || seconds > agentspec.MaxFenceDeferLimitSeconds {
			errs = append(errs, fmt.Errorf("%s=%q: must be a whole number of seconds from 0 to %d, the longest API server outage a worker rides out",
				agentspec.EnvFenceDeferLimitSeconds, raw, agentspec.MaxFenceDeferLimitSeconds))
		}
		c.FenceDeferLimit = time.Duration(seconds) * time.Second
	}
	if c.StateDir != "" && !strings.HasPrefix(c.StateDir, "/") {
		errs = append(errs, fmt.Errorf("%s=%q: must be an absolute path, a directory of the Pod (an emptyDir) that outlives the agent's container",
			agentspec.EnvStateDir, c.StateDir))
	}
	return c, errors.Join(errs...)
}

// UserAgent names the agent and its Pod in the API server's logs and audit.
func (c Config) UserAgent() string {
	return "jobset-agent/" + c.Namespace + "/" + c.PodName
}
