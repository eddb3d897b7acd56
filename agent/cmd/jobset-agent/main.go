// Command jobset-agent is the sidecar of in-place restarts; see package
// agent for its protocol and exit codes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/fastjobset/jobset/agent"
	"github.com/fastjobset/jobset/agent/kubeclient"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/version"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run takes no argument but --version: the agent is configured by its
// environment, which injection and the documented manifest set from the
// downward API. An argument it does not know is refused rather than
// ignored, so that nobody believes it configured something.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("jobset-agent", flag.ContinueOnError)
	flags.SetOutput(stderr)
	printVersion := flags.Bool("version", false, "Print the version and exit.")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "Usage: jobset-agent [--version]")
		fmt.Fprintln(stderr, "The agent reads its configuration from its environment: see "+version.Docs("user-guide.md#the-exit-code-contract")+".")
		flags.PrintDefaults()
	}
	switch err := flags.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		return agentspec.ExitConfigError
	case flags.NArg() > 0:
		fmt.Fprintf(stderr, "jobset-agent: unexpected arguments %q: the agent reads its configuration from its environment\n", flags.Args())
		return agentspec.ExitConfigError
	case *printVersion:
		fmt.Fprintln(stdout, version.String("jobset-agent"))
		return 0
	}

	cfg, err := agent.ConfigFromEnv(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "jobset-agent: invalid configuration:\n%v\n", err)
		return agentspec.ExitConfigError
	}
	api, err := kubeclient.InCluster(cfg.UserAgent())
	if err != nil {
		fmt.Fprintf(stderr, "jobset-agent: no in-cluster API server configuration: %v\n", err)
		return agentspec.ExitConfigError
	}
	a := agent.New(cfg, api)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return a.Run(ctx)
}
