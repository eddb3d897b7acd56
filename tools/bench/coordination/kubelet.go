package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/fastjobset/jobset/api/jobset/agentspec/sidecar"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// The kubelet stand-in: for every Pod, the Pod status updates a real
// kubelet (1.37, RestartAllContainers) writes while it restarts the Pod in
// place, written by the Pod's node's own client (its own TLS connection,
// authenticated as system:node:<node> with a client certificate, as a
// kubelet is). What the kubelet does to containers takes no time here (B1
// measures it on a real kubelet); its API writes are all there:
//
//  1. the exit it noticed: the container that exited Terminated with its
//     code, and the condition AllContainersRestarting True;
//  2. every container removed: Waiting (RestartingAllContainers), its last
//     termination RestartingAllContainers with code 137, restartCount + 1,
//     the condition back to False;
//  3. the agent sidecar started again (Running, not yet Started), which
//     the kubelet sees only at its next relist of the container runtime
//     (its generic PLEG's, every second): until then, what it posted last
//     is step 2, although it started the agent right after it;
//  4. the agent's startup probe passed (its barrier lifted): the agent
//     Started and Ready;
//  5. the workers started: Running, Ready.
//
// As in the kubelet's status manager, a Pod's updates are written one at a
// time in order, and updates that pile up while one is in flight are merged
// into the latest, except the first (the exit), which the kubelet's status
// manager has already sent before it kills the containers. Each write is a
// strategic merge patch of pods/status from the last status written, with
// the Pod's UID as precondition (the kubelet's statusutil.PatchPodStatus).

// Pod conditions and reasons the kubelet writes (pkg/kubelet/status).
const (
	reasonRestartAllContainersStarted = "RestartAllContainersStarted"
	reasonPodInitializing             = "PodInitializing"
	podReadyToStartContainers         = corev1.PodConditionType("PodReadyToStartContainers")
)

// runningStatus is a Pod's status once every container runs and is ready:
// what the harness starts from.
func runningStatus(spec *corev1.PodSpec, at metav1.Time) corev1.PodStatus {
	s := corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &at, QOSClass: sidecar.QOSClass(*spec)}
	for _, t := range []corev1.PodConditionType{podReadyToStartContainers, corev1.PodInitialized, corev1.PodReady,
		corev1.ContainersReady, corev1.PodScheduled, jobset.PodConditionAllContainersRestarting} {
		status := corev1.ConditionTrue
		if t == jobset.PodConditionAllContainersRestarting {
			status = corev1.ConditionFalse
		}
		s.Conditions = append(s.Conditions, corev1.PodCondition{Type: t, Status: status, LastTransitionTime: at})
	}
	for _, c := range spec.InitContainers {
		if sidecarContainer(c) {
			s.InitContainerStatuses = append(s.InitContainerStatuses, runningContainer(c, at))
		} else {
			s.InitContainerStatuses = append(s.InitContainerStatuses, completedContainer(c.Name, c.Image, at))
		}
	}
	for _, c := range spec.Containers {
		s.ContainerStatuses = append(s.ContainerStatuses, runningContainer(c, at))
	}
	return s
}

// sidecarContainer: an init container that runs beside the others (the
// agent), not one that runs to completion before them (the worker
// wrapper's installer).
func sidecarContainer(c corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// completedContainer is an init container that ran to completion.
func completedContainer(name, image string, at metav1.Time) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Image: image, ImageID: image, ContainerID: "containerd://" + name, Started: ptrTo(false),
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", StartedAt: at, FinishedAt: at, ContainerID: "containerd://" + name}}}
}

func runningContainer(c corev1.Container, at metav1.Time) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: c.Image, ContainerID: "containerd://" + c.Name,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}},
		Ready: true, Started: ptrTo(true)}
}

func ptrTo[T any](v T) *T { return &v }

// exited is step 1: container name exited with code, which a
// RestartAllContainers rule acts on.
func exited(s corev1.PodStatus, name string, code int32, at metav1.Time) corev1.PodStatus {
	s = *s.DeepCopy()
	forEachContainer(&s, func(c *corev1.ContainerStatus) {
		if c.Name != name {
			return
		}
		var started metav1.Time
		if c.State.Running != nil {
			started = c.State.Running.StartedAt
		}
		reason := "Error"
		if code == 0 {
			reason = "Completed"
		}
		c.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, StartedAt: started, FinishedAt: at, ContainerID: c.ContainerID}}
		c.Ready, c.Started = false, ptrTo(false)
	})
	setCondition(&s, jobset.PodConditionAllContainersRestarting, corev1.ConditionTrue, reasonRestartAllContainersStarted, at)
	setCondition(&s, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", at)
	setCondition(&s, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady", at)
	return s
}

// removed is step 2: the kubelet removed every container to start them
// all again (pkg/kubelet/kubelet_pods.go, convertToAPIContainerStatuses).
func removed(s corev1.PodStatus, at metav1.Time) corev1.PodStatus {
	s = *s.DeepCopy()
	forEachContainer(&s, func(c *corev1.ContainerStatus) {
		if c.State.Waiting != nil {
			return
		}
		const message = "The container is removed because RestartAllContainers in place"
		c.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: jobset.ReasonRestartingAllContainers, Message: message}}
		c.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Reason: jobset.ReasonRestartingAllContainers, Message: message, ExitCode: 137}}
		c.RestartCount++
		c.Ready, c.Started, c.ContainerID = false, ptrTo(false), ""
	})
	setCondition(&s, jobset.PodConditionAllContainersRestarting, corev1.ConditionFalse, "", at)
	setCondition(&s, corev1.PodInitialized, corev1.ConditionFalse, "ContainersNotInitialized", at)
	return s
}

// agentRunning is step 3: the agent sidecar runs again; the workers wait
// for its startup probe. Once the kubelet has seen it, later relists
// change nothing.
func agentRunning(s corev1.PodStatus, agent string, at metav1.Time) corev1.PodStatus {
	for _, c := range s.InitContainerStatuses {
		if c.Name == agent && c.State.Running != nil {
			return s
		}
	}
	s = *s.DeepCopy()
	for i := range s.InitContainerStatuses {
		if c := &s.InitContainerStatuses[i]; c.Name == agent {
			c.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}}
			c.ContainerID = "containerd://" + c.Name
		}
	}
	for i := range s.ContainerStatuses {
		s.ContainerStatuses[i].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reasonPodInitializing}}
	}
	return s
}

// agentStarted is step 4: the agent's startup probe passed (its barrier
// lifted).
func agentStarted(s corev1.PodStatus, agent string, at metav1.Time) corev1.PodStatus {
	s = *s.DeepCopy()
	for i := range s.InitContainerStatuses {
		if c := &s.InitContainerStatuses[i]; c.Name == agent {
			c.Ready, c.Started = true, ptrTo(true)
		}
	}
	setCondition(&s, corev1.PodInitialized, corev1.ConditionTrue, "", at)
	return s
}

// workersRunning is step 5: the workers run again; the Pod is ready.
func workersRunning(s corev1.PodStatus, at metav1.Time) corev1.PodStatus {
	s = *s.DeepCopy()
	for i := range s.ContainerStatuses {
		c := &s.ContainerStatuses[i]
		c.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}}
		c.Ready, c.Started, c.ContainerID = true, ptrTo(true), "containerd://"+c.Name
	}
	setCondition(&s, corev1.PodReady, corev1.ConditionTrue, "", at)
	setCondition(&s, corev1.ContainersReady, corev1.ConditionTrue, "", at)
	return s
}

// relistPeriod is the kubelet's generic PLEG's: how often it lists the
// container runtime's containers, and so how late it may see one start.
const relistPeriod = time.Second

// untilRelist is how long node's kubelet takes, from now, to its next
// relist. The nodes' relists are spread over the period, as kubelets
// started at different times are.
func untilRelist(node int, now time.Time) time.Duration {
	const golden = 0.6180339887498949
	phase := time.Duration(math.Mod(float64(node)*golden, 1) * float64(relistPeriod))
	since := (time.Duration(now.UnixNano()) - phase) % relistPeriod
	if since < 0 {
		since += relistPeriod
	}
	return relistPeriod - since
}

func forEachContainer(s *corev1.PodStatus, f func(*corev1.ContainerStatus)) {
	for i := range s.InitContainerStatuses {
		f(&s.InitContainerStatuses[i])
	}
	for i := range s.ContainerStatuses {
		f(&s.ContainerStatuses[i])
	}
}

// setCondition sets a condition's status, moving its transition time only
// when the status changes, as the kubelet's status manager does.
func setCondition(s *corev1.PodStatus, t corev1.PodConditionType, status corev1.ConditionStatus, reason string, at metav1.Time) {
	for i := range s.Conditions {
		c := &s.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = at
		}
		c.Status, c.Reason = status, reason
		if reason == reasonRestartAllContainersStarted {
			c.Message = "container exited with restart policy rule"
		} else {
			c.Message = ""
		}
		return
	}
	s.Conditions = append(s.Conditions, corev1.PodCondition{Type: t, Status: status, Reason: reason, LastTransitionTime: at})
}

// statusPatch is the kubelet's patch from one status to the next, with the
// UID as precondition (pkg/util/pod.PatchPodStatus).
func statusPatch(uid types.UID, from, to corev1.PodStatus) ([]byte, error) {
	old, err := json.Marshal(corev1.Pod{Status: from})
	if err != nil {
		return nil, err
	}
	next, err := json.Marshal(corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: to})
	if err != nil {
		return nil, err
	}
	return strategicpatch.CreateTwoWayMergePatch(old, next, corev1.Pod{})
}

// podStatusWriter writes one Pod's status for its kubelet: updates in
// order, one at a time, merged while one is in flight (see above).
type podStatusWriter struct {
	pods     corev1client.PodInterface
	name     string
	uid      types.UID
	requests *atomic.Int64

	mu sync.Mutex
	// written is the status last written; latest the status last set.
	written, latest corev1.PodStatus
	// pending are the updates not yet taken for writing: a kept one
	// first, then the latest.
	pending []update
	busy    bool
	idle    *sync.Cond
	err     error
}

type update struct {
	status corev1.PodStatus
	// keep: not merged into a later update.
	keep bool
}

func newPodStatusWriter(pods corev1client.PodInterface, name string, uid types.UID, written corev1.PodStatus, requests *atomic.Int64) *podStatusWriter {
	w := &podStatusWriter{pods: pods, name: name, uid: uid, written: written, latest: written, requests: requests}
	w.idle = sync.NewCond(&w.mu)
	return w
}

// set queues the next status, computed from the latest one.
func (w *podStatusWriter) set(ctx context.Context, keep bool, next func(corev1.PodStatus) corev1.PodStatus) {
	w.mu.Lock()
	status := next(w.latest)
	if apiequality.Semantic.DeepEqual(status, w.latest) {
		w.mu.Unlock()
		return
	}
	w.latest = status
	u := update{status: status, keep: keep}
	if n := len(w.pending); n > 0 && !w.pending[n-1].keep {
		w.pending[n-1] = u
	} else {
		w.pending = append(w.pending, u)
	}
	start := !w.busy
	w.busy = true
	w.mu.Unlock()
	if start {
		go w.run(ctx)
	}
}

func (w *podStatusWriter) run(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.pending) > 0 && ctx.Err() == nil {
		u := w.pending[0]
		w.pending = w.pending[1:]
		from := w.written
		w.mu.Unlock()
		err := w.write(ctx, from, u.status)
		w.mu.Lock()
		switch {
		case err == nil:
			w.written, w.err = u.status, nil
		case u.keep || len(w.pending) == 0:
			// As the kubelet: the next sync tries again (a later
			// update supersedes one that need not be kept).
			w.pending = append([]update{u}, w.pending...)
			if w.err == nil {
				w.err = err
			}
		}
	}
	w.busy = false
	w.idle.Broadcast()
}

func (w *podStatusWriter) write(ctx context.Context, from, to corev1.PodStatus) error {
	patch, err := statusPatch(w.uid, from, to)
	if err != nil {
		return err
	}
	w.requests.Add(1)
	if _, err := w.pods.Patch(ctx, w.name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		if ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
		}
		return fmt.Errorf("kubelet: patching the status of Pod %s: %w", w.name, err)
	}
	return nil
}

// wait returns once every queued update is written, or the error of the
// last write that failed since.
func (w *podStatusWriter) wait() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.busy {
		w.idle.Wait()
	}
	return w.err
}

// What a kubelet writes for a Pod outside a restart in place: the start of
// a Pod bound to its node (every Pod's first, and Recreate's new Pods) in
// three updates, as its status manager posts them:
//
//  1. accepted: Pending, the sandbox ready, every container being created;
//  2. the agent sidecar running and past its startup probe: Initialized;
//  3. the workers running: Running, Ready;
//
// and the end of a Pod that is being deleted, or whose worker failed under
// restartPolicy Never: every container stopped and the Pod Failed, which
// the kubelet follows, for a deleted Pod, with the final delete.

// accepted is step 1 of a Pod's start.
func accepted(s corev1.PodStatus, spec *corev1.PodSpec, at metav1.Time) corev1.PodStatus {
	s = *s.DeepCopy()
	s.Phase, s.StartTime, s.QOSClass = corev1.PodPending, &at, sidecar.QOSClass(*spec)
	setCondition(&s, podReadyToStartContainers, corev1.ConditionTrue, "", at)
	setCondition(&s, corev1.PodInitialized, corev1.ConditionFalse, "ContainersNotInitialized", at)
	setCondition(&s, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", at)
	setCondition(&s, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady", at)
	waiting := func(c corev1.Container) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: c.Name, Image: c.Image, Started: ptrTo(false),
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reasonPodInitializing}}}
	}
	s.InitContainerStatuses, s.ContainerStatuses = nil, nil
	for _, c := range spec.InitContainers {
		s.InitContainerStatuses = append(s.InitContainerStatuses, waiting(c))
	}
	for _, c := range spec.Containers {
		s.ContainerStatuses = append(s.ContainerStatuses, waiting(c))
	}
	return s
}

// initialized is step 2: the init containers that run to completion ahead
// of the agent (the worker wrapper's installer) completed, and the agent
// runs and passed its startup probe.
func initialized(s corev1.PodStatus, agent string, at metav1.Time) corev1.PodStatus {
	s = *s.DeepCopy()
	for i := range s.InitContainerStatuses {
		if c := &s.InitContainerStatuses[i]; c.Name != agent && c.State.Terminated == nil {
			*c = completedContainer(c.Name, c.Image, at)
		}
	}
	return agentStarted(agentRunning(s, agent, at), agent, at)
}

// running is step 3: the workers run, and the Pod with them.
func running(s corev1.PodStatus, at metav1.Time) corev1.PodStatus {
	s = workersRunning(s, at)
	s.Phase = corev1.PodRunning
	return s
}

// stopped is the end of a Pod: the container named (every running one if
// name is empty) exited with code, and the Pod Failed once none runs.
func stopped(s corev1.PodStatus, name string, code int32, at metav1.Time) corev1.PodStatus {
	s = *s.DeepCopy()
	stillRunning := false
	forEachContainer(&s, func(c *corev1.ContainerStatus) {
		if name != "" && c.Name != name {
			stillRunning = stillRunning || c.State.Running != nil
			return
		}
		if c.State.Terminated != nil {
			return
		}
		var started metav1.Time
		if c.State.Running != nil {
			started = c.State.Running.StartedAt
		}
		c.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: "Error", StartedAt: started, FinishedAt: at, ContainerID: c.ContainerID}}
		c.Ready, c.Started = false, ptrTo(false)
	})
	setCondition(&s, corev1.PodReady, corev1.ConditionFalse, "PodFailed", at)
	setCondition(&s, corev1.ContainersReady, corev1.ConditionFalse, "PodFailed", at)
	if !stillRunning {
		s.Phase = corev1.PodFailed
		setCondition(&s, podReadyToStartContainers, corev1.ConditionFalse, "", at)
	}
	return s
}
