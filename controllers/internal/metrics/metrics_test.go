package metrics

import (
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/fastjobset/jobset/api/version"
)

// The controller's metrics endpoint serves controller-runtime's registry:
// what is checked here is what a scrape reads.

func TestBuildInfo(t *testing.T) {
	want := `
# HELP jobset_build_info Always 1; its labels are the controller's version and the Go toolchain that built it.
# TYPE jobset_build_info gauge
jobset_build_info{go_version="` + runtime.Version() + `",version="` + version.Version + `"} 1
`
	if err := testutil.GatherAndCompare(crmetrics.Registry, strings.NewReader(want), "jobset_build_info"); err != nil {
		t.Error(err)
	}
}
