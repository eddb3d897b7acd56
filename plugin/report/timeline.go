package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/inplace"
)

// Restart is one group restart, phase by phase.
type Restart struct {
	Number int32 `json:"number"`
	// Trigger is why it started, as the controller said.
	Trigger string `json:"trigger,omitempty"`
	// Deprecated is the epoch it restarted (and every one below); the
	// group gathers at the next one.
	Deprecated int32 `json:"deprecatedEpoch,omitempty"`
	// Synced is the epoch it completed at, 0 while in progress.
	Synced     int32         `json:"syncedEpoch,omitempty"`
	InProgress bool          `json:"inProgress"`
	Took       time.Duration `json:"took,omitempty"`
	// Back says how the members of a completed restart came back, as
	// their agents reported it, when the controller said it.
	Back   *inplace.Tiers `json:"back,omitempty"`
	Phases []Phase        `json:"phases"`
}

// Phase is one step of a group restart.
type Phase struct {
	Time time.Time `json:"time"`
	// Clock says whose clock dated it: the node's (a container's end),
	// the controller's (its decisions) or the API server's (an agent's
	// write of its epoch, to the second).
	Clock  string `json:"clock"`
	Phase  string `json:"phase"`
	Pod    string `json:"pod,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Phases of a group restart, in the order they happen.
const (
	// PhaseFailure: the failing Pod's container ended (node clock).
	PhaseFailure = "Failure"
	// PhaseDeprecated: the controller saw the failure and deprecated the
	// synced epoch: every Pod at it restarts in place.
	PhaseDeprecated = "Deprecated"
	// PhaseEvent: another of the controller's events on the JobSet meanwhile
	// (a node lost, a Pod replaced off its node, a stall).
	PhaseEvent = "Event"
	// PhaseJoined: a member's agent joined the new epoch.
	PhaseJoined = "Joined"
	// PhaseSynced: every live member joined; the workers run again.
	PhaseSynced = "Synced"
)

// Clocks that date phases.
const (
	ClockNode       = "node"
	ClockController = "controller"
	ClockAPIServer  = "apiserver"
)

// ReadTimeline reconstructs the JobSet's last group restarts (at most
// last) from the controller's events on it and its InPlaceRestarting
// condition (which outlives the events), and its Pods' status: when the
// failing Pod's container ended, and when each member joined. A Pod keeps
// only its latest join, so joins show for the latest epoch only.
func ReadTimeline(js *jobset.JobSet, pods []corev1.Pod, events []eventsv1.Event, last int) []Restart {
	byNumber := map[int32]*Restart{}
	restart := func(n int32) *Restart {
		if byNumber[n] == nil {
			byNumber[n] = &Restart{Number: n, InProgress: true}
		}
		return byNumber[n]
	}
	seen := map[string]bool{} // a condition and its event say the same
	record := func(note string, at time.Time) bool {
		r, ok := inplace.ReadRestartNote(note)
		if !ok {
			return false
		}
		key := fmt.Sprintf("%d/%t", r.Restart, r.Completed)
		if seen[key] {
			return true
		}
		seen[key] = true
		x := restart(r.Restart)
		if r.Completed {
			x.Synced, x.InProgress = r.Epoch, false
			detail := fmt.Sprintf("every live Pod joined epoch %d", r.Epoch)
			if r.HasTook {
				x.Took = r.Took
				detail += fmt.Sprintf(" (%.1fs after the deprecation)", r.Took.Seconds())
			}
			if r.HasBack {
				x.Back = &r.Back
				detail += "; " + r.Back.String()
			}
			x.Phases = append(x.Phases, Phase{Time: at, Clock: ClockController, Phase: PhaseSynced, Detail: detail})
			return true
		}
		x.Trigger, x.Deprecated = r.Trigger, r.Epoch
		x.Phases = append(x.Phases, Phase{Time: at, Clock: ClockController, Phase: PhaseDeprecated,
			Detail: fmt.Sprintf("epoch %d and below restart in place: %s", r.Epoch, r.Trigger)})
		return true
	}

	slices.SortStableFunc(events, func(a, b eventsv1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	var others []eventsv1.Event
	for _, e := range events {
		if e.Regarding.UID != js.UID {
			continue
		}
		if !record(e.Note, eventTime(e)) {
			others = append(others, e)
		}
	}
	if c := meta.FindStatusCondition(js.Status.Conditions, string(jobset.JobSetInPlaceRestarting)); c != nil {
		record(c.Message, c.LastTransitionTime.Time)
	}

	numbers := make([]int32, 0, len(byNumber))
	for n := range byNumber {
		numbers = append(numbers, n)
	}
	slices.Sort(numbers)
	if last >= 0 && len(numbers) > last {
		numbers = numbers[len(numbers)-last:]
	}
	out := make([]Restart, 0, len(numbers))
	for i, n := range numbers {
		r := byNumber[n]
		start, end := r.window()
		if i+1 < len(numbers) {
			if next, _ := byNumber[numbers[i+1]].window(); !next.IsZero() && (end.IsZero() || next.Before(end)) {
				end = next
			}
		}
		r.Phases = append(r.Phases, failures(r, pods, start)...)
		r.Phases = append(r.Phases, joins(r, pods)...)
		for _, e := range others {
			if t := eventTime(e); !start.IsZero() && !t.Before(start) && (end.IsZero() || !t.After(end)) {
				r.Phases = append(r.Phases, Phase{Time: t, Clock: ClockController, Phase: PhaseEvent, Pod: relatedPod(e), Detail: e.Reason + ": " + e.Note})
			}
		}
		slices.SortStableFunc(r.Phases, func(a, b Phase) int {
			if c := a.Time.Compare(b.Time); c != 0 {
				return c
			}
			return phaseOrder(a.Phase) - phaseOrder(b.Phase)
		})
		for j := range r.Phases {
			r.Phases[j].Time = r.Phases[j].Time.UTC()
		}
		out = append(out, *r)
	}
	return out
}

// window is when the restart was deprecated and when it synced (zero
// when unknown or not yet).
func (r *Restart) window() (start, end time.Time) {
	for _, p := range r.Phases {
		switch p.Phase {
		case PhaseDeprecated:
			start = p.Time
		case PhaseSynced:
			end = p.Time
		}
	}
	return start, end
}

func phaseOrder(phase string) int {
	return slices.Index([]string{PhaseFailure, PhaseDeprecated, PhaseEvent, PhaseJoined, PhaseSynced}, phase)
}

// failures dates the trigger's failure by the failing Pod's containers:
// the latest non-zero exit at or before the deprecation. The Pod keeps its
// containers' last two states only, so an older restart may show none.
func failures(r *Restart, pods []corev1.Pod, deprecated time.Time) []Phase {
	pod := namedPod(r.Trigger, pods)
	if pod == nil || deprecated.IsZero() {
		return nil
	}
	var latest Phase
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, c := range statuses {
			for _, t := range []*corev1.ContainerStateTerminated{c.State.Terminated, c.LastTerminationState.Terminated} {
				if t == nil || t.ExitCode == 0 || t.FinishedAt.IsZero() || t.FinishedAt.After(deprecated) || !t.FinishedAt.After(latest.Time) {
					continue
				}
				latest = Phase{Time: t.FinishedAt.Time, Clock: ClockNode, Phase: PhaseFailure, Pod: pod.Name,
					Detail: fmt.Sprintf("container %s exited with code %d", c.Name, t.ExitCode)}
			}
		}
	}
	if latest.Phase == "" {
		return nil
	}
	return []Phase{latest}
}

// namedPod finds the Pod a trigger names ("Pod <name> failed", "Pod
// <name>: ...").
func namedPod(trigger string, pods []corev1.Pod) *corev1.Pod {
	rest, ok := strings.CutPrefix(trigger, "Pod ")
	if !ok {
		return nil
	}
	name, _, _ := strings.Cut(rest, " ")
	name = strings.TrimSuffix(name, ":")
	for i := range pods {
		if pods[i].Name == name {
			return &pods[i]
		}
	}
	return nil
}

// joins dates each member's join of the epoch the restart gathered at,
// when that is the member's current epoch.
func joins(r *Restart, pods []corev1.Pod) []Phase {
	if r.Deprecated == 0 && r.Synced == 0 {
		return nil
	}
	target := r.Synced
	if target == 0 {
		target = r.Deprecated + 1
	}
	var out []Phase
	for i := range pods {
		pod := &pods[i]
		if pod.Annotations[jobset.EpochKey] != fmt.Sprint(target) {
			continue
		}
		if at := inplace.EpochWritten(pod); !at.IsZero() {
			out = append(out, Phase{Time: at, Clock: ClockAPIServer, Phase: PhaseJoined, Pod: pod.Name,
				Detail: fmt.Sprintf("joined epoch %d", target) + joinedBy(pod, target)})
		}
	}
	return out
}

// joinedBy says how the Pod came to join epoch, as its agent reported it
// with that join ("" without such a report).
func joinedBy(pod *corev1.Pod, epoch int32) string {
	r, err := agentspec.ParseWorkerRestarts(pod.Annotations[agentspec.WorkerRestartsAnnotation])
	if err != nil || r.Epoch != epoch {
		return ""
	}
	switch r.Tier {
	case agentspec.TierProcess:
		return " by restarting the worker's process"
	case agentspec.TierPod:
		return " by restarting its containers"
	}
	return " as a new Pod"
}

// eventTime is when the event was first seen: eventTime, or the core
// API's firstTimestamp for events written through it.
func eventTime(e eventsv1.Event) time.Time {
	switch {
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.DeprecatedFirstTimestamp.IsZero():
		return e.DeprecatedFirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

func relatedPod(e eventsv1.Event) string {
	if e.Related != nil && e.Related.Kind == "Pod" {
		return e.Related.Name
	}
	return ""
}

// Since is how long after the restart's deprecation a phase came, for
// tables; the zero duration when the deprecation is unknown.
func (r Restart) Since(p Phase) time.Duration {
	start, _ := r.window()
	if start.IsZero() {
		return 0
	}
	return p.Time.Sub(start)
}
