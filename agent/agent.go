package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"

	"github.com/fastjobset/jobset/agent/kubeclient"
	"github.com/fastjobset/jobset/agent/wrapper"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

var (
	jobSets = kubeclient.Resource{Group: agentspec.Group, Version: agentspec.Version, Resource: agentspec.Resource}
	pods    = kubeclient.Resource{Version: "v1", Resource: "pods"}
)

// Agent runs the protocol for one Pod.
type Agent struct {
	cfg     Config
	api     *kubeclient.Client
	barrier *barrier
	backoff *backoff
	// denials spaces the joins the API server denies (see join).
	denials  *backoff
	listener net.Listener
	// epoch is the epoch this agent joined; 0 until its patch succeeded.
	// Written only by the goroutine that follows the JobSet; the fence
	// reads it.
	epoch atomic.Int32
	// contact follows the agent's contact with the API server, for the
	// fence (fence.go); nodeLease its node's Lease, when it fences on it
	// too (nil otherwise).
	contact   *contact
	nodeLease *nodeLease
	// rewatch ends the current watch, so that the next one is a fresh
	// round trip; set while a watch is open.
	mu      sync.Mutex
	rewatch context.CancelFunc
	// watchOpening, when set, runs as follow is about to open a watch,
	// after its checks of what ended the last one: a test's way into that
	// moment.
	watchOpening func()
	// view is what the witness role reads of the JobSet (witness.go).
	view jobSetView

	// The witness role: the peers' answers during a silence, the promises
	// this agent made, how it reaches a peer.
	witnesses  witnesses
	promises   *promises
	hostname   string
	peerClient *http.Client
	witnessURL func(host, subdomain string) string
	// peerAddresses dials the peers, with what their names resolved to
	// while the agent was in contact (peer_addresses.go).
	peerAddresses   *peerAddresses
	learnPeersEvery time.Duration

	// worker links the agent with its worker's wrapper; nil without one.
	worker *worker
	// workerExited is 1 + the code of a worker exit that restarts it in
	// place and that the agent has yet to act on (0: none); escalated:
	// a stop in the process tier was not confirmed, and the agent exits
	// with the restart code. workerRestarts counts the worker's restarts
	// in place.
	workerExited, workerRestarts atomic.Int32
	escalated                    bool
	// left is the epoch the agent left, its worker stopped, until it
	// joins another (the process tier): a refused join confirms that stop.
	left atomic.Int32
	// tierView is what the process tier reads of the JobSet.
	tierView tierView
	// hang says why the worker is hung, until the agent acts on it
	// (hang.go).
	hang string

	// fenced and hung are the epochs this Pod's agents left on a fence
	// and on a hang, to write with the next join (epoch_record.go); used
	// by the goroutine that joins, and by the fence once that one has
	// stopped.
	fenced, hung epochRecord
	// restarts is the Pod's worker restarts as its agents reported them,
	// and how the next join comes (restarts.go); used by the goroutine
	// that joins.
	restarts restartsRecord
}

// tierView is what the process tier reads of the JobSet: whether it asks
// for the Pod tier, and its containers' restart rules.
type tierView struct {
	annotations map[string]string
	spec        jobSetSpec
}

// Option configures an Agent.
type Option func(*Agent)

// WithListener serves the barrier on l instead of :BarrierPort (tests).
func WithListener(l net.Listener) Option {
	return func(a *Agent) { a.listener = l }
}

// WithWitnessURL replaces how the agent reaches a peer's witness endpoint
// by its hostname (tests, where peers listen on loopback).
func WithWitnessURL(url func(host, subdomain string) string) Option {
	return func(a *Agent) { a.witnessURL = url }
}

// WithHostname replaces the Pod's hostname, which names it among its
// peers (tests).
func WithHostname(name string) Option {
	return func(a *Agent) { a.hostname = name }
}

// WithPeerLookup replaces how the agent resolves a peer's name (tests,
// where the cluster's DNS is a function).
func WithPeerLookup(lookup func(ctx context.Context, host string) ([]string, error)) Option {
	return func(a *Agent) { a.peerAddresses.lookup = lookup }
}

// WithLearnPeersEvery replaces how often the agent learns its witnesses'
// addresses (tests).
func WithLearnPeersEvery(every time.Duration) Option {
	return func(a *Agent) { a.learnPeersEvery = every }
}

// WithWrapperDialer replaces how the agent connects to its worker's
// wrapper (the coordination benchmark, whose thousands of agents and
// wrapper stand-ins share one process and its open-file limit).
func WithWrapperDialer(dial func(ctx context.Context, control string) (net.Conn, error)) Option {
	return func(a *Agent) {
		if a.worker == nil {
			return
		}
		a.worker.dial = func(ctx context.Context, control string) (*wrapper.Conn, error) {
			c, err := dial(ctx, control)
			if err != nil {
				return nil, err
			}
			return wrapper.NewConn(c), nil
		}
	}
}

// WithSleep replaces how the agent waits between retries (tests).
func WithSleep(sleep func(context.Context, time.Duration) error) Option {
	return func(a *Agent) { a.backoff.sleep, a.denials.sleep = sleep, sleep }
}

// New builds an agent talking to the API server through api.
func New(cfg Config, api *kubeclient.Client, opts ...Option) *Agent {
	peers := newPeerAddresses(net.DefaultResolver.LookupHost)
	a := &Agent{cfg: cfg, api: api, barrier: newBarrier(), backoff: newBackoff(), denials: newBackoff(),
		contact:    newContact(time.Now, api.LinkSlack()),
		witnessURL: peerURL(cfg.BarrierPort),
		// Peers are Pods of the cluster's network: no proxy of the
		// environment applies.
		peerClient:      &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true, DialContext: peers.dial}, Timeout: witnessTimeout},
		peerAddresses:   peers,
		learnPeersEvery: learnPeersEvery,
	}
	if cfg.FenceNodeLease && cfg.FenceAfter > 0 {
		a.nodeLease = newNodeLease(time.Now)
	}
	if cfg.WrapperControl != "" {
		a.worker = newWorker(cfg.WrapperControl, func(code int) bool {
			return a.inProcessTier() && ExitRestartsInPlace(a.tierViewNow().spec, code)
		})
	}
	a.hostname, _ = os.Hostname()
	kept, err := loadPromises(cfg.StateDir, bootClock)
	if err != nil {
		// Whatever the earlier agent promised, this one keeps the
		// longest promise it could have made.
		klog.ErrorS(err, "Keeping the longest promise an earlier agent of this Pod may have made")
		kept = &promises{clock: bootClock, until: bootClock() + promiseFor}
	}
	a.promises = kept
	if a.fenced, err = loadEpochRecord(cfg.StateDir, fenceRecordFile); err != nil {
		klog.ErrorS(err, "Ignoring the fence an earlier agent of this Pod recorded: the group restart it caused may count against maxRestarts")
	}
	if a.hung, err = loadEpochRecord(cfg.StateDir, hangRecordFile); err != nil {
		klog.ErrorS(err, "Ignoring the hang an earlier agent of this Pod recorded: the group restart it caused is not given the reason Hang")
	}
	if a.restarts, err = loadRestartsRecord(cfg.StateDir); err != nil {
		klog.ErrorS(err, "Counting this Pod's worker restarts from zero: the record an earlier agent of this Pod left cannot be read")
	}
	for _, opt := range opts {
		opt(a)
	}
	return a
}

// Epoch is the epoch the agent joined, 0 before.
func (a *Agent) Epoch() int32 { return a.epoch.Load() }

// Lifted is closed once the agent lifts its barrier, for observers in the
// same process (the coordination benchmark), which need no probe.
func (a *Agent) Lifted() <-chan struct{} { return a.barrier.liftedChan() }

// WorkerRestarts is how many times the agent restarted its worker in
// place (the process tier).
func (a *Agent) WorkerRestarts() int32 { return a.workerRestarts.Load() }

// Run serves the barrier and follows the JobSet until the Pod must restart
// in place or ctx ends, and returns the process's exit code.
func (a *Agent) Run(ctx context.Context) int {
	listener := a.listener
	if listener == nil {
		var err error
		if listener, err = net.Listen("tcp", ":"+strconv.Itoa(a.cfg.BarrierPort)); err != nil {
			klog.ErrorS(err, "Cannot serve the barrier", "port", a.cfg.BarrierPort)
			return agentspec.ExitFatal
		}
	}
	handler := a.cfg.handler(a.barrier)
	handler.HandleFunc(agentspec.WitnessPath, a.serveWitness)
	server := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.ErrorS(err, "Barrier server stopped")
		}
	}()
	defer func() { _ = server.Close() }()

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var fenced atomic.Bool
	if a.cfg.FenceAfter > 0 {
		go a.fence(ctx, a.endWatch, func() { fenced.Store(true); stop() })
		go a.learnPeers(ctx)
	}
	if a.nodeLease != nil {
		go a.followNodeLease(ctx)
	}
	workerCtx, endWorker := context.WithCancel(context.Background())
	defer endWorker()
	if a.worker != nil {
		go a.worker.drive(workerCtx)
		go a.watchWorkerExits(ctx)
		go a.watchHangs(ctx)
	}
	restart := a.follow(ctx)
	switch {
	case restart:
		klog.InfoS("Epoch deprecated: restarting the Pod in place", "epoch", a.epoch.Load(), "exitCode", a.cfg.RestartExitCode)
		if !a.escalated && a.stopWorker() {
			a.confirmStopped(a.epoch.Load())
		}
		return a.cfg.RestartExitCode
	case fenced.Load():
		// Out of contact: the stop cannot be confirmed, and need not be
		// (the controller's bound covers a silent agent). The next agent
		// of the Pod tells the controller it was a fence.
		if err := a.fenced.save(a.epoch.Load()); err != nil {
			klog.ErrorS(err, "Cannot record the fence for the next agent of this Pod: the group restart it causes may count against maxRestarts", "epoch", a.epoch.Load())
		}
		a.stopWorker()
		return a.cfg.RestartExitCode
	}
	klog.InfoS("Shutting down", "epoch", a.epoch.Load())
	return agentspec.ExitTerminated
}

// follow watches the JobSet and acts on its status; it returns true when
// the Pod must restart, false when ctx ended.
func (a *Agent) follow(ctx context.Context) bool {
	resourceVersion := ""
	for ctx.Err() == nil {
		if code := a.workerExited.Swap(0); code != 0 {
			if !a.leaveEpoch(fmt.Sprintf("the worker exited with code %d", code-1)) {
				a.escalated = true
				return true
			}
			// Read the JobSet afresh: its first event has the agent
			// join the next epoch.
			resourceVersion = ""
		}
		if why := a.takeHang(); why != "" {
			e := a.epoch.Load()
			if err := a.hung.save(e); err != nil {
				klog.ErrorS(err, "Cannot record the hang for the next agent of this Pod: the group restart it causes is not given the reason Hang", "epoch", e)
			}
			if !a.inProcessTier() {
				klog.InfoS("The worker is hung: restarting the Pod in place (the Pod tier)", "why", why)
				return true
			}
			if !a.leaveEpoch(why) {
				a.escalated = true
				return true
			}
			resourceVersion = ""
		}
		if a.watchOpening != nil {
			a.watchOpening()
		}
		watchCtx, endWatch := context.WithCancel(ctx)
		a.setRewatch(endWatch)
		if a.workerExited.Load() != 0 || a.hangPending() {
			// Signalled since the checks above, the exit or hang ended
			// the watch before this one: act on it now, not when this
			// one ends.
			endWatch()
			continue
		}
		sentAt := a.contact.now()
		w, err := a.watch(watchCtx, resourceVersion)
		a.contact.lostOrAnswered(sentAt, err)
		if err != nil {
			endWatch()
			if kubeclient.IsExpired(err) {
				resourceVersion = "" // too old to resume: start afresh
			}
			if ctx.Err() == nil {
				klog.InfoS("Watching the JobSet failed; retrying", "err", err)
				_ = a.backoff.wait(ctx, err)
			}
			continue
		}
		restart, next, err := a.consume(watchCtx, w, resourceVersion)
		w.Stop()
		endWatch()
		a.contact.lost()
		if restart {
			return true
		}
		resourceVersion = next
		switch {
		case ctx.Err() != nil, a.workerExited.Load() != 0, a.hangPending():
		case err != nil:
			klog.InfoS("JobSet watch reported an error; resuming", "err", err)
			_ = a.backoff.wait(ctx, err)
		default:
			_ = a.backoff.rewatch(ctx)
		}
	}
	return false
}

// consume handles one watch's events until it ends, and returns the
// resourceVersion to resume from ("" after 410 Gone: start afresh, with the
// current state as the first event) and the error that ended it, if any.
func (a *Agent) consume(ctx context.Context, w *kubeclient.Watcher, resourceVersion string) (restart bool, next string, err error) {
	for {
		event, err := w.Next()
		switch {
		case ctx.Err() != nil || errors.Is(err, io.EOF):
			return false, resourceVersion, nil
		case err != nil:
			return false, resourceVersion, err
		}
		switch event.Type {
		case kubeclient.Error:
			if err := event.Err(); !kubeclient.IsExpired(err) {
				return false, resourceVersion, err
			}
			return false, "", nil
		case kubeclient.Bookmark:
			if js, err := decodeJobSet(event.Object); err == nil {
				resourceVersion = js.Metadata.ResourceVersion
			}
		case kubeclient.Deleted:
			a.barrier.hold("JobSet %s was deleted", a.cfg.JobSetName)
		case kubeclient.Added, kubeclient.Modified:
			js, err := decodeJobSet(event.Object)
			if err != nil {
				return false, resourceVersion, err
			}
			a.backoff.reset()
			resourceVersion = js.Metadata.ResourceVersion
			a.setJobSetView(js)
			restart, err := a.observe(ctx, js.epochsOf(a.cfg.InPlaceGroup))
			switch {
			case restart:
				return true, resourceVersion, nil
			case err != nil:
				return false, "", err // start afresh: the first event is the JobSet as it is now
			case ctx.Err() != nil:
				// The watch ended while the agent acted on this event (the
				// fence's fresh watch after a stall cuts a join short): a
				// watch resumed past it would not show this JobSet again,
				// and one that waits on this Pod's join does not change.
				return false, "", nil
			}
		}
	}
}

// jobSet is what the agent reads of its JobSet (absent epochs: 0; the
// schema guarantees int32 values).
type jobSet struct {
	Metadata struct {
		Name            string            `json:"name"`
		UID             string            `json:"uid"`
		ResourceVersion string            `json:"resourceVersion"`
		Annotations     map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec   jobSetSpec `json:"spec"`
	Status struct {
		Restarts        int32 `json:"restarts"`
		SyncedEpoch     int32 `json:"syncedEpoch"`
		DeprecatedEpoch int32 `json:"deprecatedEpoch"`
		InPlaceGroups   []struct {
			Name            string `json:"name"`
			SyncedEpoch     int32  `json:"syncedEpoch"`
			DeprecatedEpoch int32  `json:"deprecatedEpoch"`
		} `json:"inPlaceGroups"`
	} `json:"status"`
}

// epochsOf is the epochs of the named in-place group ("": the default
// group's). A group without an entry yet has not synced: epochs 0.
func (js *jobSet) epochsOf(group string) Epochs {
	if group == "" {
		return Epochs{Synced: js.Status.SyncedEpoch, Deprecated: js.Status.DeprecatedEpoch}
	}
	for _, g := range js.Status.InPlaceGroups {
		if g.Name == group {
			return Epochs{Synced: g.SyncedEpoch, Deprecated: g.DeprecatedEpoch}
		}
	}
	return Epochs{}
}

// jobSetSpec is what the agent reads of the JobSet's spec: the group's
// Pods' hostnames, for the witness role.
type jobSetSpec struct {
	Network *struct {
		EnableDNSHostnames *bool  `json:"enableDNSHostnames"`
		Subdomain          string `json:"subdomain"`
	} `json:"network"`
	ReplicatedJobs []replicatedJob `json:"replicatedJobs"`
}

type replicatedJob struct {
	Name     string `json:"name"`
	Replicas int32  `json:"replicas"`
	Template struct {
		Spec struct {
			Parallelism *int32 `json:"parallelism"`
			Completions *int32 `json:"completions"`
			Template    struct {
				Spec struct {
					InitContainers []struct {
						RestartPolicy      string `json:"restartPolicy"`
						RestartPolicyRules []struct {
							Action string `json:"action"`
						} `json:"restartPolicyRules"`
					} `json:"initContainers"`
					Containers []struct {
						Command            []string      `json:"command"`
						RestartPolicyRules []restartRule `json:"restartPolicyRules"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	} `json:"template"`
}

// runsTheAgent: the replicatedJob's Pods run an agent (a sidecar that
// restarts its whole Pod), as the controller tells the in-place group.
func (rj replicatedJob) runsTheAgent() bool {
	for _, c := range rj.Template.Spec.Template.Spec.InitContainers {
		if c.RestartPolicy != "Always" {
			continue
		}
		for _, rule := range c.RestartPolicyRules {
			if rule.Action == "RestartAllContainers" {
				return true
			}
		}
	}
	return false
}

func (a *Agent) setJobSetView(js jobSet) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.view = jobSetView{uid: js.Metadata.UID, attempt: js.Status.Restarts, peers: peerSpaceOf(js.Metadata.Name, js.Spec)}
	a.tierView = tierView{annotations: js.Metadata.Annotations, spec: js.Spec}
}

func (a *Agent) tierViewNow() tierView {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tierView
}

func (a *Agent) jobSetView() jobSetView {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.view
}

func decodeJobSet(raw json.RawMessage) (jobSet, error) {
	var js jobSet
	if err := json.Unmarshal(raw, &js); err != nil {
		return jobSet{}, fmt.Errorf("reading a JobSet from its watch: %w", err)
	}
	return js, nil
}

// observe acts on one status of the JobSet; it returns true when the Pod
// must restart, and an error when the status must be read again.
func (a *Agent) observe(ctx context.Context, status Epochs) (bool, error) {
	action := Next(a.epoch.Load(), status)
	if action == Restart && a.inProcessTier() {
		if !a.leaveEpoch(fmt.Sprintf("epoch %d deprecated", a.epoch.Load())) {
			a.escalated = true
			return true, nil
		}
		action = Next(a.epoch.Load(), status)
	}
	if action == Join {
		if joined, err := a.join(ctx, status.Synced+1); !joined {
			return false, err
		}
		action = Next(a.epoch.Load(), status)
	}
	switch action {
	case Restart:
		return true, nil
	case Lift:
		if !a.nodeLease.awaitRead(ctx, func() {
			a.barrier.hold("epoch %d is synced: the worker starts once the agent has read its node's Lease %s/%s", a.epoch.Load(), agentspec.NodeLeaseNamespace, a.cfg.NodeName)
		}) {
			return false, ctx.Err()
		}
		if a.barrier.isFenced() {
			if confirmed, err := a.join(ctx, a.epoch.Load()); !confirmed {
				return false, err
			}
			a.barrier.confirmed()
		}
		if !a.barrier.lift() {
			return false, errFencedAgain // read the JobSet afresh: its first event lifts
		}
		if a.worker != nil {
			a.worker.lift()
		}
	case Wait:
		a.barrier.hold("epoch %d is not synced yet (the JobSet's synced epoch is %d): waiting for every Pod of the group to join", a.epoch.Load(), status.Synced)
	}
	return false, nil
}

// errFencedAgain: the fence fired between the agent's confirmation of its
// epoch and the lift (a stall that long).
var errFencedAgain = errors.New("fenced again before the barrier lifted")

// join writes the Pod's epoch annotation, retrying until it succeeds or ctx
// ends. The agent acts on nothing before. A write the API server denies
// (403, 422: the agent's admission policy refuses an epoch lower than the
// Pod's, which a stale read of the JobSet leads to) is not retried as it
// is: join returns the error, and the JobSet is read again.
func (a *Agent) join(ctx context.Context, e int32) (bool, error) {
	if err := a.promises.wait(ctx, e, releaseCheckEvery, a.askersBackInContact, func(left time.Duration) {
		a.barrier.hold("joining epoch %d once a promise made to a peer runs out, in %s at the latest, or each peer it was made to is back in contact with the API server", e, left.Round(time.Second))
		klog.InfoS("Waiting before joining: this Pod vouched for a peer out of contact with the API server, and promised to write no later epoch until the promise runs out or the peer is back in contact",
			"epoch", e, "wait", left.Round(time.Millisecond))
	}); err != nil {
		return false, nil
	}
	a.barrier.hold("joining epoch %d: writing the Pod's %s annotation", e, agentspec.EpochAnnotation)
	annotations := map[string]string{agentspec.EpochAnnotation: agentspec.FormatEpoch(e)}
	fenced := a.fenced.annotationFor(e)
	if fenced != "" {
		annotations[agentspec.FencedAnnotation] = fenced
	}
	hung := a.hung.annotationFor(e)
	if hung != "" {
		annotations[agentspec.HungAnnotation] = hung
	}
	restarts := a.restarts.annotationFor(e)
	if restarts != "" {
		annotations[agentspec.WorkerRestartsAnnotation] = restarts
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return false, err
	}
	for ctx.Err() == nil {
		sentAt := a.contact.now()
		err := a.api.MergePatch(ctx, pods, a.cfg.Namespace, a.cfg.PodName, patch)
		a.contact.lostOrAnswered(sentAt, err)
		if err == nil {
			a.backoff.reset()
			a.denials.reset()
			a.epoch.Store(e)
			a.left.Store(0)
			klog.InfoS("Joined epoch", "epoch", e, "fencedAt", fenced, "hungAt", hung, "workerRestarts", restarts)
			a.forgetRecords()
			if err := a.restarts.joined(e); err != nil {
				klog.ErrorS(err, "Cannot record the worker's restarts for the next agent of this Pod: it may count this Pod as new", "path", a.restarts.path)
			}
			return true, nil
		}
		if kubeclient.IsDenied(err) {
			if fenced != "" || hung != "" {
				// The next join goes without them: a join must not wait
				// on how the last restart is counted.
				klog.InfoS("Writing the records of why the agent left its epoch with the join was denied: joining without them", "epoch", e, "fencedAt", fenced, "hungAt", hung, "err", err)
				a.forgetRecords()
			}
			if restarts != "" {
				// Nor on how the Pod reports its worker's restarts.
				klog.InfoS("Writing the worker's restarts with the join was denied: joining without them", "epoch", e, "workerRestarts", restarts, "err", err)
				a.restarts.denied()
			}
			if left := a.left.Swap(0); left != 0 {
				// A Pod marked lost takes no epoch, only the report of its
				// worker's stop, which its group's sync beside the Pod's
				// replacement waits for (or for a bound).
				a.confirmStopped(left)
			}
			// Its own backoff: every read of the JobSet resets the other
			// one, and a denial that lasts (RBAC missing) must not turn
			// into a read and a write every few milliseconds.
			_ = a.denials.wait(ctx, err)
			return false, fmt.Errorf("writing epoch %d to the Pod was denied (reading the JobSet again): %w", e, err)
		}
		klog.InfoS("Writing the Pod's epoch failed; retrying", "epoch", e, "err", err)
		_ = a.backoff.wait(ctx, err)
	}
	return false, nil
}

// forgetRecords drops the records of why the agent left its last epoch
// once a join wrote them, could not, or made them stale.
func (a *Agent) forgetRecords() {
	for _, r := range []*epochRecord{&a.fenced, &a.hung} {
		if err := r.clear(); err != nil {
			klog.ErrorS(err, "Cannot remove a record from the Pod's state directory", "path", r.path)
		}
	}
}

// setRewatch records how to end the watch being opened.
func (a *Agent) setRewatch(end context.CancelFunc) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rewatch = end
}

// endWatch ends the open watch; the agent opens the next one at once.
func (a *Agent) endWatch() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rewatch != nil {
		a.rewatch()
	}
}

func (a *Agent) watch(ctx context.Context, resourceVersion string) (*kubeclient.Watcher, error) {
	return a.api.Watch(ctx, jobSets, a.cfg.Namespace, kubeclient.WatchOptions{Name: a.cfg.JobSetName, ResourceVersion: resourceVersion})
}
