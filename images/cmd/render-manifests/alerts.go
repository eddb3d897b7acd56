package main

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// leaseName is the controller's leader election Lease, the name label of
// controller-runtime's leader_election_master_status.
const leaseName = "jobset-controller.jobset.x-k8s.io"

// An alert of the PrometheusRule. Its expression names only metrics the
// controller exports: controllers/cmd/jobset-controller's
// TestMonitoringQueriesNameExportedMetrics parses each with Prometheus'
// parser and looks every metric up in the controller's registry.
type alert struct {
	name, expr, forDuration, severity, summary, description string
}

// perJobSet keeps one series per JobSet: after a failover the old leader
// may still serve its last values beside the new leader's.
func perJobSet(metric string) string { return "max by (namespace, jobset) (" + metric + ")" }

var alerts = []alert{
	{
		name:        "JobSetGroupRestartStalled",
		expr:        perJobSet("jobset_gather_stalled") + " == 1",
		forDuration: "1m",
		severity:    "warning",
		summary:     "A group restart of JobSet {{ $labels.namespace }}/{{ $labels.jobset }} is stalled.",
		description: "Pods of the JobSet have not joined the next epoch within the controller's --gather-stall-threshold. Its GatherStalled condition names them and why (kubectl describe jobset -n {{ $labels.namespace }} {{ $labels.jobset }}): a missing agent, RBAC, a Pod that cannot start.",
	},
	{
		name: "JobSetRestartBudgetNearlySpent",
		expr: "(" + perJobSet("jobset_max_restarts") + " - " + perJobSet("jobset_restarts_used") + ")" +
			" <= clamp_min(0.2 * " + perJobSet("jobset_max_restarts") + ", 1)" +
			" and " + perJobSet("jobset_max_restarts") + " > 0",
		forDuration: "0m",
		severity:    "warning",
		summary:     "JobSet {{ $labels.namespace }}/{{ $labels.jobset }} has {{ $value }} restarts left.",
		description: "The JobSet has used most of spec.failurePolicy.maxRestarts (full restarts that count and group restarts in place); when none is left, its next failure fails it.",
	},
	{
		name:        "JobSetNodeLossReplacements",
		expr:        "sum by (namespace, node) (increase(jobset_node_loss_replacements_total[10m])) > 0",
		forDuration: "0m",
		severity:    "warning",
		summary:     "Pods of in-place groups on node {{ $labels.node }} were replaced: its kubelet went silent.",
		description: "The controller marked {{ $value }} Pods of namespace {{ $labels.namespace }} on node {{ $labels.node }} Failed in the last 10 minutes, for their Jobs to replace them, because the node's Lease went unrenewed past --node-loss-threshold. Look at the node.",
	},
	{
		name:        "JobSetRepeatedFailureReplacements",
		expr:        "sum by (namespace, node) (increase(jobset_repeated_failure_replacements_total[1h])) > 0",
		forDuration: "0m",
		severity:    "warning",
		summary:     "Pods failed in place again and again on node {{ $labels.node }} and were moved off it.",
		description: "{{ $value }} Pods of namespace {{ $labels.namespace }} failed in place --repeated-failure-limit times within --repeated-failure-window on node {{ $labels.node }} in the last hour and were replaced on other nodes. The node may be faulty.",
	},
	{
		name:        "JobSetControllerNoLeader",
		expr:        `absent(leader_election_master_status{name="` + leaseName + `"} == 1)`,
		forDuration: "1m",
		severity:    "critical",
		summary:     "No JobSet controller leads.",
		description: "No replica of jobset-controller has reported holding the lease " + leaseName + " for a minute (a failover takes seconds): no JobSet is reconciled and no group restarts. Check the controller's Pods and their logs, and that Prometheus scrapes jobset-controller-metrics.",
	},
}

// prometheusRule holds the alerts, for the Prometheus Operator.
func prometheusRule() client.Object {
	var rules []any
	for _, a := range alerts {
		rules = append(rules, map[string]any{
			"alert":       a.name,
			"expr":        a.expr,
			"for":         a.forDuration,
			"labels":      map[string]any{"severity": a.severity},
			"annotations": map[string]any{"summary": a.summary, "description": a.description},
		})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "PrometheusRule",
		"metadata": map[string]any{
			"name":      "jobset",
			"namespace": SystemNamespace,
			"labels":    stringMap(partOf("jobset")),
		},
		"spec": map[string]any{"groups": []any{map[string]any{"name": "jobset", "rules": rules}}},
	}}
}

// dashboardFile is the Grafana dashboard's file, in monitoring/ and in the
// chart's files/.
const dashboardFile = "grafana-dashboard.json"

// A panel of the dashboard: its queries, each with its legend.
type panel struct {
	title, kind, unit, description string
	queries                        [][2]string
}

// inNamespace is the matcher of the dashboard's namespace variable.
const inNamespace = `namespace=~"$namespace"`

var panels = []panel{
	{title: "Controller leader", kind: "stat", description: "1 while a replica holds the lease; 0 or nothing: no JobSet is reconciled.",
		queries: [][2]string{{`max(leader_election_master_status{name="` + leaseName + `"})`, "leader"}}},
	{title: "Versions running", kind: "table", description: "Replicas of the controller and the webhook, by version.",
		queries: [][2]string{{`count by (job, version) (jobset_build_info)`, "{{job}} {{version}}"}}},
	{title: "Group restarts in place", kind: "timeseries", unit: "short", description: "Group restarts started, per namespace, per 5 minutes.",
		queries: [][2]string{{`sum by (namespace) (increase(jobset_inplace_restarts_total{` + inNamespace + `}[5m]))`, "{{namespace}}"}}},
	{title: "Group restart duration", kind: "timeseries", unit: "s", description: "From the first sign of failure to the sync of the next epoch.",
		queries: [][2]string{
			{`histogram_quantile(0.5, sum by (le) (rate(jobset_inplace_restart_duration_seconds_bucket{` + inNamespace + `}[5m])))`, "p50"},
			{`histogram_quantile(0.95, sum by (le) (rate(jobset_inplace_restart_duration_seconds_bucket{` + inNamespace + `}[5m])))`, "p95"},
		}},
	{title: "Stalled gathers", kind: "table", description: "JobSets whose GatherStalled condition is True: kubectl describe jobset names the Pods that have not joined.",
		queries: [][2]string{{perJobSet(`jobset_gather_stalled{`+inNamespace+`}`) + " == 1", "{{namespace}}/{{jobset}}"}}},
	{title: "Restarts left", kind: "table", description: "spec.failurePolicy.maxRestarts less the restarts used, per running InPlaceRestart JobSet.",
		queries: [][2]string{{perJobSet(`jobset_max_restarts{`+inNamespace+`}`) + " - " + perJobSet(`jobset_restarts_used{`+inNamespace+`}`), "{{namespace}}/{{jobset}}"}}},
	{title: "Synced epoch", kind: "timeseries", unit: "short", description: "status.syncedEpoch: each step is a group restart completed.",
		queries: [][2]string{{perJobSet(`jobset_synced_epoch{` + inNamespace + `}`), "{{namespace}}/{{jobset}}"}}},
	{title: "Full restarts", kind: "timeseries", unit: "short", description: "Full restarts (every child Job recreated), per hour.",
		queries: [][2]string{{`sum by (namespace) (increase(jobset_restarts_total{` + inNamespace + `}[1h]))`, "{{namespace}}"}}},
	{title: "Replacements by node", kind: "timeseries", unit: "short", description: "Pods of in-place groups replaced because their node went silent, or because they kept failing on it, per hour.",
		queries: [][2]string{
			{`sum by (node) (increase(jobset_node_loss_replacements_total{` + inNamespace + `}[1h]))`, "node lost: {{node}}"},
			{`sum by (node) (increase(jobset_repeated_failure_replacements_total{` + inNamespace + `}[1h]))`, "repeated failures: {{node}}"},
		}},
	{title: "JobSets finished", kind: "timeseries", unit: "short", description: "JobSets completed and failed (community JobSet's counters), and failures by reason.",
		queries: [][2]string{
			{`sum(jobset_completed_total{` + inNamespace + `})`, "completed"},
			{`sum(jobset_failed_total{` + inNamespace + `})`, "failed"},
			{`sum by (reason) (jobset_failed_by_reason_total{` + inNamespace + `})`, "failed: {{reason}}"},
		}},
	{title: "Controller terms ended", kind: "timeseries", unit: "short", description: "Terms the controller ended and began again without exiting, by reason, per hour: lease-lost without an outage means the lease is too tight for the API server.",
		queries: [][2]string{{`sum by (reason) (increase(jobset_controller_terms_ended_total[1h]))`, "{{reason}}"}}},
	{title: "Reconciles", kind: "timeseries", unit: "ops", description: "Reconciles per second and their errors (controller-runtime).",
		queries: [][2]string{
			{`sum by (controller) (rate(controller_runtime_reconcile_total{job="jobset-controller-metrics"}[5m]))`, "{{controller}}"},
			{`sum by (controller) (rate(controller_runtime_reconcile_errors_total{job="jobset-controller-metrics"}[5m]))`, "errors: {{controller}}"},
		}},
	{title: "Work queue depth", kind: "timeseries", unit: "short", description: "Objects waiting to be reconciled (controller-runtime).",
		queries: [][2]string{{`sum by (name) (workqueue_depth{job="jobset-controller-metrics"})`, "{{name}}"}}},
}

// dashboardJSON is the Grafana dashboard: one variable for the data
// source, one for the namespaces, and the panels two by two.
func dashboardJSON() ([]byte, error) {
	var out []any
	for i, p := range panels {
		var targets []any
		for j, q := range p.queries {
			targets = append(targets, map[string]any{
				"datasource":   map[string]any{"type": "prometheus", "uid": "${datasource}"},
				"expr":         q[0],
				"legendFormat": q[1],
				"refId":        string(rune('A' + j)),
			})
		}
		out = append(out, map[string]any{
			"id":          i + 1,
			"type":        p.kind,
			"title":       p.title,
			"description": p.description,
			"datasource":  map[string]any{"type": "prometheus", "uid": "${datasource}"},
			"gridPos":     map[string]any{"h": 8, "w": 12, "x": 12 * (i % 2), "y": 8 * (i / 2)},
			"fieldConfig": map[string]any{"defaults": map[string]any{"unit": orDefault(p.unit, "short")}, "overrides": []any{}},
			"options":     map[string]any{},
			"targets":     targets,
		})
	}
	dashboard := map[string]any{
		"title":         "JobSet (fastjobset)",
		"uid":           "fastjobset",
		"description":   "JobSets with in-place group restarts: the controller's leader, group restarts, stalls, restart budgets and replacements.",
		"tags":          []any{"jobset", "fastjobset"},
		"schemaVersion": 39,
		"version":       1,
		"editable":      true,
		"time":          map[string]any{"from": "now-6h", "to": "now"},
		"refresh":       "1m",
		"templating": map[string]any{"list": []any{
			map[string]any{"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus"},
			map[string]any{
				"name": "namespace", "label": "Namespace", "type": "query",
				"datasource": map[string]any{"type": "prometheus", "uid": "${datasource}"},
				"query":      map[string]any{"query": "label_values(jobset_synced_epoch, namespace)", "refId": "namespaces"},
				"definition": "label_values(jobset_synced_epoch, namespace)",
				"includeAll": true, "multi": true, "allValue": ".*",
				"current": map[string]any{"text": "All", "value": "$__all"},
				"refresh": 2,
			},
		}},
		"panels": out,
	}
	data, err := json.MarshalIndent(dashboard, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("the dashboard: %w", err)
	}
	return append(data, '\n'), nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
