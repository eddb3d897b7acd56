package main

import (
	"github.com/fastjobset/jobset/tools/bench/internal/summary"
)

// result is one configuration's runs.
type result struct {
	way     way
	fault   string
	workers int
	runs    []runResult
}

func (w way) adminLabel() string {
	if w.admin {
		return "out-of-service-taint"
	}
	return "none"
}

// print writes the run's line: bench=node-loss-run.
func (r runResult) print(w way, fault string, workers, run int) {
	kv := []any{"way", w.name, "admin", w.adminLabel(), "fault", fault, "workers", workers, "run", run,
		"node", r.node, "lost_ranks", r.lostRanks, "lost_per_job", r.lostPerJob, "recovered", boolInt(r.recovered)}
	if r.recovered {
		kv = append(kv, "seconds", r.seconds)
	} else {
		kv = append(kv, "waited_s", r.waited)
	}
	for _, m := range milestones {
		if v, ok := r.at[m]; ok {
			kv = append(kv, m, v)
		}
	}
	kv = append(kv, r.oldWorkerFields(fault)...)
	kv = append(kv, "back_s", r.back, "wall_s", r.wall)
	summary.Print("node-loss-run", kv...)
}

// oldWorkerFields are what the node's containerd showed: for a node cut
// off the fence (from the fault), for a frozen one the thawed worker's run
// (from the thaw), for one whose kubelet alone stopped the worker's stop
// by its agent (from the fault; the process tier), and for each the ranks
// that ran twice.
// stoppedField names what the old workers' stop measures for the fault:
// the fence of a node cut off, the thawed worker's run of a frozen one, the
// agent's stop of the worker where the kubelet alone stopped.
func stoppedField(fault string) string {
	switch fault {
	case freeze:
		return "thawed_worker_ran_s"
	case kubelet:
		return "worker_stopped_s"
	}
	return "fence_s"
}

func (r runResult) oldWorkerFields(fault string) []any {
	o := r.workers
	if o == nil {
		return nil
	}
	name := stoppedField(fault)
	var kv []any
	if o.allStopped {
		kv = append(kv, name, o.stopped)
		if s, ok := r.at[synced]; ok && cutOff(fault) {
			kv = append(kv, "fenced_before_sync_s", s-o.stopped)
		}
	} else {
		kv = append(kv, name, "none")
	}
	kv = append(kv, "ran_twice", o.ranTwice)
	if o.ranTwice > 0 {
		kv = append(kv, "ran_twice_overlap_s", o.overlap)
	}
	return kv
}

// print writes the configuration's summary line: medians over the runs
// that recovered, and how many of the runs did.
func (res result) print() {
	var totals, fences, beforeSync []float64
	recovered, ranTwice := 0, 0
	// watched: the node's containerd was polled (runOnce decides for which
	// faults and ways).
	watched := false
	phases := map[string][]float64{}
	lost, perJob := 0, 0
	for _, r := range res.runs {
		lost, perJob = max(lost, r.lostRanks), max(perJob, r.lostPerJob)
		if r.recovered {
			recovered++
			totals = append(totals, r.seconds)
		}
		for m, v := range r.at {
			phases[m] = append(phases[m], v)
		}
		if r.workers != nil {
			watched = true
			if r.workers.allStopped {
				fences = append(fences, r.workers.stopped)
				if s, ok := r.at[synced]; ok {
					beforeSync = append(beforeSync, s-r.workers.stopped)
				}
			}
			if r.workers.ranTwice > 0 {
				ranTwice++
			}
		}
	}
	kv := []any{"way", res.way.name, "admin", res.way.adminLabel(), "fault", res.fault, "workers", res.workers}
	if recovered > 0 {
		kv = append(kv, "p50_s", summary.Percentile(totals, 50), "p90_s", summary.Percentile(totals, 90))
	} else {
		kv = append(kv, "p50_s", "none")
	}
	kv = append(kv, "runs", len(res.runs), "recovered", recovered, "lost_ranks", lost, "lost_per_job", perJob)
	for _, m := range milestones {
		if len(phases[m]) > 0 {
			kv = append(kv, m, summary.Percentile(phases[m], 50))
		}
	}
	if len(fences) > 0 {
		kv = append(kv, stoppedField(res.fault), summary.Percentile(fences, 50))
		if cutOff(res.fault) && len(beforeSync) > 0 {
			kv = append(kv, "fenced_before_sync_s", summary.Percentile(beforeSync, 50))
		}
	}
	if watched {
		kv = append(kv, "runs_ran_twice", ranTwice)
	}
	summary.Print("node-loss", kv...)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
