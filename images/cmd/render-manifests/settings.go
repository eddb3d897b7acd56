package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	"github.com/fastjobset/jobset/controllers/jobsetcontroller"
	"github.com/fastjobset/jobset/controllers/leadership"
)

// kind is the type of a flag's value, which decides how the chart prints
// it and what values.schema.json accepts.
type kind int

const (
	kindString kind = iota
	kindDuration
	kindInt
	kindNumber
	kindBool
)

// A setting is a flag of the controller or the webhook that operators
// tune: install.yaml passes it with its default, and the chart takes it
// from a value. A setting whose default is empty is left out of
// install.yaml, and out of the chart's rendering while its value is empty
// (the binary's own default then applies). Flags that wire the pieces
// together (ports, names, the certificate's directory) are not settings:
// TestEveryFlagIsASettingOrWiring in tools/codegen lists them.
type setting struct {
	flag string
	// path is where values.yaml holds it, dotted from the root.
	path string
	kind kind
	// def is the value install.yaml passes and values.yaml starts from:
	// a string (durations, quantities and other strings), an int, a
	// float64 or a bool.
	def any
	doc string
}

// shortDuration writes d as a flag takes it, without zero units:
// 5m, not 5m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// arg is the setting's command-line argument as install.yaml writes it,
// or "" when the flag is left out.
func (s setting) arg() string {
	switch v := s.def.(type) {
	case string:
		if v == "" {
			return ""
		}
		return "--" + s.flag + "=" + v
	case int:
		return "--" + s.flag + "=" + strconv.Itoa(v)
	case float64:
		return "--" + s.flag + "=" + strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return "--" + s.flag + "=" + strconv.FormatBool(v)
	}
	panic(fmt.Sprintf("setting %s: default of type %T", s.flag, s.def))
}

// optional settings are left out while their value is empty.
func (s setting) optional() bool { return s.def == "" }

// Settings both binaries take, from one value each: a gate or a TLS
// policy that differed between them would make no sense.
var sharedSettings = []setting{
	{flag: "feature-gates", path: "featureGates", kind: kindString, def: "",
		doc: "Feature gates of the controller and the webhook, as Name=true,Other=false: community JobSet's gates TLSOptions (on), RestartJob, ElasticJobSet, ExecutionAttemptsTracking and JobSetActiveDeadlineSeconds (off). Empty: the defaults."},
	{flag: "tls-min-version", path: "tls.minVersion", kind: kindString, def: "",
		doc: "Minimum TLS version of the admission and metrics servers: VersionTLS12 or VersionTLS13. Empty: VersionTLS12. Needs the TLSOptions gate."},
	{flag: "tls-cipher-suites", path: "tls.cipherSuites", kind: kindString, def: "",
		doc: "TLS 1.2 cipher suites the servers allow, comma-separated Go names such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256. Empty: Go's. Not with VersionTLS13."},
}

// controllerSettings are the controller's (jobset-controller --help).
var controllerSettings = []setting{
	{flag: "leader-elect", path: "controller.leaderElection.enabled", kind: kindBool, def: true,
		doc: "Elect a leader among the replicas, so that one reconciles at a time. Keep it on with more than one replica."},
	{flag: "leader-elect-lease-duration", path: "controller.leaderElection.leaseDuration", kind: kindDuration, def: shortDuration(leadership.DefaultLeaseDuration),
		doc: "How long a standby waits, after it last saw the lease renewed, before it takes the lease. With the retry period it bounds failover after a crash."},
	{flag: "leader-elect-renew-deadline", path: "controller.leaderElection.renewDeadline", kind: kindDuration, def: shortDuration(leadership.DefaultRenewDeadline),
		doc: "How long the leader tries to renew the lease before it stops reconciling; shorter than the lease duration."},
	{flag: "leader-elect-retry-period", path: "controller.leaderElection.retryPeriod", kind: kindDuration, def: shortDuration(leadership.DefaultRetryPeriod),
		doc: "How often the leader renews and a standby tries to take the lease. On a slow API server raise the three together (15s/10s/2s, say)."},
	{flag: "leader-election-namespace", path: "controller.leaderElection.namespace", kind: kindString, def: "",
		doc: "Namespace of the Lease. Empty: the release's namespace, where the chart grants it."},
	{flag: "kube-api-qps", path: "controller.kubeAPI.qps", kind: kindNumber, def: 500.0,
		doc: "Sustained queries per second to the API server."},
	{flag: "kube-api-burst", path: "controller.kubeAPI.burst", kind: kindInt, def: 500,
		doc: "Burst of queries to the API server."},
	{flag: "concurrency", path: "controller.concurrency", kind: kindInt, def: 10,
		doc: "JobSets reconciled in parallel."},
	{flag: "gather-stall-threshold", path: "controller.gatherStallThreshold", kind: kindDuration, def: shortDuration(jobsetcontroller.DefaultGatherStallThreshold),
		doc: "How long the Pods of an InPlaceRestart JobSet may take to join the next epoch before the GatherStalled condition names those that have not (0 disables it)."},
	{flag: "node-loss-threshold", path: "controller.nodeLossThreshold", kind: kindDuration, def: shortDuration(jobsetcontroller.DefaultNodeLossThreshold),
		doc: "How long a node's kubelet may leave its Lease unrenewed before the members of in-place groups on it are marked Failed and replaced (0: never). A member's bound is never shorter than its agent's fence time plus the kubelet's renew interval and restart."},
	{flag: "repeated-failure-limit", path: "controller.repeatedFailureLimit", kind: kindInt, def: jobsetcontroller.DefaultRepeatedFailureLimit,
		doc: "After this many failures in place of the same Pod within the window, the Pod is replaced on another node instead (0: never)."},
	{flag: "repeated-failure-window", path: "controller.repeatedFailureWindow", kind: kindDuration, def: shortDuration(jobsetcontroller.DefaultRepeatedFailureWindow),
		doc: "The window of repeatedFailureLimit."},
	{flag: "zap-log-level", path: "controller.logLevel", kind: kindString, def: "",
		doc: "Log level: info, debug, error, or a number (2 adds each reconcile's plan). Empty: info."},
}

// webhookSettings are the webhook's (jobset-webhook --help).
var webhookSettings = []setting{
	{flag: "agent-restart-exit-code", path: "agent.restartExitCode", kind: kindInt, def: agentspec.DefaultRestartExitCode,
		doc: "Exit code with which injected agents restart their Pod in place (1..255)."},
	{flag: "agent-cpu", path: "agent.cpu", kind: kindString, def: sidecar.DefaultCPU.String(),
		doc: "CPU request and limit (equal) of injected agents."},
	{flag: "agent-memory", path: "agent.memory", kind: kindString, def: sidecar.DefaultMemory.String(),
		doc: "Memory request and limit (equal) of injected agents."},
	{flag: "agent-fence-node-lease", path: "agent.fenceNodeLease", kind: kindBool, def: true,
		doc: "Injected agents also stop their worker when their node's Lease goes unrenewed and no peer vouches (FENCE_NODE_LEASE), through the watch on Leases the controller grants them, so a wrapped worker's member is declared lost without a hold after the mark. false: the API server's silence alone fences, and such a member's group waits about 20 s more after the mark."},
	{flag: "cert-validity", path: "webhook.certificate.validity", kind: kindDuration, def: shortDuration(365 * 24 * time.Hour),
		doc: "Validity of the serving certificate the webhook generates (its CA: ten times as long). Not used with certManager.enabled."},
	{flag: "cert-renew-before", path: "webhook.certificate.renewBefore", kind: kindDuration, def: shortDuration(90 * 24 * time.Hour),
		doc: "Renew the generated certificate (and CA) this long before it expires; shorter than the validity."},
	{flag: "cert-check-interval", path: "webhook.certificate.checkInterval", kind: kindDuration, def: shortDuration(12 * time.Hour),
		doc: "How often the webhook checks whether its certificate needs renewing."},
	{flag: "extra-dns-names", path: "webhook.certificate.extraDNSNames", kind: kindString, def: "",
		doc: "More DNS names for the generated certificate, comma-separated (when the API server reaches the webhook by another name)."},
	{flag: "zap-log-level", path: "webhook.logLevel", kind: kindString, def: "",
		doc: "Log level: info, debug, error, or a number. Empty: info."},
}

// args are the settings' arguments as install.yaml passes them.
func args(settings ...[]setting) []string {
	var out []string
	for _, list := range settings {
		for _, s := range list {
			if a := s.arg(); a != "" {
				out = append(out, a)
			}
		}
	}
	return out
}
