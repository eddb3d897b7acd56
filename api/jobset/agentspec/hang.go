package agentspec

import (
	"fmt"
	"time"
)

// Hang detection (docs/user-guide.md, "Hung workers"). A worker under the
// wrapper reports progress by touching ProgressFile (its path is in the
// worker's EnvProgressFile); the agent, which mounts the same volume,
// declares the worker hung when the JobSet's timeouts run out without a
// report, stops it and restarts the group in place.
const (
	// FirstProgressTimeoutAnnotation, on a JobSet, bounds the time from a
	// worker's start to its first progress report: long enough to load a
	// checkpoint and build the first step. Without it, a worker that has
	// never reported progress is never declared hung.
	FirstProgressTimeoutAnnotation = "jobset.sigs.k8s.io/first-progress-timeout"
	// ProgressTimeoutAnnotation, on a JobSet, bounds the time between two
	// progress reports once the worker has reported one.
	ProgressTimeoutAnnotation = "jobset.sigs.k8s.io/progress-timeout"

	// HungAnnotation is the Pod annotation through which an agent reports
	// that it stopped its worker for making no progress in the epoch it
	// names: written with its join of the next epoch, naming the epoch the
	// Pod showed (the admission policy admits no other value), so that the
	// controller gives the group restart the reason Hang.
	HungAnnotation = "jobset.sigs.k8s.io/hung"

	// EnvProgressFile names, in the wrapped worker's container, the file
	// whose modification time is the worker's last progress report.
	EnvProgressFile = "JOBSET_PROGRESS_FILE"
	// ProgressFileName is the progress file's name beside the wrapper's
	// control socket; ProgressFile its path as injection mounts it.
	ProgressFileName = "progress"
	ProgressFile     = WrapperMountPath + "/" + ProgressFileName
)

// MinHangTimeout is the least timeout a JobSet may set: the agent looks
// at the progress file every HangTick, and a shorter bound would turn
// scheduling noise into restarts.
const MinHangTimeout = time.Second

// HangTick is how often an agent looks at its worker's progress.
const HangTick = 250 * time.Millisecond

// HangTimeouts are a JobSet's hang timeouts; zero: not set.
type HangTimeouts struct {
	FirstProgress, Progress time.Duration
}

// Set: at least one timeout is set, so the agent watches for hangs.
func (t HangTimeouts) Set() bool { return t.FirstProgress > 0 || t.Progress > 0 }

// HangTimeoutError names the annotation whose value is not a timeout.
type HangTimeoutError struct {
	Annotation, Value, Problem string
}

func (e HangTimeoutError) Error() string {
	return fmt.Sprintf("annotation %s: %q %s", e.Annotation, e.Value, e.Problem)
}

// ParseHangTimeouts reads a JobSet's hang timeouts from its annotations:
// durations as Go writes them ("90s", "10m", "1h30m"), each at least
// MinHangTimeout. A value that is not one is an error, and reads as not
// set.
func ParseHangTimeouts(annotations map[string]string) (HangTimeouts, []HangTimeoutError) {
	var t HangTimeouts
	var errs []HangTimeoutError
	for _, a := range []struct {
		key string
		to  *time.Duration
	}{{FirstProgressTimeoutAnnotation, &t.FirstProgress}, {ProgressTimeoutAnnotation, &t.Progress}} {
		raw, ok := annotations[a.key]
		if !ok {
			continue
		}
		d, err := time.ParseDuration(raw)
		switch {
		case err != nil:
			errs = append(errs, HangTimeoutError{a.key, raw, `is not a duration: write one as "90s", "10m" or "1h30m"`})
		case d < MinHangTimeout:
			errs = append(errs, HangTimeoutError{a.key, raw, fmt.Sprintf("is shorter than %s: set a longer timeout, or remove the annotation to turn this check off", MinHangTimeout)})
		default:
			*a.to = d
		}
	}
	return t, errs
}
