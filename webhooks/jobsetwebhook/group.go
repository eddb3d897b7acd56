package jobsetwebhook

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// The in-place group of an InPlaceRestart JobSet is the set of its
// replicatedJobs whose Pods run the agent: their Pods restart together,
// and the agents' barrier holds every member's workers until every member
// Pod runs. replicatedJobs outside the group (Kubeflow Trainer's dataset
// and model initializers, an MPI launcher) are ordinary Jobs: nobody waits
// for them at the barrier, and their failure goes to the failure policy.
//
// dependsOn holds a Job back until another replicatedJob is Ready or
// Complete. That deadlocks exactly when a member waits, directly or through
// replicatedJobs outside the group, for a member: the awaited member's Pods
// are not Ready (their barrier waits for the held-back member's Pods) and
// never Complete. Every other shape is admitted: a member waiting for an
// initializer outside the group to Complete or be Ready, and a replicatedJob
// outside the group waiting for the group.

// ErrDependsOnDeadlock names the rejection of a dependsOn that would
// deadlock the in-place group's barrier.
const ErrDependsOnDeadlock = "dependsOn deadlocks the in-place group"

// groupMembers lists the replicatedJobs whose Pod template runs the agent.
func groupMembers(js *jobset.JobSet) sets.Set[string] {
	members := sets.New[string]()
	for _, rj := range js.Spec.ReplicatedJobs {
		if sidecar.Index(rj.Template.Spec.Template.Spec) >= 0 {
			members.Insert(rj.Name)
		}
	}
	return members
}

// inDependsOn reports whether the replicatedJob waits for another or
// another waits for it: the shapes in which one runs outside the group.
func inDependsOn(js *jobset.JobSet, name string) bool {
	for _, rj := range js.Spec.ReplicatedJobs {
		if rj.Name == name && len(rj.DependsOn) > 0 {
			return true
		}
		for _, dep := range rj.DependsOn {
			if dep.Name == name {
				return true
			}
		}
	}
	return false
}

// validateGroupDependsOn rejects the dependsOn entries of members that lead
// to a member, naming the chain.
func validateGroupDependsOn(js *jobset.JobSet, members sets.Set[string]) field.ErrorList {
	deps := map[string][]jobset.DependsOn{}
	for _, rj := range js.Spec.ReplicatedJobs {
		deps[rj.Name] = rj.DependsOn
	}
	// chainToMember returns the replicatedJobs from name to the first
	// member it waits for, through non-members, or nil. dependsOn names only
	// earlier replicatedJobs (validated), so the walk ends.
	var chainToMember func(name string, seen sets.Set[string]) []string
	chainToMember = func(name string, seen sets.Set[string]) []string {
		if members.Has(name) {
			return []string{name}
		}
		if seen.Has(name) {
			return nil
		}
		seen.Insert(name)
		for _, d := range deps[name] {
			if chain := chainToMember(d.Name, seen); chain != nil {
				return append([]string{name}, chain...)
			}
		}
		return nil
	}
	var errs field.ErrorList
	for i, rj := range js.Spec.ReplicatedJobs {
		if !members.Has(rj.Name) {
			continue
		}
		for j, d := range rj.DependsOn {
			chain := chainToMember(d.Name, sets.New[string]())
			if chain == nil {
				continue
			}
			how := fmt.Sprintf("%q waits for %q to be %s", rj.Name, d.Name, d.Status)
			if len(chain) > 1 {
				how += fmt.Sprintf(", which waits through dependsOn for the group member %q (%s)", chain[len(chain)-1], strings.Join(append([]string{rj.Name}, chain...), " -> "))
			}
			errs = append(errs, field.Forbidden(
				field.NewPath("spec", "replicatedJobs").Index(i).Child("dependsOn").Index(j),
				fmt.Sprintf("%s: %s; both are in the in-place group (their Pods run the agent), whose barrier holds every member's workers until every member's Pods run, so the awaited member is never Ready nor Complete and the waiting one is never created. Within the group, remove dependsOn (its members start together); a member may wait only for replicatedJobs without the agent (initializers) that wait for no member",
					ErrDependsOnDeadlock, how)))
		}
	}
	return errs
}

// injectable reports whether agent injection makes the replicatedJob a
// member. Left out are the two roles Kubeflow Trainer's runtimes give
// replicatedJobs outside the group: an initializer, which another
// replicatedJob waits for to Complete (it must finish before the others
// start, so it cannot restart with them), and a launcher, which waits for
// another to be Ready (it starts once the group runs).
func injectable(js *jobset.JobSet, rj jobset.ReplicatedJob) bool {
	for _, d := range rj.DependsOn {
		if d.Status == jobset.DependencyReady {
			return false
		}
	}
	for _, other := range js.Spec.ReplicatedJobs {
		for _, d := range other.DependsOn {
			if d.Name == rj.Name && d.Status == jobset.DependencyComplete {
				return false
			}
		}
	}
	return true
}

// maxInPlaceGroups bounds the named groups of a JobSet, as the schema
// bounds status.inPlaceGroups.
const maxInPlaceGroups = 64

// validateInPlaceGroups checks the replicatedJobs that name an in-place
// group: a group restarts its members' Pods in place, so only members
// (Pods that run the agent) of an InPlaceRestart JobSet can name one, by a
// name that can label them.
func validateInPlaceGroups(js *jobset.JobSet) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, rj := range js.Spec.ReplicatedJobs {
		name, ok := rj.Template.Annotations[jobset.InPlaceGroupKey]
		if !ok {
			continue
		}
		path := field.NewPath("spec", "replicatedJobs").Index(i).Child("template", "metadata", "annotations").Key(jobset.InPlaceGroupKey)
		switch {
		case jobset.RestartStrategyOf(js) != jobset.InPlaceRestart:
			errs = append(errs, field.Invalid(path, name,
				"names an in-place group, which only restartStrategy InPlaceRestart has: set spec.failurePolicy.restartStrategy to InPlaceRestart, or remove the annotation"))
			continue
		case sidecar.Index(rj.Template.Spec.Template.Spec) < 0:
			errs = append(errs, field.Invalid(path, name,
				fmt.Sprintf("replicatedJob %s names an in-place group, but its Pods run no agent, so they cannot restart in place: add the agent (or the annotation %s: \"true\" on the JobSet), or remove the annotation", rj.Name, jobset.InjectAgentKey)))
			continue
		}
		for _, msg := range validation.IsDNS1123Label(name) {
			errs = append(errs, field.Invalid(path, name, msg+": the group's name labels its Jobs and Pods"))
		}
		names.Insert(name)
	}
	if names.Len() > maxInPlaceGroups {
		errs = append(errs, field.TooMany(field.NewPath("spec", "replicatedJobs"), names.Len(), maxInPlaceGroups))
	}
	return errs
}
