// Command push publishes the controller, webhook and agent images built by
// Bazel to a registry:
//
//	bazel run --config=bazel4 //images:push -- --registry registry.example.com/team
//
// Each image <name> goes to <registry>/<name>:<tag>, the tag being the
// release's (v + api/version/VERSION, as the images are built) unless
// --tag says otherwise; the command prints the
// reference and digest of each. Credentials come from the docker config
// (`docker login`, credential helpers), as for any registry client.
// Loopback and private-network registries are spoken to over plain HTTP.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/fastjobset/jobset/api/version"
	"github.com/fastjobset/jobset/images/internal/publish"
)

// imageList collects repeated -image flags.
type imageList []string

func (l *imageList) String() string     { return strings.Join(*l, ",") }
func (l *imageList) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var o publish.Options
	var images imageList
	flag.StringVar(&o.Registry, "registry", "", "Registry and repository prefix to push to, e.g. registry.example.com/team (required).")
	flag.StringVar(&o.Tag, "tag", version.Tag, "Tag of every pushed image (default: the release's, from api/version/VERSION).")
	flag.BoolVar(&o.Insecure, "insecure", false, "Speak plain HTTP to the registry (automatic for loopback and private addresses).")
	flag.Var(&images, "image", "An image tar to push (repeatable; the Bazel target passes the three images).")
	flag.Parse()
	o.Images = images

	pushed, err := publish.Push(context.Background(), o)
	for _, p := range pushed {
		fmt.Printf("pushed %s@%s\n", p.Reference, p.Digest)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "push:", err)
		os.Exit(1)
	}
}
