package agent

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Exit codes of the agent. Only the restart exit code restarts the Pod in
// place (through the agent's RestartAllContainers rule).
const (
	// DefaultRestartExitCode asks the kubelet to restart every container of
	// the Pod in place. Distinctive on purpose: no shell, signal or runtime
	// uses it. RESTART_POD_IN_PLACE_EXIT_CODE overrides it (1..255).
	DefaultRestartExitCode = 88
	// ExitTerminated: SIGTERM or SIGINT, the Pod is shutting down.
	ExitTerminated = 0
	// ExitConfigError: the environment is missing or wrong; restarting in
	// place would not fix it.
	ExitConfigError = 2
	// ExitFatal: the agent cannot continue (for example its barrier port is
	// taken).
	ExitFatal = 3
)

// Environment variables the agent reads.
const (
	EnvNamespace       = "NAMESPACE"
	EnvPodName         = "POD_NAME"
	EnvJobSetName      = "JOBSET_NAME"
	EnvRestartExitCode = "RESTART_POD_IN_PLACE_EXIT_CODE"
	EnvBarrierPort     = "BARRIER_PORT"
	EnvBarrierPath     = "BARRIER_PATH"
)

// Defaults of the barrier endpoint, where the agent's startup probe looks.
const (
	DefaultBarrierPort = 8080
	DefaultBarrierPath = "/barrier-is-lifted"
	// HealthPath answers 200 while the agent runs, barrier or not.
	HealthPath = "/healthz"
)

// Config is the agent's configuration, read from its environment.
type Config struct {
	Namespace, PodName, JobSetName string
	RestartExitCode                int
	BarrierPort                    int
	BarrierPath                    string
}

// ConfigFromEnv reads and validates the configuration. Every problem is
// reported, each naming its variable and how to fix it.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		Namespace:       getenv(EnvNamespace),
		PodName:         getenv(EnvPodName),
		JobSetName:      getenv(EnvJobSetName),
		RestartExitCode: DefaultRestartExitCode,
		BarrierPort:     DefaultBarrierPort,
		BarrierPath:     DefaultBarrierPath,
	}
	var errs []error
	for _, v := range []struct {
		env, value, from string
		valid            func(string) []string
	}{
		{EnvNamespace, c.Namespace, "fieldRef metadata.namespace", validation.IsDNS1123Label},
		{EnvPodName, c.PodName, "fieldRef metadata.name", validation.IsDNS1123Subdomain},
		{EnvJobSetName, c.JobSetName, "fieldRef metadata.annotations['jobset.sigs.k8s.io/jobset-name']", validation.IsDNS1123Subdomain},
	} {
		switch problems := v.valid(v.value); {
		case v.value == "":
			errs = append(errs, fmt.Errorf("%s is not set: set it from the downward API (%s)", v.env, v.from))
		case len(problems) > 0:
			errs = append(errs, fmt.Errorf("%s=%q is not a valid name (%s): set it from the downward API (%s)",
				v.env, v.value, strings.Join(problems, "; "), v.from))
		}
	}
	if raw := getenv(EnvRestartExitCode); raw != "" {
		code, err := strconv.Atoi(raw)
		if err != nil || code < 1 || code > 255 {
			errs = append(errs, fmt.Errorf("%s=%q: must be an integer from 1 to 255, the same value as the agent's RestartAllContainers rule", EnvRestartExitCode, raw))
		}
		c.RestartExitCode = code
	}
	if raw := getenv(EnvBarrierPort); raw != "" {
		port, err := strconv.Atoi(raw)
		if err != nil || port < 1 || port > 65535 {
			errs = append(errs, fmt.Errorf("%s=%q: must be a TCP port from 1 to 65535, the port of the agent's startup probe", EnvBarrierPort, raw))
		}
		c.BarrierPort = port
	}
	if raw := getenv(EnvBarrierPath); raw != "" {
		if !strings.HasPrefix(raw, "/") || raw == HealthPath {
			errs = append(errs, fmt.Errorf("%s=%q: must be an absolute path other than %s, the path of the agent's startup probe", EnvBarrierPath, raw, HealthPath))
		}
		c.BarrierPath = raw
	}
	return c, errors.Join(errs...)
}

// UserAgent names the agent and its Pod in the API server's logs and audit.
func (c Config) UserAgent() string {
	return "jobset-agent/" + c.Namespace + "/" + c.PodName
}
