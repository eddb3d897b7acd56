package jobsetwebhook

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/features"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// maxPodHostnameLength bounds <jobset>-<replicatedJob>-<jobIndex>-<podIndex>,
// a Pod's hostname and DNS label.
const maxPodHostnameLength = validation.DNS1123LabelMaxLength

// Validate checks a JobSet on creation, with the features gates allow.
// Every error names its field and, in its detail, how to fix it.
func Validate(js *jobset.JobSet, gates features.Gates) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	for _, msg := range validation.IsDNS1035Label(js.Name) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), js.Name,
			msg+": JobSet names become Job, Pod and host names"))
	}

	names := sets.New[string]()
	for i, rj := range js.Spec.ReplicatedJobs {
		path := spec.Child("replicatedJobs").Index(i)
		names.Insert(rj.Name)
		for _, msg := range validation.IsDNS1035Label(rj.Name) {
			errs = append(errs, field.Invalid(path.Child("name"), rj.Name, msg+": replicatedJob names become part of Job and Pod names"))
		}
		if longest := podHostname(js.Name, rj); len(longest) > maxPodHostnameLength {
			errs = append(errs, field.Invalid(path.Child("name"), rj.Name,
				fmt.Sprintf("the longest Pod hostname would be %q (%d characters, at most %d): shorten the JobSet or replicatedJob name",
					longest, len(longest), maxPodHostnameLength)))
		}
		for j, dep := range rj.DependsOn {
			if !slices.ContainsFunc(js.Spec.ReplicatedJobs[:i], func(prev jobset.ReplicatedJob) bool { return prev.Name == dep.Name }) {
				errs = append(errs, field.Invalid(path.Child("dependsOn").Index(j).Child("name"), dep.Name,
					"must name a replicatedJob listed before this one"))
			}
		}
	}

	if sp := js.Spec.SuccessPolicy; sp != nil {
		errs = append(errs, validateTargets(sp.TargetReplicatedJobs, names, spec.Child("successPolicy", "targetReplicatedJobs"))...)
	}
	if fp := js.Spec.FailurePolicy; fp != nil {
		errs = append(errs, validateFailurePolicy(fp, names, spec.Child("failurePolicy"))...)
		errs = append(errs, validateOneJobRestarts(js, gates)...)
	}
	errs = append(errs, validateActiveDeadline(js, gates)...)
	if n := js.Spec.Network; n != nil && n.Subdomain != "" {
		for _, msg := range validation.IsDNS1123Subdomain(n.Subdomain) {
			errs = append(errs, field.Invalid(spec.Child("network", "subdomain"), n.Subdomain, msg))
		}
	}
	if c := js.Spec.Coordinator; c != nil {
		errs = append(errs, validateCoordinator(js, c, spec.Child("coordinator"))...)
	}
	if m := js.Spec.ManagedBy; m != nil {
		errs = append(errs, validateManagedBy(*m, spec.Child("managedBy"))...)
	}
	errs = append(errs, validateVolumeClaimPolicies(js, spec)...)
	errs = append(errs, validateHangTimeouts(js)...)
	errs = append(errs, validateInPlaceGroups(js)...)
	if jobset.RestartStrategyOf(js) == jobset.InPlaceRestart {
		errs = append(errs, validateInPlaceRestart(js)...)
	}
	return errs
}

// validateVolumeClaimPolicies: every template has a name that makes a valid
// claim name, used once, and mounted by some container; no replicatedJob
// declares a volume of that name itself (the controller adds it).
func validateVolumeClaimPolicies(js *jobset.JobSet, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	claims := sets.New[string]()
	for i, policy := range js.Spec.VolumeClaimPolicies {
		for j, template := range policy.Templates {
			path := spec.Child("volumeClaimPolicies").Index(i).Child("templates").Index(j).Child("metadata", "name")
			name := template.Name
			switch {
			case name == "":
				errs = append(errs, field.Required(path, "the name of the volume that containers mount; the claim is named <name>-<jobset>"))
				continue
			case claims.Has(name):
				errs = append(errs, field.Duplicate(path, name))
				continue
			}
			claims.Insert(name)
			for _, msg := range validation.IsDNS1123Label(name) {
				errs = append(errs, field.Invalid(path, name, msg+": it is the name of a Pod volume"))
			}
			for _, msg := range validation.IsDNS1123Subdomain(jobset.VolumeClaimName(name, js.Name)) {
				errs = append(errs, field.Invalid(path, name, fmt.Sprintf("the claim name %q: %s: shorten the template or JobSet name",
					jobset.VolumeClaimName(name, js.Name), msg)))
			}
			if !slices.ContainsFunc(js.Spec.ReplicatedJobs, func(rj jobset.ReplicatedJob) bool {
				return jobset.MountsVolume(&rj.Template.Spec.Template.Spec, name)
			}) {
				errs = append(errs, field.Invalid(path, name, fmt.Sprintf(
					"no container of any replicatedJob mounts it: add a volumeMount named %q, or remove the template", name)))
			}
		}
	}
	for i, rj := range js.Spec.ReplicatedJobs {
		for k, v := range rj.Template.Spec.Template.Spec.Volumes {
			if claims.Has(v.Name) {
				errs = append(errs, field.Invalid(
					spec.Child("replicatedJobs").Index(i).Child("template", "spec", "template", "spec", "volumes").Index(k).Child("name"), v.Name,
					"a volumeClaimPolicies template has this name, and the JobSet adds that volume to the Pods that mount it: remove this volume or rename it"))
			}
		}
	}
	return errs
}

// ValidateUpdate checks an update: what Validate checks, ratcheted to what
// the update changes (ratchet.go), plus the immutability of replicatedJobs,
// except the scheduling directives of Pod templates when the JobSet is
// suspended before or after the update. Kueue writes them when it admits a
// suspended JobSet (and resumes it), and restores them in the same update
// that suspends a running JobSet it evicts or preempts; community JobSet
// admits both.
//
// A JobSet being deleted is admitted whatever the update: the garbage
// collector and the controllers remove their finalizers from it, and a
// rejection there hangs the deletion (foreground deletion, TTL, namespace
// deletion). Its spec no longer matters.
func ValidateUpdate(js, old *jobset.JobSet, gates features.Gates) field.ErrorList {
	if beingDeleted(js) || beingDeleted(old) {
		return nil
	}
	errs := ratchet(Validate(js, gates), Validate(old, gates), js, old)
	path := field.NewPath("spec", "replicatedJobs")
	if len(js.Spec.ReplicatedJobs) != len(old.Spec.ReplicatedJobs) {
		return append(errs, field.Forbidden(path, "replicatedJobs cannot be added or removed: create a new JobSet"))
	}
	suspended := ptr.Deref(old.Spec.Suspend, false) || ptr.Deref(js.Spec.Suspend, false)
	// Both compared as this webhook defaults them: the mutating webhook
	// fills today's defaults into every update, and a default added since
	// the JobSet was stored is not a change the update made (the apiserver,
	// too, defaults the objects it reads).
	newDefaulted, oldDefaulted := defaulted(js), defaulted(old)
	for i := range js.Spec.ReplicatedJobs {
		newRJ, oldRJ := &newDefaulted.Spec.ReplicatedJobs[i], &oldDefaulted.Spec.ReplicatedJobs[i]
		if gates.Enabled(features.ElasticJobSet) {
			errs = append(errs, validateElasticScaling(js, old, newRJ, oldRJ, path.Index(i))...)
			// Judged above: the comparison below is of everything else.
			newRJ.Template.Spec.Parallelism, newRJ.Template.Spec.Completions = oldRJ.Template.Spec.Parallelism, oldRJ.Template.Spec.Completions
		}
		if suspended {
			for _, rj := range []*jobset.ReplicatedJob{newRJ, oldRJ} {
				t := &rj.Template.Spec.Template
				t.Labels, t.Annotations = nil, nil
				t.Spec.NodeSelector, t.Spec.Tolerations, t.Spec.SchedulingGates = nil, nil, nil
			}
		}
		if !apiequality.Semantic.DeepEqual(newRJ, oldRJ) {
			detail := "replicatedJobs are immutable: create a new JobSet"
			if suspended {
				detail = "only the labels, annotations, nodeSelector, tolerations and schedulingGates of the Pod template may change, and only in an update that leaves the JobSet suspended or finds it suspended"
			}
			errs = append(errs, field.Forbidden(path.Index(i), detail))
		}
	}
	return errs
}

// defaulted returns a defaulted copy of js.
func defaulted(js *jobset.JobSet) *jobset.JobSet {
	js = js.DeepCopy()
	Default(js)
	return js
}

// beingDeleted reports whether the JobSet has a deletion timestamp: it
// lives on only until its finalizers are removed.
func beingDeleted(js *jobset.JobSet) bool {
	return js.DeletionTimestamp != nil
}

func validateTargets(targets []string, names sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range targets {
		if !names.Has(t) {
			errs = append(errs, field.NotSupported(path.Index(i), t, sets.List(names)))
		}
	}
	return errs
}

func validateFailurePolicy(fp *jobset.FailurePolicy, names sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	ruleNames := sets.New[string]()
	for i, rule := range fp.Rules {
		rulePath := path.Child("rules").Index(i)
		if ruleNames.Has(rule.Name) {
			errs = append(errs, field.Duplicate(rulePath.Child("name"), rule.Name))
		}
		ruleNames.Insert(rule.Name)
		errs = append(errs, validateTargets(rule.TargetReplicatedJobs, names, rulePath.Child("targetReplicatedJobs"))...)
		for j, pattern := range rule.OnJobFailureMessagePatterns {
			if _, err := regexp.Compile(pattern); err != nil {
				errs = append(errs, field.Invalid(rulePath.Child("onJobFailureMessagePatterns").Index(j), pattern,
					"not an RE2 regular expression: "+err.Error()))
			}
		}
	}
	return errs
}

func validateCoordinator(js *jobset.JobSet, c *jobset.Coordinator, path *field.Path) field.ErrorList {
	i := slices.IndexFunc(js.Spec.ReplicatedJobs, func(rj jobset.ReplicatedJob) bool { return rj.Name == c.ReplicatedJob })
	if i < 0 {
		var names []string
		for _, rj := range js.Spec.ReplicatedJobs {
			names = append(names, rj.Name)
		}
		return field.ErrorList{field.NotSupported(path.Child("replicatedJob"), c.ReplicatedJob, names)}
	}
	rj := js.Spec.ReplicatedJobs[i]
	var errs field.ErrorList
	if c.JobIndex < 0 || c.JobIndex >= int(rj.Replicas) {
		errs = append(errs, field.Invalid(path.Child("jobIndex"), c.JobIndex,
			fmt.Sprintf("must be from 0 to %d, the replicas of replicatedJob %q minus one", rj.Replicas-1, rj.Name)))
	}
	if pods := ptr.Deref(rj.Template.Spec.Completions, 1); c.PodIndex < 0 || c.PodIndex >= int(pods) {
		errs = append(errs, field.Invalid(path.Child("podIndex"), c.PodIndex,
			fmt.Sprintf("must be from 0 to %d, the completions of replicatedJob %q minus one", pods-1, rj.Name)))
	}
	return errs
}

// validateManagedBy: a domain-prefixed path, <subdomain>/<path>.
func validateManagedBy(m string, path *field.Path) field.ErrorList {
	domain, rest, ok := strings.Cut(m, "/")
	if !ok || rest == "" || len(validation.IsDNS1123Subdomain(domain)) > 0 {
		return field.ErrorList{field.Invalid(path, m,
			"must be a domain-prefixed path such as example.com/my-controller, or jobset.sigs.k8s.io/jobset-controller for this controller")}
	}
	return nil
}

// podHostname is the longest Pod hostname of a replicatedJob.
func podHostname(jsName string, rj jobset.ReplicatedJob) string {
	return fmt.Sprintf("%s-%s-%d-%d", jsName, rj.Name, max(rj.Replicas-1, 0), max(ptr.Deref(rj.Template.Spec.Completions, 1)-1, 0))
}
