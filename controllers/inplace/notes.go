package inplace

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// The notes of a group restart's events (InPlaceRestartStarted,
// InPlaceRestartCompleted) and of the InPlaceRestarting condition: written
// here, and read back here by `kubectl jobset timeline`: one grammar for
// both.

// RestartStartedNote says that group restart number restart started, why
// (Decision.Trigger), and which epochs restart in place.
func RestartStartedNote(restart int32, trigger string, deprecated int32) string {
	return fmt.Sprintf("in-place group restart %d started: %s; every Pod at epoch %d or below restarts in place", restart, trigger, deprecated)
}

// FencedRestartStartedNote says that a group restart started that only
// fences caused, which counts toward no budget (fenced is how many such
// restarts the JobSet had, this one included).
func FencedRestartStartedNote(fenced int32, trigger string, deprecated int32) string {
	return fmt.Sprintf("in-place group restart after a fence (%d so far, not counted toward maxRestarts) started: %s; every Pod at epoch %d or below restarts in place", fenced, trigger, deprecated)
}

// FencedRestartCompletedNote says that a group restart that only fences
// caused (the fenced-th) completed at epoch synced.
func FencedRestartCompletedNote(fenced, synced int32) string {
	return fmt.Sprintf("in-place group restart after a fence (%d so far, not counted toward maxRestarts) completed: every live Pod joined epoch %d", fenced, synced)
}

// RestartCompletedNote says that group restart number restart completed
// at epoch synced; RestartCompletedInNote says how long it took too, when
// its start is known.
func RestartCompletedNote(restart, synced int32) string {
	return fmt.Sprintf("in-place group restart %d completed: every live Pod joined epoch %d", restart, synced)
}

// RestartCompletedInNote: see RestartCompletedNote.
func RestartCompletedInNote(restart int32, took time.Duration, synced int32) string {
	return fmt.Sprintf("in-place group restart %d completed in %.1fs: every live Pod joined epoch %d", restart, took.Seconds(), synced)
}

// WithTiers adds to a completion's note how its members came back
// (RestartTiers).
func WithTiers(note string, back Tiers) string {
	return fmt.Sprintf("%s (%s)", note, back)
}

// RestartNote is what a note of RestartStartedNote, RestartCompletedNote
// or RestartCompletedInNote says.
type RestartNote struct {
	Restart int32
	// Completed: the note says the restart completed (else it started).
	Completed bool
	// Epoch is the deprecated epoch of a start, the synced one of a
	// completion.
	Epoch int32
	// Trigger is why a restart started.
	Trigger string
	// Took is how long a completed restart took, when the note says it;
	// HasTook says whether it does.
	Took    time.Duration
	HasTook bool
	// Back is how the members of a completed restart came back, when
	// the note says it (WithTiers); HasBack says whether it does.
	Back    Tiers
	HasBack bool
}

var (
	startedNote   = regexp.MustCompile(`^in-place group restart (\d+) started: (.*); every Pod at epoch (\d+) or below restarts in place$`)
	completedNote = regexp.MustCompile(`^in-place group restart (\d+) completed(?: in ([0-9.]+)s)?: every live Pod joined epoch (\d+)` +
		`(?: \((\d+) by restarting the worker's process, (\d+) by restarting its containers, (\d+) replaced(?:, (\d+) unreported)?\))?$`)
)

// ReadRestartNote reads a note written by RestartStartedNote,
// RestartCompletedNote or RestartCompletedInNote, the last two with or
// without WithTiers; false for any other text.
func ReadRestartNote(note string) (RestartNote, bool) {
	if m := startedNote.FindStringSubmatch(note); m != nil {
		n, errN := strconv.ParseInt(m[1], 10, 32)
		e, errE := strconv.ParseInt(m[3], 10, 32)
		if errN != nil || errE != nil {
			return RestartNote{}, false
		}
		return RestartNote{Restart: int32(n), Epoch: int32(e), Trigger: m[2]}, true
	}
	if m := completedNote.FindStringSubmatch(note); m != nil {
		n, errN := strconv.ParseInt(m[1], 10, 32)
		e, errE := strconv.ParseInt(m[3], 10, 32)
		if errN != nil || errE != nil {
			return RestartNote{}, false
		}
		r := RestartNote{Restart: int32(n), Completed: true, Epoch: int32(e)}
		if m[2] != "" {
			seconds, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				return RestartNote{}, false
			}
			r.Took, r.HasTook = time.Duration(seconds*float64(time.Second)), true
		}
		if m[4] != "" {
			var counts [4]int32
			for i, raw := range m[4:8] {
				if raw == "" {
					continue
				}
				c, err := strconv.ParseInt(raw, 10, 32)
				if err != nil {
					return RestartNote{}, false
				}
				counts[i] = int32(c)
			}
			r.Back, r.HasBack = Tiers{Process: counts[0], Pod: counts[1], Replaced: counts[2], Unreported: counts[3]}, true
		}
		return r, true
	}
	return RestartNote{}, false
}
