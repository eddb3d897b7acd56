package jobsetwebhook

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/api/version"
)

var inPlaceDoc = "see " + version.Docs("user-guide.md#setup")

// validateInPlaceRestart checks what restartStrategy InPlaceRestart relies
// on in every replicatedJob of the in-place group (those whose Pods run the
// agent), and that no startupPolicy or dependsOn deadlocks its barrier
// (group.go).
func validateInPlaceRestart(js *jobset.JobSet) field.ErrorList {
	var errs field.ErrorList
	members := groupMembers(js)
	if sp := js.Spec.StartupPolicy; sp != nil && sp.StartupPolicyOrder == jobset.InOrder && members.Len() > 1 {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "startupPolicy", "startupPolicyOrder"),
			fmt.Sprintf("InOrder cannot be used with restartStrategy InPlaceRestart and more than one replicatedJob in the in-place group (%s, whose Pods run the agent): the agents' barrier waits for every member's Pods, and InOrder creates later Jobs only once earlier ones are ready, so neither would ever start; use AnyOrder",
				strings.Join(sets.List(members), ", "))))
	}
	errs = append(errs, validateGroupDependsOn(js, members)...)
	for i, rj := range js.Spec.ReplicatedJobs {
		path := field.NewPath("spec", "replicatedJobs").Index(i)
		if !members.Has(rj.Name) && members.Len() > 0 && inDependsOn(js, rj.Name) {
			// Outside the group: an initializer or a launcher, an
			// ordinary Job.
			continue
		}
		spec := rj.Template.Spec
		specPath := path.Child("template", "spec")
		if v := ptr.Deref(spec.BackoffLimit, 6); v != math.MaxInt32 {
			errs = append(errs, field.Invalid(specPath.Child("backoffLimit"), v,
				"must be 2147483647 with restartStrategy InPlaceRestart, so that a failed Pod is replaced alone instead of failing its Job; leave it unset and it is defaulted"))
		}
		if v := ptr.Deref(spec.PodReplacementPolicy, ""); v != batchv1.Failed {
			errs = append(errs, field.NotSupported(specPath.Child("podReplacementPolicy"), v, []batchv1.PodReplacementPolicy{batchv1.Failed}))
		}
		if c, p := ptr.Deref(spec.Completions, 1), ptr.Deref(spec.Parallelism, 1); c != p {
			errs = append(errs, field.Invalid(specPath.Child("completions"), c,
				fmt.Sprintf("must equal parallelism (%d) with restartStrategy InPlaceRestart: the group restarts together, so every Pod runs at once", p)))
		}
		errs = append(errs, validatePerIndexFailures(spec, specPath)...)
		if _, ok := spec.Template.Annotations[jobset.EpochKey]; ok {
			errs = append(errs, field.Forbidden(specPath.Child("template", "metadata", "annotations").Key(jobset.EpochKey),
				"only the agent writes a Pod's epoch, when it has joined; a template that carries it (copied from a live Pod?) makes every new Pod look joined before its agent started, so the group syncs early and agents lift their barriers beside Pending Pods: remove it"))
		}
		errs = append(errs, validateAgent(spec.Template.Spec, specPath.Child("template", "spec"))...)
	}
	return errs
}

// validatePerIndexFailures rejects what fails an index instead of the Job:
// the Job controller never replaces a failed index's Pod and fails the Job
// only once every other index has finished, which in a group that restarts
// together is never, so the group would wait for that Pod forever.
func validatePerIndexFailures(spec batchv1.JobSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.BackoffLimitPerIndex != nil {
		errs = append(errs, field.Forbidden(path.Child("backoffLimitPerIndex"),
			"cannot be used with restartStrategy InPlaceRestart: an index that uses up its limit is failed and never replaced, and its Job fails only once every other index finishes, so the group waits for it forever; remove it (backoffLimit 2147483647 replaces failed Pods, and failurePolicy.maxRestarts bounds the restarts)"))
	}
	if spec.MaxFailedIndexes != nil {
		errs = append(errs, field.Forbidden(path.Child("maxFailedIndexes"),
			"needs backoffLimitPerIndex, which restartStrategy InPlaceRestart cannot use; remove it"))
	}
	if p := spec.PodFailurePolicy; p != nil {
		for i, r := range p.Rules {
			if r.Action == batchv1.PodFailurePolicyActionFailIndex {
				errs = append(errs, field.Forbidden(path.Child("podFailurePolicy", "rules").Index(i).Child("action"),
					"FailIndex cannot be used with restartStrategy InPlaceRestart: the failed index is never replaced and its Job fails only once every other index finishes, so the group waits for it forever; use FailJob, and a failurePolicy rule on the reason PodFailurePolicy (FailJobSet or RestartJobSet)"))
			}
		}
	}
	return errs
}

// agentRuleFix is the agent's restart rule, as users write it.
const agentRuleFix = "{action: RestartAllContainers, exitCodes: {operator: NotIn, values: []}}"

// validateAgent finds the agent sidecar (an init container with
// restartPolicy Always and a RestartAllContainers rule) and checks its
// environment and that it never stops alone.
func validateAgent(pod corev1.PodSpec, path *field.Path) field.ErrorList {
	if err := validateNotCommunityAgent(pod, path); err != nil {
		return field.ErrorList{err}
	}
	i := sidecar.Index(pod)
	if i < 0 {
		return field.ErrorList{field.Required(path.Child("initContainers"),
			"restartStrategy InPlaceRestart needs the agent sidecar in every Pod: annotate the JobSet "+jobset.InjectAgentKey+`: "true"`+" and the webhook adds it, or add by hand an init container with restartPolicy Always and the restartPolicyRules entry "+agentRuleFix+
				" (only a replicatedJob in a dependsOn relation may run without it, outside the in-place group: an initializer the group waits for, or a launcher that waits for the group); "+inPlaceDoc)}
	}
	var errs field.ErrorList
	c := pod.InitContainers[i]
	cPath := path.Child("initContainers").Index(i)
	for _, name := range agentspec.RequiredEnv {
		if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name }) {
			errs = append(errs, field.Required(cPath.Child("env"),
				fmt.Sprintf("the agent needs %s from the downward API; %s", name, inPlaceDoc)))
		}
	}
	return append(errs, validateAgentRules(c, cPath.Child("restartPolicyRules"))...)
}

// validateNotCommunityAgent rejects community JobSet's own agent, as the sidecar
// that has our agent's shape or as the worker's wrapper (its
// WORKER_COMMAND mode): its Pods would never join a group here, and the
// checks of our agent's environment and rules would only send its user
// fixing the wrong container.
func validateNotCommunityAgent(pod corev1.PodSpec, path *field.Path) *field.Error {
	what := "remove this container and annotate the JobSet " + jobset.InjectAgentKey + `: "true"`
	if i := sidecar.Index(pod); i >= 0 {
		if sign := sidecar.CommunityAgentSign(pod.InitContainers[i]); sign != "" {
			return communityAgentError(path.Child("initContainers").Index(i), pod.InitContainers[i], sign, what)
		}
		return nil
	}
	for i, c := range pod.Containers {
		if sign := sidecar.CommunityAgentSign(c); sign != "" {
			return communityAgentError(path.Child("containers").Index(i), c, sign,
				"run the worker's own command in this container, without community's agent, and annotate the JobSet "+jobset.InjectAgentKey+`: "true"`)
		}
	}
	return nil
}

func communityAgentError(path *field.Path, c corev1.Container, sign, what string) *field.Error {
	return field.Invalid(path, c.Image, fmt.Sprintf(
		"runs community JobSet's in-place restart agent (%s), which this JobSet controller does not speak to: it waits for status.currentInPlaceRestartAttempt, which nothing here writes, so its Pod would never join a group restart; %s, and the webhook adds this controller's agent (or add it by hand); see %s",
		sign, what, version.Docs("user-guide.md#migrating-from-community-jobset")))
}

// validateAgentRules: an agent that stops while its Pod lives must take
// its worker with it, or it joins the next epoch while its worker runs on
// from before the group restart. A non-zero exit the rules leave to the
// agent alone (a crash, an OOM kill, the restart code itself) is wrong;
// exit 0 is the agent's answer to SIGTERM, which the kubelet sends it alone
// only when asked to (a livenessProbe, a resizePolicy that restarts it), so
// leaving 0 out is wrong with those and risky without (Warnings).
func validateAgentRules(c corev1.Container, path *field.Path) field.ErrorList {
	alone := exitsRestartingAlone(c)
	crashes := slices.DeleteFunc(slices.Clone(alone), func(code int32) bool { return code == 0 })
	if len(crashes) > 0 {
		return field.ErrorList{field.Invalid(path, describeRules(c.RestartPolicyRules), fmt.Sprintf(
			"the agent restarts alone on exit codes %s (a crash, an OOM kill (137), the restart code %d), joins the next epoch and leaves its worker running through the group restart; use the one rule %s, which restarts every container of the Pod on every exit; %s",
			codeRanges(crashes), restartExitCode(c), agentRuleFix, inPlaceDoc))}
	}
	if len(alone) > 0 {
		if why := stoppedAloneBy(c); why != "" {
			return field.ErrorList{field.Invalid(path, describeRules(c.RestartPolicyRules), fmt.Sprintf(
				"the agent exits 0 when the kubelet stops it alone (%s), and these rules then restart it alone, leaving its worker running through the group restart; use %s; %s",
				why, agentRuleFix, inPlaceDoc))}
		}
	}
	return nil
}

// exitsRestartingAlone lists the exit codes on which the agent would
// restart without its Pod's other containers.
func exitsRestartingAlone(c corev1.Container) []int32 {
	var out []int32
	for code := int32(0); code <= sidecar.MaxExitCode; code++ {
		if !sidecar.RestartsAllOn(c, code) {
			out = append(out, code)
		}
	}
	return out
}

// stoppedAloneBy names what makes the kubelet stop the container alone.
func stoppedAloneBy(c corev1.Container) string {
	var why []string
	if c.LivenessProbe != nil {
		why = append(why, "its livenessProbe fails")
	}
	if slices.ContainsFunc(c.ResizePolicy, func(p corev1.ContainerResizePolicy) bool {
		return p.RestartPolicy == corev1.RestartContainer
	}) {
		why = append(why, "an in-place resize restarts it (resizePolicy RestartContainer)")
	}
	return strings.Join(why, ", or ")
}

// restartExitCode is the agent's restart exit code, as its environment
// sets it.
func restartExitCode(c corev1.Container) int {
	for _, e := range c.Env {
		if e.Name == agentspec.EnvRestartExitCode {
			if n, err := strconv.Atoi(e.Value); err == nil {
				return n
			}
		}
	}
	return agentspec.DefaultRestartExitCode
}

// describeRules renders restart rules as users write them, for error
// values.
func describeRules(rules []corev1.ContainerRestartRule) string {
	var parts []string
	for _, r := range rules {
		if r.ExitCodes == nil {
			parts = append(parts, string(r.Action))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s %v", r.Action, r.ExitCodes.Operator, r.ExitCodes.Values))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// codeRanges renders sorted exit codes compactly: "0, 2-87, 89-255".
func codeRanges(codes []int32) string {
	var parts []string
	for i := 0; i < len(codes); {
		j := i
		for j+1 < len(codes) && codes[j+1] == codes[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, strconv.Itoa(int(codes[i])))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", codes[i], codes[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// longGather is how long a gather may take before admission warns that
// the agent's startup probe gives up: a replacement Pod can be Pending for
// hours while an autoscaler finds accelerators.
const longGather = 24 * time.Hour

// Warnings lists likely mistakes that admission lets through.
func Warnings(js *jobset.JobSet) []string {
	if jobset.RestartStrategyOf(js) != jobset.InPlaceRestart {
		return nil
	}
	var warnings []string
	members := groupMembers(js)
	for i, rj := range js.Spec.ReplicatedJobs {
		if !members.Has(rj.Name) {
			continue // outside the in-place group, or rejected
		}
		pod := rj.Template.Spec.Template.Spec
		path := field.NewPath("spec", "replicatedJobs").Index(i).Child("template", "spec", "template", "spec")
		if a := sidecar.Index(pod); a >= 0 {
			warnings = append(warnings, agentWarnings(pod.InitContainers[a], path.Child("initContainers").Index(a))...)
		}
		for j, c := range pod.Containers {
			cPath := path.Child("containers").Index(j)
			if !sidecar.HasRestartAllRule(c) {
				// Nil: podFailurePolicy fails the Job on every non-zero
				// exit of this container, so no rule is right.
				if fix := sidecar.WorkerRestartRules(c.Name, rj.Template.Spec.PodFailurePolicy); fix != nil {
					warnings = append(warnings, fmt.Sprintf("%s: container %q has no RestartAllContainers rule, so its failure does not restart its Pod in place (add %s)",
						cPath, c.Name, describeFix(fix)))
				}
				continue
			}
			warnings = append(warnings, failJobOverlaps(c, rj.Template.Spec.PodFailurePolicy, cPath)...)
		}
	}
	return append(warnings, wrapperWarnings(js)...)
}

// agentWarnings: shapes of the agent that work until they cost a group
// restart.
func agentWarnings(c corev1.Container, path *field.Path) []string {
	var warnings []string
	if c.StartupProbe == nil {
		warnings = append(warnings, fmt.Sprintf("%s: the agent has no startupProbe, so workers start before the group is in sync; probe %s on port %d",
			path, agentspec.DefaultBarrierPath, agentspec.DefaultBarrierPort))
	} else if p := c.StartupProbe; probeGivesUpAfter(p) < longGather {
		warnings = append(warnings, fmt.Sprintf("%s: gives up after %s (initialDelaySeconds %d + periodSeconds %d x failureThreshold %d): a gather that waits longer (a Pod Pending until a node is added) kills every waiting agent, and one that is down when the group syncs costs one more group restart; waiting is not failing: set failureThreshold: %d",
			path.Child("startupProbe"), probeGivesUpAfter(p), p.InitialDelaySeconds, probePeriod(p), probeThreshold(p), agentspec.StartupProbeFailureThreshold))
	}
	if len(validateAgentRules(c, path)) == 0 && slices.Contains(exitsRestartingAlone(c), 0) {
		warnings = append(warnings, fmt.Sprintf("%s: the agent restarts alone when it exits 0, which is its answer to SIGTERM: if the kubelet ever stops it alone (a livenessProbe, an in-place resize that restarts it), it joins the next epoch while its worker runs on through the group restart; use %s",
			path.Child("restartPolicyRules"), agentRuleFix))
	}
	return warnings
}

// failJobOverlaps: a worker rule that restarts in place on an exit code
// that podFailurePolicy maps to FailJob keeps the Pod from failing, so
// the Job never fails on it and the JobSet's failure policy (FailJobSet,
// say) never fires; the restart budget burns instead.
func failJobOverlaps(c corev1.Container, policy *batchv1.PodFailurePolicy, path *field.Path) []string {
	byRule := map[int][]int32{}
	var order []int
	for code := int32(1); code <= sidecar.MaxExitCode; code++ {
		rule, fails := sidecar.FailJobRule(c.Name, policy, code)
		if _, restarts := sidecar.MatchingRestartRule(c, code); !fails || !restarts {
			continue
		}
		if _, seen := byRule[rule]; !seen {
			order = append(order, rule)
		}
		byRule[rule] = append(byRule[rule], code)
	}
	var warnings []string
	for _, rule := range order {
		codes := byRule[rule]
		what := "exit code"
		if len(codes) > 1 {
			what = "exit codes"
		}
		warnings = append(warnings, fmt.Sprintf("%s: restarts the Pod in place on %s %s, which podFailurePolicy.rules[%d] maps to FailJob, so the Job never fails on it and the JobSet's failure policy never sees it; leave it out of the rule, for example %s",
			path.Child("restartPolicyRules"), what, codeRanges(codes), rule, describeFix(sidecar.WorkerRestartRules(c.Name, policy))))
	}
	return warnings
}

// describeFix renders a restart rule as YAML users can paste.
func describeFix(rules []corev1.ContainerRestartRule) string {
	if len(rules) == 0 {
		return "no rule at all: podFailurePolicy fails the Job on every non-zero exit"
	}
	var values []string
	for _, v := range rules[0].ExitCodes.Values {
		values = append(values, strconv.Itoa(int(v)))
	}
	return fmt.Sprintf("{action: %s, exitCodes: {operator: %s, values: [%s]}}",
		rules[0].Action, rules[0].ExitCodes.Operator, strings.Join(values, ", "))
}

// probeGivesUpAfter is how long a startup probe that keeps failing lasts
// before the kubelet kills its container (timeouts aside).
func probeGivesUpAfter(p *corev1.Probe) time.Duration {
	return time.Duration(int64(p.InitialDelaySeconds)+int64(probePeriod(p))*int64(probeThreshold(p))) * time.Second
}

// probePeriod and probeThreshold apply the API's defaults (10 s, 3).
func probePeriod(p *corev1.Probe) int32 {
	if p.PeriodSeconds == 0 {
		return 10
	}
	return p.PeriodSeconds
}

func probeThreshold(p *corev1.Probe) int32 {
	if p.FailureThreshold == 0 {
		return 3
	}
	return p.FailureThreshold
}
