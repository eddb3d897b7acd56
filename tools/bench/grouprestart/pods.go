package main

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/demo/workload"
)

// A group restart in place, Pod by Pod, as its status shows it: when each
// Pod's step was first seen in the API. The gaps say where the time goes:
// the agent's exit to its restart is the kubelet's (it notices the exit,
// kills the Pod's containers, starts the sidecar again); the restart to the
// join the new agent's start (TLS, the watch, the write); the sync to the
// lift the startup probe's period; the lift to the worker the kubelet's
// start of the worker container.
//
// In the process tier no container restarts: a Pod shows its agent's join
// (once its wrapper confirmed the worker stopped), and its worker's start
// is the worker's own record (starts.go), exact where the others are
// dated by the polls.
var podSteps = []string{
	"agent_exited", // the agent container's exit (or already its restart)
	"agent_up",     // the new agent container runs
	"joined",       // the Pod's epoch (attempt, for community's) written
	"lifted",       // the startup probe passed: the barrier lifted
	"worker_up",    // the worker container runs again (process tier: the worker started)
}

// podClock dates each Pod's steps of one in-place restart.
type podClock struct {
	start time.Time
	// annotation is the Pod annotation an agent writes when it joins.
	annotation string
	// process: the process tier, whose agents do not restart.
	process bool
	base    map[string]podBase
	at      map[string]map[string]float64
}

// podBase is a Pod before the restart.
type podBase struct {
	agentRestarts, workerRestarts int32
	joined                        string
}

func newPodClock(strategy string, start time.Time, pods []corev1.Pod) *podClock {
	c := &podClock{start: start, annotation: jobset.EpochKey, process: strategy == process, base: map[string]podBase{}, at: map[string]map[string]float64{}}
	if strategy == community {
		c.annotation = workload.CommunityAttemptAnnotation
	}
	for i := range pods {
		p := &pods[i]
		agent, worker := containerStatus(p.Status.InitContainerStatuses, agentspec.ContainerName), containerStatus(p.Status.ContainerStatuses, "worker")
		c.base[p.Name] = podBase{agentRestarts: agent.RestartCount, workerRestarts: worker.RestartCount, joined: p.Annotations[c.annotation]}
		c.at[p.Name] = map[string]float64{}
	}
	return c
}

// observe dates the steps each Pod shows now.
func (c *podClock) observe(pods []corev1.Pod) {
	now := time.Since(c.start).Seconds()
	for i := range pods {
		p := &pods[i]
		base, known := c.base[p.Name]
		if !known {
			continue
		}
		agent, worker := containerStatus(p.Status.InitContainerStatuses, agentspec.ContainerName), containerStatus(p.Status.ContainerStatuses, "worker")
		restarted := agent.RestartCount > base.agentRestarts
		mark := func(step string, reached bool) {
			if _, done := c.at[p.Name][step]; reached && !done {
				c.at[p.Name][step] = now
			}
		}
		if c.process {
			mark("joined", p.Annotations[c.annotation] != base.joined)
			continue
		}
		mark("agent_exited", restarted || agent.State.Terminated != nil)
		mark("agent_up", restarted && agent.State.Running != nil)
		mark("joined", restarted && p.Annotations[c.annotation] != base.joined)
		mark("lifted", restarted && ptr.Deref(agent.Started, false))
		mark("worker_up", worker.RestartCount > base.workerRestarts && worker.State.Running != nil)
	}
}

// workerStarted dates the worker's start of Pod name at its own record.
func (c *podClock) workerStarted(name string, at time.Time) {
	if steps, known := c.at[name]; known {
		steps["worker_up"] = at.Sub(c.start).Seconds()
	}
}

// steps returns, per step, each Pod's time (the Pods that reached it).
func (c *podClock) steps() map[string][]float64 {
	out := map[string][]float64{}
	for _, at := range c.at {
		for step, v := range at {
			out[step] = append(out[step], v)
		}
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

func containerStatus(statuses []corev1.ContainerStatus, name string) corev1.ContainerStatus {
	for _, s := range statuses {
		if s.Name == name {
			return s
		}
	}
	return corev1.ContainerStatus{}
}
