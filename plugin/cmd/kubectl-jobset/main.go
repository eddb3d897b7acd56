// Command kubectl-jobset is the `kubectl jobset` plugin: put it on PATH and
// run `kubectl jobset status NAME` or `kubectl jobset timeline NAME`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/fastjobset/jobset/plugin/command"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := command.Run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
