// Command release writes a release folder from the images Bazel built:
//
//	bazel run --config=bazel4 //images:release -- [-registry R] [-tag T] <out-dir>
//
// <out-dir> (relative to where bazel was run) then holds
//
//	install.yaml                  everything a cluster needs, images pinned by digest
//	agent/                        the agents' RBAC, admission policy and flow control, per namespace
//	monitoring/                   metrics reader role, ServiceMonitor, PrometheusRule, Grafana dashboard
//	jobset-<version>.tgz          the Helm chart, its images pinned by digest
//	chart/                        the same chart as an OCI artifact (an OCI image layout)
//	sbom/<image>.spdx.json        one SPDX 2.3 SBOM per image: its binaries and their Go modules
//	plugin/kubectl-jobset-<os>-<arch>
//	                              the kubectl plugin, for linux and darwin, amd64 and arm64
//	SHA256SUMS                    the SHA-256 of every other file, for `sha256sum -c`
//
// The images are referenced as <registry>/<name>:<tag>@<digest of the
// image index>; push them there with //images:push. See images/README.md
// ("Cutting a release").
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fastjobset/jobset/api/version"
)

// imageList collects repeated -image and -plugin flags.
type imageList []string

func (l *imageList) String() string     { return strings.Join(*l, ",") }
func (l *imageList) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var o options
	var images, plugins imageList
	flag.StringVar(&o.renderManifests, "render-manifests", "", "The render-manifests tool (the Bazel target passes it).")
	flag.StringVar(&o.crd, "crd", "", "The generated CRD.")
	flag.StringVar(&o.controllerRBAC, "controller-rbac", "", "The controller's generated RBAC.")
	flag.StringVar(&o.webhookRBAC, "webhook-rbac", "", "The webhook's generated RBAC.")
	flag.StringVar(&o.webhookConfigs, "webhook-configs", "", "The generated webhook configurations.")
	flag.StringVar(&o.registry, "registry", "ghcr.io/fastjobset", "Registry and repository prefix the images are pushed to.")
	flag.StringVar(&o.tag, "tag", version.Tag, "Tag of the images (default: the release's, from api/version/VERSION).")
	flag.Var(&images, "image", "An image tar (repeatable; the Bazel target passes the three images).")
	flag.Var(&plugins, "plugin", "A kubectl-jobset binary (repeatable; the Bazel target passes one for each of linux and darwin, amd64 and arm64, and the release reads each one's platform from its header).")
	flag.Parse()
	o.images, o.plugins = images, plugins
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: bazel run --config=bazel4 //images:release -- [-registry R] [-tag T] <out-dir>")
		os.Exit(2)
	}
	o.out = flag.Arg(0)
	// bazel run starts the command in its runfiles: a relative folder is
	// meant from where bazel was run.
	if wd := os.Getenv("BUILD_WORKING_DIRECTORY"); wd != "" && !filepath.IsAbs(o.out) {
		o.out = filepath.Join(wd, o.out)
	}
	if err := write(o); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
	fmt.Printf("release %s written to %s\n", version.Tag, o.out)
}
