// Command jobset-agent is the sidecar of in-place restarts; see package
// agent for its protocol and exit codes.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/fastjobset/jobset/agent"
	"github.com/fastjobset/jobset/agent/kubeclient"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

func main() {
	os.Exit(run())
}

func run() int {
	cfg, err := agent.ConfigFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "jobset-agent: invalid configuration:\n%v\n", err)
		return agentspec.ExitConfigError
	}
	api, err := kubeclient.InCluster(cfg.UserAgent())
	if err != nil {
		fmt.Fprintf(os.Stderr, "jobset-agent: no in-cluster API server configuration: %v\n", err)
		return agentspec.ExitConfigError
	}
	a := agent.New(cfg, api)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return a.Run(ctx)
}
