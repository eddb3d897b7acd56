package report

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// WriteStatus writes the status as kubectl's tables do: a header of
// fields, the conditions, then one row per member. now dates "since".
func WriteStatus(out io.Writer, s Status, now time.Time) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "JobSet:\t%s/%s\n", s.Namespace, s.Name)
	fmt.Fprintf(w, "Restart strategy:\t%s\n", s.RestartStrategy)
	if len(s.Groups) > 0 {
		fmt.Fprintf(w, "In-place group:\t%s (the JobSet's groups: %s)\n", cmp.Or(s.Group, `""`), strings.Join(s.Groups, ", "))
	}
	fmt.Fprintf(w, "Epochs:\tsynced %d, deprecated %d\n", s.Synced, s.Deprecated)
	state := s.State
	if s.GatheringSince != nil {
		state += fmt.Sprintf(" (for %s)", now.Sub(*s.GatheringSince).Round(time.Second))
	}
	fmt.Fprintf(w, "State:\t%s\n", state)
	b := s.Budget
	fmt.Fprintf(w, "Restart budget:\t%d of %d used (%d full, %d of one Job, %d in place): %d left\n",
		b.Used, b.MaxRestarts, b.FullRestarts, b.OneJobRestarts, b.InPlaceRestarts, b.Left)
	if s.Decision != "" {
		fmt.Fprintf(w, "Controller's next step:\t%s\n", s.Decision)
	}
	if s.MissingPods > 0 {
		fmt.Fprintf(w, "Missing Pods:\t%d expected Pods do not exist (see the Jobs' events)\n", s.MissingPods)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(s.Conditions) > 0 {
		fmt.Fprintln(out)
		w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "CONDITION\tREASON\tSINCE\tMESSAGE")
		for _, c := range s.Conditions {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", c.Type, c.Reason, c.Since.Format(time.RFC3339), oneLine(c.Message))
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(out)
	w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "POD\tINDEX\tNODE\tEPOCH\tWORKER RESTARTS\tSTATE\tWHY")
	for _, m := range s.Members {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Pod, dash(m.Index), dash(m.Node), dash(m.Epoch), workerRestarts(m.WorkerRestarts), m.State, oneLine(m.Why))
	}
	if len(s.Members) == 0 {
		fmt.Fprintln(w, "(no Pods of the current restart attempt)\t\t\t\t\t\t")
	}
	return w.Flush()
}

// WriteTimeline writes each restart's phases, oldest restart first, with
// the time since its deprecation.
func WriteTimeline(out io.Writer, restarts []Restart) error {
	if len(restarts) == 0 {
		_, err := fmt.Fprintln(out, "No group restart found (events are kept for an hour by default; the JobSet's InPlaceRestarting condition keeps the latest).")
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "RESTART\tTIME\tAFTER\tCLOCK\tPHASE\tPOD\tDETAIL")
	for _, r := range restarts {
		for _, p := range r.Phases {
			after := "-"
			if d := r.Since(p); d != 0 || p.Phase == PhaseDeprecated {
				after = fmt.Sprintf("%+.3fs", d.Seconds())
			}
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Number, p.Time.Format("2006-01-02T15:04:05.000Z07:00"), after, p.Clock, p.Phase, dash(p.Pod), oneLine(p.Detail))
		}
		if r.InProgress {
			fmt.Fprintf(w, "%d\t-\t-\t-\tInProgress\t-\tthe group has not synced yet: see kubectl jobset status\n", r.Number)
		}
	}
	return w.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine keeps a table row on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// workerRestarts is a member's worker restarts by tier, as its agent last
// reported them: "3 process, 1 pod", or "-" without a report.
func workerRestarts(r *agentspec.WorkerRestarts) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%d process, %d pod", r.Process, r.Pod)
}
