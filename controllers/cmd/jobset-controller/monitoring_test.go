package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/fastjobset/jobset/images/manifest"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// exported says whether the controller serves a metric of this name: its
// metrics endpoint serves controller-runtime's registry, where this test
// binary, built from the controller's own packages, holds every metric the
// controller registers. A probe of the same name is refused exactly when
// one is registered (a vector with no series yet, too).
func exported(name string) bool {
	probe := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "probe"})
	if err := crmetrics.Registry.Register(probe); err != nil {
		return true
	}
	crmetrics.Registry.Unregister(probe)
	return false
}

// exportedSeries also takes a histogram's series: name_bucket, _sum,
// _count of a registered name.
func exportedSeries(name string) bool {
	if exported(name) {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && exported(base) {
			return true
		}
	}
	return false
}

// metricNames are the metrics a PromQL expression reads.
func metricNames(expr parser.Expr) []string {
	var names []string
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		if vs.Name != "" {
			names = append(names, vs.Name)
			return nil
		}
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
				names = append(names, m.Value)
			}
		}
		return nil
	})
	return names
}

// monitoringQueries reads every query the shipped alerts and dashboard
// run, by where it is.
func monitoringQueries(t *testing.T) map[string]string {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	queries := map[string]string{}
	rules, err := manifest.Read(filepath.Join(root, "monitoring", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range rules {
		var spec struct {
			Groups []struct {
				Name  string
				Rules []struct{ Alert, Record, Expr string }
			}
		}
		data, err := json.Marshal(rule.Object["spec"])
		if err == nil {
			err = json.Unmarshal(data, &spec)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range spec.Groups {
			for _, r := range g.Rules {
				queries["prometheusrule.yaml "+g.Name+"/"+r.Alert+r.Record] = r.Expr
			}
		}
	}

	data, err := os.ReadFile(filepath.Join(root, "monitoring", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dashboard struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr, RefID string }
		}
		Templating struct {
			List []struct {
				Name, Definition string
			}
		}
	}
	if err := json.Unmarshal(data, &dashboard); err != nil {
		t.Fatal(err)
	}
	for _, p := range dashboard.Panels {
		for _, target := range p.Targets {
			queries["grafana-dashboard.json "+p.Title+" "+target.RefID] = target.Expr
		}
	}
	// Grafana's label_values(metric, label) is not PromQL: its selector is.
	labelValues := regexp.MustCompile(`^label_values\((.+), *[a-zA-Z_][a-zA-Z0-9_]*\)$`)
	for _, v := range dashboard.Templating.List {
		if m := labelValues.FindStringSubmatch(v.Definition); m != nil {
			queries["grafana-dashboard.json variable "+v.Name] = m[1]
		}
	}
	return queries
}

// Every query of the shipped alerts and dashboard parses with Prometheus'
// own parser, and every metric it names is one the controller exports: a
// query of a misspelt or removed metric returns nothing, and an alert on
// it never fires.
func TestMonitoringQueriesNameExportedMetrics(t *testing.T) {
	queries := monitoringQueries(t)
	if len(queries) < 10 {
		t.Fatalf("found %d queries in monitoring/: %v", len(queries), queries)
	}
	for where, q := range queries {
		expr, err := parser.ParseExpr(q)
		if err != nil {
			t.Errorf("%s: %q does not parse: %v", where, q, err)
			continue
		}
		names := metricNames(expr)
		if len(names) == 0 {
			t.Errorf("%s: %q names no metric", where, q)
		}
		for _, name := range names {
			if !exportedSeries(name) {
				t.Errorf("%s: %q reads %s, which the controller does not export", where, q, name)
			}
		}
	}
}

// The check itself: a name the controller registers is found, one it does
// not is not.
func TestExportedFindsRegisteredMetricsOnly(t *testing.T) {
	for name, want := range map[string]bool{
		"jobset_inplace_restarts_total":                  true,
		"jobset_inplace_restart_duration_seconds_bucket": true,
		"leader_election_master_status":                  true,
		"jobset_inplace_restart_total":                   false,
		"jobset_no_such_metric":                          false,
	} {
		if got := exportedSeries(name); got != want {
			t.Errorf("exportedSeries(%s) = %v, want %v", name, got, want)
		}
	}
	if _, err := parser.ParseExpr("sum(rate(x[5m]"); err == nil {
		t.Error("the parser takes an unclosed expression")
	} else if !errors.As(err, new(parser.ParseErrors)) {
		t.Errorf("unexpected error type %T", err)
	}
}
