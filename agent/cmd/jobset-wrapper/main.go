// Command jobset-wrapper runs a worker container's command so that the
// agent can restart it in place; see package wrapper for its protocol and
// exit codes.
package main

import (
	"os"

	"github.com/fastjobset/jobset/agent/wrapper"
)

func main() {
	os.Exit(wrapper.Main(os.Args[1:], os.Getenv, os.Stderr))
}
