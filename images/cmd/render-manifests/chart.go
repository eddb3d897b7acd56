package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fastjobset/jobset/api/version"
)

// ChartName is the Helm chart's name.
const ChartName = "jobset"

// chartInputs are what the chart is rendered from besides install.yaml's
// generated files: where the images come from, and their digests when the
// chart is pinned.
type chartInputs struct {
	registry string
	// tag is the images' tag when it is not the release's.
	tag     string
	digests map[string]string
}

// chartObject is one object of a template file, with the condition under
// which the chart renders it ("" always).
type chartObject struct {
	file string
	cond string
	obj  map[string]any
}

// chart is the chart being rendered: objects with holes, and the values
// the holes read.
type chart struct {
	holes
	values  chartValues
	objects []chartObject
	in      chartInputs
}

// namespaced are the chart's text for the namespace install.yaml names.
const releaseNamespace = "{{ .Release.Namespace }}"

// writeChart renders the Helm chart into dir from install.yaml's objects:
// each object of install.yaml but the Namespace (Helm installs into one:
// `helm install --namespace jobset-system --create-namespace`) is written
// as install.yaml writes it, with template text where a value may change
// it; then the objects install.yaml leaves out (ServiceMonitor,
// PrometheusRule, the Grafana dashboard, cert-manager's Certificate),
// each behind a value that is off by default. With the default values,
// `helm template` renders install.yaml's objects (TestChartDefaultsAreInstallYAML).
func writeChart(dir string, in installInputs, ci chartInputs) error {
	files, err := renderChart(in, ci)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// renderChart returns the chart's files by their paths in the chart.
func renderChart(in installInputs, ci chartInputs) (map[string][]byte, error) {
	objs, err := installObjects(in, images{Controller: "c", Webhook: "w", Agent: "a"})
	if err != nil {
		return nil, err
	}
	c := &chart{in: ci, values: chartValues{groupDocs: groupDocs}}
	c.imageValues()
	for _, obj := range objs {
		if obj.GetObjectKind().GroupVersionKind().Kind == "Namespace" {
			continue
		}
		if err := c.addInstallObject(obj); err != nil {
			return nil, err
		}
	}
	if err := c.addOptionalObjects(); err != nil {
		return nil, err
	}
	return c.files()
}

var groupDocs = map[string]string{
	"image":                     "Where the images come from: <registry>/<name>:<tag>, as install.yaml names them.",
	"controller":                "The controller's Deployment and flags (jobset-controller --help).",
	"controller.image":          "The controller's image: repository (empty: <image.registry>/jobset-controller), and a digest that pins it.",
	"controller.leaderElection": "Leader election among the controller's replicas: see " + version.Docs("operations.md#settings-that-matter") + ".",
	"controller.kubeAPI":        "The controller's client of the API server.",
	"webhook":                   "The admission webhook's Deployment and flags (jobset-webhook --help).",
	"webhook.image":             "The webhook's image: repository (empty: <image.registry>/jobset-webhook), and a digest that pins it.",
	"webhook.certificate":       "The serving certificate the webhook generates and rotates itself, unless certManager.enabled.",
	"agent":                     "The agent sidecar the webhook injects into JobSets annotated jobset.sigs.k8s.io/inject-agent=true.",
	"agent.image":               "The agent's image: repository (empty: <image.registry>/jobset-agent), and a digest that pins it.",
	"tls":                       "TLS policy of the controller's and the webhook's servers (admission and metrics).",
	"certManager":               "cert-manager provides the webhook's serving certificate and CA bundle instead of the webhook itself (cert-manager must be installed).",
	"metrics":                   "Scraping and alerting: the metrics Services and the ClusterRole jobset-metrics-reader are always installed; see " + version.Docs("operations.md#metrics") + ".",
	"metrics.serviceMonitor":    "A ServiceMonitor for the Prometheus Operator (its CRDs must be installed).",
	"metrics.prometheusRule":    "The alerts of monitoring/prometheusrule.yaml as a PrometheusRule (Prometheus Operator).",
	"metrics.grafanaDashboard":  "The dashboard of monitoring/grafana-dashboard.json in a ConfigMap, for Grafana's dashboard sidecar.",
	"flowControl":               "API Priority and Fairness: the agents' own priority level, which queues their requests instead of answering 429 when thousands restart at once, and the controller's flow schema. Sizing: " + version.Docs("operations.md#api-priority-and-fairness") + ".",
	"flowControl.agents":        "The agents' priority level (PriorityLevelConfiguration jobset-agents).",
}

// imageValues declares the images' values and returns nothing: the
// Deployments read them through the template "jobset.image".
func (c *chart) imageValues() {
	c.values.add("image.registry", c.in.registry, "Registry and repository prefix of the three images.", stringSchema)
	tag := ""
	if c.in.tag != version.Tag {
		tag = c.in.tag
	}
	c.values.add("image.tag", tag, "Tag of the three images. Empty: the chart's appVersion, the release's tag.", stringSchema)
	c.values.add("image.pullPolicy", "IfNotPresent", "Pull policy of the controller's and the webhook's images.",
		map[string]any{"type": "string", "enum": []any{"Always", "IfNotPresent", "Never"}})
	c.values.add("imagePullSecrets", []any{}, "Secrets the controller's and the webhook's Pods pull their images with, [{name: regcred}] say (not the agents': see "+version.Docs("webhooks.md#agent-injection")+").", arraySchema)
	for _, s := range sharedSettings {
		c.values.add(s.path, s.def, s.doc, s.kind.schema())
	}
}

// imageRef is the template of the reference to image name.
func imageRef(name, values string) string {
	return fmt.Sprintf(`{{ include "jobset.image" (dict "name" %q "image" .Values.%s.image "root" $) | quote }}`, name, values)
}

func (c *chart) imageOf(name, values string) {
	c.values.add(values+".image.repository", "", "Repository of the image. Empty: <image.registry>/"+name+".", stringSchema)
	c.values.add(values+".image.digest", c.in.digests[name], "Digest that pins the image (sha256:...). Empty: the tag alone.",
		map[string]any{"type": "string", "pattern": "^(sha256:[0-9a-f]{64})?$"})
}

// addInstallObject adds one of install.yaml's objects, with holes for what
// the values change.
func (c *chart) addInstallObject(obj client.Object) error {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	delete(u, "status")
	ns := c.value(releaseNamespace)
	replaceStrings(u, SystemNamespace, ns)
	c.helmLabels(u)

	kind, name := obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName()
	file, cond := "", ""
	switch kind {
	case "CustomResourceDefinition":
		// Helm's crds/ directory never upgrades a CRD; as a template it
		// is upgraded with the chart, and kept on uninstall, with the
		// JobSets it holds.
		meta := u["metadata"].(map[string]any)
		annotations, _ := meta["annotations"].(map[string]any)
		if annotations == nil {
			annotations = map[string]any{}
			meta["annotations"] = annotations
		}
		annotations["helm.sh/resource-policy"] = "keep"
		file = "crd.yaml"
	case "ServiceAccount", "ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding":
		file = "rbac.yaml"
	case "Service":
		file = "services.yaml"
	case "Deployment":
		file = strings.TrimPrefix(name, "jobset-") + ".yaml"
		if err := c.deployment(u, name); err != nil {
			return err
		}
	case "PodDisruptionBudget":
		file = strings.TrimPrefix(name, "jobset-") + ".yaml"
	case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
		file = "webhook-configurations.yaml"
		u["metadata"].(map[string]any)["annotations"] = c.lines(func(at line) string {
			return at.indent + "{{- if .Values.certManager.enabled }}\n" +
				at.head() + "\n" +
				at.indent + `  cert-manager.io/inject-ca-from: {{ printf "%s/%s" .Release.Namespace "` + certificateName + `" | quote }}` + "\n" +
				at.indent + "{{- end }}"
		})
	case "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
		file = "agent-policy.yaml"
	case "FlowSchema", "PriorityLevelConfiguration":
		file, cond = "flowcontrol.yaml", c.flowControlEnabled()
		if kind == "PriorityLevelConfiguration" {
			c.agentsPriorityLevel(u)
		}
	default:
		return fmt.Errorf("install.yaml's %s %s has no place in the chart", kind, name)
	}
	c.objects = append(c.objects, chartObject{file: file, cond: cond, obj: u})
	return nil
}

// helmLabels adds Helm's labels to the object's own (not to selectors nor
// Pod templates, which must stay install.yaml's for an install.yaml
// installation to be taken over by the chart).
func (c *chart) helmLabels(u map[string]any) {
	meta := u["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
		meta["labels"] = labels
	}
	labels[c.lines(func(at line) string {
		return at.indent + `{{- include "jobset.labels" $ | nindent ` + strconv.Itoa(at.col()) + " }}"
	})] = ""
}

// replaceStrings replaces every string value equal to old in u.
func replaceStrings(u any, old, replacement string) {
	switch v := u.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && s == old {
				v[k] = replacement
				continue
			}
			replaceStrings(e, old, replacement)
		}
	case []any:
		for i, e := range v {
			if s, ok := e.(string); ok && s == old {
				v[i] = replacement
				continue
			}
			replaceStrings(e, old, replacement)
		}
	}
}

// field returns the map at path in u.
func field(u map[string]any, path ...string) map[string]any {
	for _, p := range path {
		u = u[p].(map[string]any)
	}
	return u
}

// yamlBlock writes the value expr as a YAML block under the line's key.
func yamlBlock(expr string) func(at line) string {
	return func(at line) string {
		return at.head() + "\n" + strings.Repeat(" ", at.col()+2) + "{{- toYaml " + expr + " | nindent " + strconv.Itoa(at.col()+2) + " }}"
	}
}

// optionalBlock writes the key and the value expr as a YAML block, or
// nothing while the value is empty.
func optionalBlock(expr string) func(at line) string {
	return func(at line) string {
		if at.dash != "" {
			panic("an optional block may not open a list item: " + at.key)
		}
		return at.indent + "{{- with " + expr + " }}\n" +
			at.head() + "\n" +
			at.indent + "  {{- toYaml . | nindent " + strconv.Itoa(at.col()+2) + " }}\n" +
			at.indent + "{{- end }}"
	}
}

// optionalScalar writes the key and the string value expr, or nothing
// while it is empty.
func optionalScalar(expr string) func(at line) string {
	return func(at line) string {
		return at.indent + "{{- with " + expr + " }}\n" +
			at.head() + " {{ . | quote }}\n" +
			at.indent + "{{- end }}"
	}
}

// deployment puts the values into the controller's or the webhook's
// Deployment: its replicas, image, flags, resources and scheduling.
func (c *chart) deployment(u map[string]any, name string) error {
	values := strings.TrimPrefix(name, "jobset-")
	spec := field(u, "spec")
	pod := field(spec, "template", "spec")
	containers := pod["containers"].([]any)
	if len(containers) != 1 {
		return fmt.Errorf("deployment %s: %d containers, want 1", name, len(containers))
	}
	container := containers[0].(map[string]any)

	c.imageOf(name, values)
	if values == "webhook" {
		c.imageOf("jobset-agent", "agent")
	}
	replicas := c.values.add(values+".replicas", spec["replicas"], "Replicas: 2 keeps a standby (controller) or a second server (webhook) through a lost Pod, a drain and a rolling update.", countSchema)
	spec["replicas"] = c.value("{{ " + replicas + " | int64 }}")
	container["image"] = c.value(imageRef(name, values))
	container["imagePullPolicy"] = c.value("{{ .Values.image.pullPolicy | quote }}")
	container["resources"] = c.lines(yamlBlock(c.values.add(values+".resources", container["resources"], "Resources of the container.", objectSchema)))
	pod["topologySpreadConstraints"] = c.lines(yamlBlock(c.values.add(values+".topologySpreadConstraints", pod["topologySpreadConstraints"],
		"How the replicas spread over nodes and zones (ScheduleAnyway: on one node they still run).", arraySchema)))
	pod["nodeSelector"] = c.lines(optionalBlock(c.values.add(values+".nodeSelector", map[string]any{}, "Node labels the Pods must run on.", labelsSchema)))
	pod["affinity"] = c.lines(optionalBlock(c.values.add(values+".affinity", map[string]any{}, "Affinity of the Pods.", objectSchema)))
	pod["tolerations"] = c.lines(optionalBlock(c.values.add(values+".tolerations", []any{}, "Tolerations of the Pods.", arraySchema)))
	pod["priorityClassName"] = c.lines(optionalScalar(c.values.add(values+".priorityClassName", "", "PriorityClass of the Pods, system-cluster-critical say. Empty: none.", stringSchema)))
	pod["imagePullSecrets"] = c.lines(optionalBlock(".Values.imagePullSecrets"))

	// The arguments: install.yaml's, each setting from its value.
	var fixed []string
	var settings []setting
	switch values {
	case "controller":
		settings = append(append(settings, sharedSettings...), controllerSettings...)
	case "webhook":
		settings = append(append(settings, sharedSettings...), webhookSettings...)
	}
	for _, a := range container["args"].([]any) {
		a := a.(string)
		if !isSettingArg(a, settings) {
			fixed = append(fixed, a)
		}
	}
	for _, s := range settings[len(sharedSettings):] {
		c.values.add(s.path, s.def, s.doc, s.kind.schema())
	}
	extraArgs := c.values.add(values+".extraArgs", []any{}, "More arguments, after the ones above (a flag given twice takes the last value).", argsSchema)
	container["args"] = c.lines(func(at line) string {
		pad := strings.Repeat(" ", at.col())
		var b strings.Builder
		b.WriteString(at.head())
		for _, a := range fixed {
			if values == "webhook" && strings.HasPrefix(a, "--agent-image=") {
				b.WriteString("\n" + pad + `- {{ printf "--agent-image=%s" (include "jobset.image" (dict "name" "jobset-agent" "image" .Values.agent.image "root" $)) | quote }}`)
				continue
			}
			b.WriteString("\n" + pad + "- " + strconv.Quote(a))
		}
		if values == "webhook" {
			b.WriteString("\n" + pad + "{{- if .Values.certManager.enabled }}\n" + pad + `- "--cert-manager=true"` + "\n" + pad + "{{- end }}")
		}
		for _, s := range settings {
			b.WriteString("\n" + settingArg(s, pad))
		}
		b.WriteString("\n" + pad + "{{- with " + extraArgs + " }}\n" + pad + "{{- toYaml . | nindent " + strconv.Itoa(at.col()) + " }}\n" + pad + "{{- end }}")
		return b.String()
	})
	return nil
}

// isSettingArg says whether install.yaml's argument a is a setting's.
func isSettingArg(a string, settings []setting) bool {
	for _, s := range settings {
		if s.arg() != "" && a == s.arg() {
			return true
		}
	}
	return false
}

// settingArg is the template of a setting's argument.
func settingArg(s setting, pad string) string {
	ref := ".Values." + s.path
	verb, arg := "%v", ref
	switch s.kind {
	case kindInt:
		verb, arg = "%d", "("+ref+" | int64)"
	case kindBool:
		verb = "%t"
	}
	if s.optional() {
		return pad + "{{- with " + ref + " }}\n" + pad + `- {{ printf "--` + s.flag + `=` + verb + `" . | quote }}` + "\n" + pad + "{{- end }}"
	}
	return pad + `- {{ printf "--` + s.flag + `=` + verb + `" ` + arg + ` | quote }}`
}

func (c *chart) flowControlEnabled() string {
	for _, v := range c.values.list {
		if v.path == "flowControl.enabled" {
			return ".Values.flowControl.enabled"
		}
	}
	return c.values.add("flowControl.enabled", true, "Install the three objects. Turn it off only where another configuration already queues the agents' requests.", boolSchema)
}

// agentsPriorityLevel puts the sizing values into the agents' priority
// level.
func (c *chart) agentsPriorityLevel(u map[string]any) {
	limited := field(u, "spec", "limited")
	queuing := field(limited, "limitResponse", "queuing")
	limited["nominalConcurrencyShares"] = c.value("{{ " + c.values.add("flowControl.agents.nominalConcurrencyShares", limited["nominalConcurrencyShares"],
		"Concurrency shares of the level (workload-low has 100): raise it for an API server that serves a group's requests slowly.", countSchema) + " | int64 }}")
	queuing["queueLengthLimit"] = c.value("{{ " + c.values.add("flowControl.agents.queueLengthLimit", queuing["queueLengthLimit"],
		"Requests a queue holds: at least the agents of the largest group that restarts at once (one namespace is one queue).", countSchema) + " | int64 }}")
	queuing["queues"] = c.value("{{ " + c.values.add("flowControl.agents.queues", queuing["queues"], "Queues of the level.", countSchema) + " | int64 }}")
	queuing["handSize"] = c.value("{{ " + c.values.add("flowControl.agents.handSize", queuing["handSize"], "Queues a flow (a namespace) is shuffle-sharded onto.", countSchema) + " | int64 }}")
}

const chartHeader = "# Generated by images/cmd/render-manifests from install.yaml's objects; do not edit.\n"

// files writes the chart.
func (c *chart) files() (map[string][]byte, error) {
	out := map[string][]byte{}
	var order []string
	texts := map[string]*bytes.Buffer{}
	for _, o := range c.objects {
		data, err := yaml.Marshal(o.obj)
		if err != nil {
			return nil, err
		}
		text, err := c.fill(string(data))
		if err != nil {
			return nil, err
		}
		b := texts[o.file]
		if b == nil {
			b = bytes.NewBufferString(chartHeader)
			texts[o.file] = b
			order = append(order, o.file)
		}
		if o.cond != "" {
			b.WriteString("{{- if " + o.cond + " }}\n")
		}
		b.WriteString("---\n" + text)
		if o.cond != "" {
			b.WriteString("{{- end }}\n")
		}
	}
	for _, f := range order {
		out["templates/"+f] = texts[f].Bytes()
	}
	dashboard, err := dashboardJSON()
	if err != nil {
		return nil, err
	}
	out["files/"+dashboardFile] = dashboard
	out["templates/_helpers.tpl"] = []byte(helpersTemplate)
	out["templates/NOTES.txt"] = []byte(notesTemplate)
	out["Chart.yaml"] = []byte(fmt.Sprintf(chartYAML, ChartName, version.Version, version.Tag))
	values, err := c.values.valuesYAML(valuesHeader)
	if err != nil {
		return nil, err
	}
	out["values.yaml"] = []byte(values)
	schema, err := c.values.schemaJSON()
	if err != nil {
		return nil, err
	}
	out["values.schema.json"] = schema
	return out, nil
}

const chartYAML = `# Generated by images/cmd/render-manifests; do not edit.
apiVersion: v2
name: %s
description: JobSet with in-place group restarts (fastjobset), a drop-in JobSet controller with its admission webhook, the agents' admission policy and API Priority and Fairness objects.
type: application
version: %s
appVersion: %s
# ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1).
kubeVersion: ">=1.30.0-0"
`

const valuesHeader = `# Generated by images/cmd/render-manifests; do not edit.
#
# With these defaults the chart renders install.yaml's objects (less the
# Namespace: install with --namespace jobset-system --create-namespace).
# values.schema.json checks every value.

`

const helpersTemplate = `{{/* Generated by images/cmd/render-manifests; do not edit. */}}

{{/* Helm's labels, on every object's own labels (not on selectors). */}}
{{- define "jobset.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* An image's reference: dict "name" (jobset-controller), "image" (its values), "root" ($). */}}
{{- define "jobset.image" -}}
{{- $repository := .image.repository | default (printf "%s/%s" (trimSuffix "/" .root.Values.image.registry) .name) -}}
{{- $tag := .root.Values.image.tag | default .root.Chart.AppVersion -}}
{{- printf "%s:%s" $repository $tag -}}
{{- with .image.digest }}@{{ . }}{{ end -}}
{{- end }}
`

const notesTemplate = `{{/* Generated by images/cmd/render-manifests; do not edit. */}}
fastjobset {{ .Chart.AppVersion }} runs in {{ .Release.Namespace }}.

Each namespace that runs InPlaceRestart JobSets needs the agent's
ServiceAccount and Role (agent/rbac/agent-rbac.yaml of the release):

  kubectl apply -n <namespace> -f agent-rbac.yaml

Prometheus reads the metrics once its ServiceAccount is bound to the
ClusterRole jobset-metrics-reader.
`

// certificateName names cert-manager's Certificate for the webhook, which
// the webhook configurations' inject-ca-from annotation names.
const certificateName = WebhookName

// addOptionalObjects adds what install.yaml leaves out, each behind its
// value: objects of CRDs that may not be installed (the Prometheus
// Operator's, cert-manager's) and the dashboard.
func (c *chart) addOptionalObjects() error {
	ns := c.value(releaseNamespace)

	c.addPrometheusObject("serviceMonitor", serviceMonitor(), "ServiceMonitor",
		"More labels of the ServiceMonitor, for a Prometheus that selects ServiceMonitors by label (release: prometheus, say).")
	c.addPrometheusObject("prometheusRule", prometheusRule(), "PrometheusRule",
		"More labels of the PrometheusRule, for a Prometheus that selects rules by label.")

	dashboardEnabled := c.values.add("metrics.grafanaDashboard.enabled", false, "Install the dashboard's ConfigMap.", boolSchema)
	dashboard := map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": "jobset-grafana-dashboard", "namespace": ns, "labels": map[string]any{}},
		"data": map[string]any{dashboardFile: c.lines(func(at line) string {
			return at.indent + dashboardFile + ": |-\n" + `{{ .Files.Get "files/` + dashboardFile + `" | indent ` + strconv.Itoa(at.col()+2) + " }}"
		})},
	}
	c.helmLabels(dashboard)
	field(dashboard, "metadata", "labels")[c.lines(extraLabels(c.values.add("metrics.grafanaDashboard.labels", map[string]any{"grafana_dashboard": "1"},
		"Labels of the ConfigMap: Grafana's sidecar loads the ConfigMaps with its label (grafana_dashboard by default).", labelsSchema)))] = ""
	c.objects = append(c.objects, chartObject{file: "monitoring.yaml", obj: dashboard, cond: dashboardEnabled})

	enabled := c.values.add("certManager.enabled", false, "Use cert-manager: the webhook runs with --cert-manager, a Certificate writes its Secret, and cert-manager's CA injector fills the webhook configurations' CA bundles.", boolSchema)
	issuer := c.values.add("certManager.issuerRef", map[string]any{},
		"The issuer of the Certificate, {kind: ClusterIssuer, name: my-ca} say. Empty: a self-signed Issuer the chart creates.", objectSchema)
	selfSigned := map[string]any{
		"apiVersion": "cert-manager.io/v1",
		"kind":       "Issuer",
		"metadata":   map[string]any{"name": "jobset-selfsigned", "namespace": ns, "labels": partOfAny(WebhookName)},
		"spec":       map[string]any{"selfSigned": map[string]any{}},
	}
	c.helmLabels(selfSigned)
	c.objects = append(c.objects, chartObject{file: "cert-manager.yaml", obj: selfSigned, cond: "and " + enabled + " (not " + issuer + ")"})
	dnsName := WebhookServiceName + "." + ns + ".svc"
	certificate := map[string]any{
		"apiVersion": "cert-manager.io/v1",
		"kind":       "Certificate",
		"metadata":   map[string]any{"name": certificateName, "namespace": ns, "labels": partOfAny(WebhookName)},
		"spec": map[string]any{
			"secretName": WebhookSecretName,
			"dnsNames":   []any{dnsName, dnsName + ".cluster.local"},
			"issuerRef": c.lines(func(at line) string {
				return at.head() + "\n" +
					at.indent + "  {{- with " + issuer + " }}\n" +
					at.indent + "  {{- toYaml . | nindent " + strconv.Itoa(at.col()+2) + " }}\n" +
					at.indent + "  {{- else }}\n" +
					at.indent + "  kind: Issuer\n" +
					at.indent + "  name: jobset-selfsigned\n" +
					at.indent + "  {{- end }}"
			}),
		},
	}
	c.helmLabels(certificate)
	c.objects = append(c.objects, chartObject{file: "cert-manager.yaml", obj: certificate, cond: enabled})
	return nil
}

// extraLabels writes the labels of the value expr among an object's own.
// addPrometheusObject adds an object of the Prometheus Operator's, off
// unless metrics.<key>.enabled, with metrics.<key>.labels added to its own.
func (c *chart) addPrometheusObject(key string, obj client.Object, kind, labelsHelp string) {
	u := obj.(*unstructured.Unstructured).Object
	replaceStrings(u, SystemNamespace, c.value(releaseNamespace))
	enabled := c.values.add("metrics."+key+".enabled", false, "Install the "+kind+".", boolSchema)
	c.helmLabels(u)
	field(u, "metadata", "labels")[c.lines(extraLabels(c.values.add("metrics."+key+".labels", map[string]any{}, labelsHelp, labelsSchema)))] = ""
	c.objects = append(c.objects, chartObject{file: "monitoring.yaml", obj: u, cond: enabled})
}

func extraLabels(expr string) func(at line) string {
	return func(at line) string {
		return at.indent + "{{- with " + expr + " }}\n" +
			at.indent + "{{- toYaml . | nindent " + strconv.Itoa(at.col()) + " }}\n" +
			at.indent + "{{- end }}"
	}
}

func partOfAny(name string) map[string]any {
	return stringMap(partOf(name))
}
