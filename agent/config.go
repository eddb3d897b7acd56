package agent

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/version"
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
	// FenceNodeLease: the agent fences on its node's Lease too
	// (node_lease.go).
	FenceNodeLease bool
	// WrapperControl is the worker wrapper's control socket; empty: the
	// worker runs without a wrapper, and only the kubelet stops it.
	WrapperControl string
	// InPlaceGroup names the agent's in-place group, whose epochs it
	// follows (status.inPlaceGroups); empty: the default group's.
	InPlaceGroup string
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
		WrapperControl:  getenv(agentspec.EnvWrapperControl),
		InPlaceGroup:    getenv(agentspec.EnvInPlaceGroup),
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
	errs = append(errs, readInt(getenv, agentspec.EnvRestartExitCode, 1, 255,
		"an integer from 1 to 255, the same value as the agent's RestartAllContainers rule", &c.RestartExitCode))
	errs = append(errs, readInt(getenv, agentspec.EnvBarrierPort, 1, 65535,
		"a TCP port from 1 to 65535, the port of the agent's startup probe", &c.BarrierPort))
	if raw := getenv(agentspec.EnvBarrierPath); raw != "" {
		if !strings.HasPrefix(raw, "/") || raw == agentspec.HealthPath {
			errs = append(errs, fmt.Errorf("%s=%q: must be an absolute path other than %s, the path of the agent's startup probe", agentspec.EnvBarrierPath, raw, agentspec.HealthPath))
		}
		c.BarrierPath = raw
	}
	fenceAfter, deferLimit := int(c.FenceAfter/time.Second), int(c.FenceDeferLimit/time.Second)
	errs = append(errs, readInt(getenv, agentspec.EnvFenceAfterSeconds, 0, agentspec.MaxFenceAfterSeconds,
		fmt.Sprintf("a whole number of seconds from 0 (never fence) to %d, and no more than the controller's --node-loss-threshold allows (see %s)", agentspec.MaxFenceAfterSeconds, version.Docs("user-guide.md#when-a-node-is-lost")),
		&fenceAfter))
	errs = append(errs, readInt(getenv, agentspec.EnvFenceWitnesses, 0, agentspec.MaxFenceWitnesses,
		fmt.Sprintf("a whole number from 0 (fence alone, asking no peer) to %d, the peers on other nodes that must vouch for a shared outage", agentspec.MaxFenceWitnesses),
		&c.FenceWitnesses))
	errs = append(errs, readInt(getenv, agentspec.EnvFenceDeferLimitSeconds, 0, agentspec.MaxFenceDeferLimitSeconds,
		fmt.Sprintf("a whole number of seconds from 0 to %d, the longest API server outage a worker rides out", agentspec.MaxFenceDeferLimitSeconds),
		&deferLimit))
	c.FenceAfter, c.FenceDeferLimit = time.Duration(fenceAfter)*time.Second, time.Duration(deferLimit)*time.Second
	switch raw := getenv(agentspec.EnvFenceNodeLease); raw {
	case "", "false":
	case "true":
		c.FenceNodeLease = true
		if c.NodeName == "" {
			errs = append(errs, fmt.Errorf("%s=true needs %s: set it from the downward API (fieldRef %s)",
				agentspec.EnvFenceNodeLease, agentspec.EnvNodeName, agentspec.FieldPathOf[agentspec.EnvNodeName]))
		}
	default:
		errs = append(errs, fmt.Errorf("%s=%q: must be true (fence on the node's Lease too) or false", agentspec.EnvFenceNodeLease, raw))
	}
	if c.StateDir != "" && !strings.HasPrefix(c.StateDir, "/") {
		errs = append(errs, fmt.Errorf("%s=%q: must be an absolute path, a directory of the Pod (an emptyDir) that outlives the agent's container",
			agentspec.EnvStateDir, c.StateDir))
	}
	if c.WrapperControl != "" && !strings.HasPrefix(c.WrapperControl, "/") {
		errs = append(errs, fmt.Errorf("%s=%q: must be an absolute path, the worker wrapper's control socket in the volume the agent shares with the worker container",
			agentspec.EnvWrapperControl, c.WrapperControl))
	}
	if problems := validation.IsDNS1123Label(c.InPlaceGroup); c.InPlaceGroup != "" && len(problems) > 0 {
		errs = append(errs, fmt.Errorf("%s=%q is not a valid group name (%s): leave it to the controller, which sets it from the replicatedJob's annotation %s",
			agentspec.EnvInPlaceGroup, c.InPlaceGroup, strings.Join(problems, "; "), agentspec.InPlaceGroupKey))
	}
	return c, errors.Join(errs...)
}

// readInt reads the integer variable name into v, when it is set, and
// reports a value that is not one from lo to hi, saying what it must be.
func readInt(getenv func(string) string, name string, lo, hi int, must string, v *int) error {
	raw := getenv(name)
	if raw == "" {
		return nil
	}
	n, err := strconv.Atoi(raw)
	*v = n
	if err != nil || n < lo || n > hi {
		return fmt.Errorf("%s=%q: must be %s", name, raw, must)
	}
	return nil
}

// UserAgent names the agent and its Pod in the API server's logs and audit.
func (c Config) UserAgent() string {
	return "jobset-agent/" + c.Namespace + "/" + c.PodName
}
