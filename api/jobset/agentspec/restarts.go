package agentspec

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
)

// A restart of the worker's process (the process tier) moves no
// container's restartCount: the kubelet never sees it. So each agent
// writes, with every join of a new epoch, how its Pod came to join it and
// how many times the Pod's worker restarted in place by each tier
// (WorkerRestartsAnnotation). The agent knows the tier from its own
// history, not from the Pod's status: an agent that stopped its worker
// through the wrapper and joins again restarted the worker's process; a
// new agent whose Pod's state directory (EnvStateDir) holds a predecessor's
// join had its containers restarted; any other is the first agent of a
// new Pod. The kubelet's status would tell the last two apart too late:
// the Pod tier's new agent joins before the kubelet reports the restarted
// containers.
//
// The annotation is a report: the controller counts it in its events and
// metrics, and decides nothing on it.

// WorkerRestartsAnnotation is the Pod annotation through which an agent
// reports its Pod's worker restarts, with each join of a new epoch.
const WorkerRestartsAnnotation = "jobset.sigs.k8s.io/worker-restarts"

// Tier is how a Pod came to join an epoch.
type Tier string

const (
	// TierProcess: the agent stopped the worker's process through the
	// wrapper; the Pod's containers kept running.
	TierProcess Tier = "process"
	// TierPod: the kubelet restarted the Pod's containers.
	TierPod Tier = "pod"
	// TierNew: the first join of a new Pod's agent.
	TierNew Tier = "new"
)

// The grammar of WorkerRestartsAnnotation's value, shared by the agent
// (String), the controller (ParseWorkerRestarts) and the agent's admission
// policy (WorkerRestartsPattern, in CEL, which also requires the epoch the
// value names to be the one the patch joins):
//
//	process=<n>,pod=<n>,epoch=<e>,tier=<process|pod|new>
//
// n a canonical count from 0 to MaxWorkerRestarts, e an epoch
// (EpochPattern). For example "process=3,pod=1,epoch=7,tier=process": the
// Pod joined epoch 7 by restarting its worker's process; in all, its worker
// restarted 3 times that way and once with its containers.
const (
	WorkerRestartsPattern = `^process=(0|[1-9][0-9]{0,8}),pod=(0|[1-9][0-9]{0,8}),epoch=([1-9][0-9]{0,9}),tier=(process|pod|new)$`
	// MaxWorkerRestarts is the largest count: nine digits, so that the
	// pattern alone bounds it within an int32.
	MaxWorkerRestarts = 999999999
)

var workerRestartsPattern = regexp.MustCompile(WorkerRestartsPattern)

// WorkerRestarts is a WorkerRestartsAnnotation value: the worker's restarts
// in place by tier, and how the Pod joined Epoch.
type WorkerRestarts struct {
	Process, Pod int32
	Epoch        int32
	Tier         Tier
}

// ParseWorkerRestarts reads a WorkerRestartsAnnotation value. The error
// says what is wrong with it.
func ParseWorkerRestarts(value string) (WorkerRestarts, error) {
	m := workerRestartsPattern.FindStringSubmatch(value)
	if m == nil {
		return WorkerRestarts{}, errors.New(`not "process=<n>,pod=<n>,epoch=<epoch>,tier=<process|pod|new>"`)
	}
	e, err := ParseEpoch(m[3])
	if err != nil {
		return WorkerRestarts{}, fmt.Errorf("epoch %q: %w", m[3], err)
	}
	process, _ := strconv.ParseInt(m[1], 10, 32)
	pod, _ := strconv.ParseInt(m[2], 10, 32)
	return WorkerRestarts{Process: int32(process), Pod: int32(pod), Epoch: e, Tier: Tier(m[4])}, nil
}

// String writes r as WorkerRestartsAnnotation's value.
func (r WorkerRestarts) String() string {
	return fmt.Sprintf("process=%d,pod=%d,epoch=%s,tier=%s", r.Process, r.Pod, FormatEpoch(r.Epoch), r.Tier)
}

// Joined is r after the Pod joined epoch by tier: a restart of that tier
// counted (up to MaxWorkerRestarts).
func (r WorkerRestarts) Joined(epoch int32, tier Tier) WorkerRestarts {
	count := func(n *int32) {
		if *n < MaxWorkerRestarts {
			*n++
		}
	}
	switch tier {
	case TierProcess:
		count(&r.Process)
	case TierPod:
		count(&r.Pod)
	}
	r.Epoch, r.Tier = epoch, tier
	return r
}
