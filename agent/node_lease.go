package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/fastjobset/jobset/agent/kubeclient"
	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// An agent that fences on its node's Lease (agentspec.EnvFenceNodeLease)
// reads how long its kubelet has been silent from the same evidence as the
// controller: the Lease the kubelet renews. It measures the silence by the
// node's own clock, from the renew time the kubelet wrote, which is never
// later than when the renewal reached the API server and the controller
// saw it. So at any moment the agent's count is at least the controller's,
// whether the agent is in contact or not, as long as the controller sees a
// renewal no later than deliverySlack after the agent does; a renewal that
// reaches the controller later than that comes only through a watch that
// delivered nothing for that long, which the controller takes for its own
// silence. Once the count is past a missed renewal the agent asks its
// witnesses, as for its own silence, and stops its worker before the
// controller's bound, unless the silence is shared.

var leases = kubeclient.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// nodeLease is what the agent read of its node's Lease.
type nodeLease struct {
	now func() time.Time

	mu        sync.Mutex
	renewTime time.Time
	interval  time.Duration
	// read is closed once a renew time was read: the barrier lifts only
	// then, so no worker runs while the agent cannot count its node's
	// silence.
	read     chan struct{}
	readOnce sync.Once
}

func newNodeLease(now func() time.Time) *nodeLease {
	return &nodeLease{now: now, read: make(chan struct{})}
}

// observe records the Lease as its watch delivered it.
func (l *nodeLease) observe(renewTime time.Time, interval time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if renewTime.After(l.renewTime) {
		l.renewTime = renewTime
	}
	l.interval = interval
	l.readOnce.Do(func() { close(l.read) })
}

// silence is how long the node's Lease has gone unrenewed, by the node's
// clock; nothing before the Lease was read (a zero RenewInterval).
func (l *nodeLease) silence() NodeSilence {
	if l == nil {
		return NodeSilence{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.renewTime.IsZero() {
		return NodeSilence{}
	}
	// Wall time on both sides: the renew time is the kubelet's reading
	// of the same clock.
	return NodeSilence{Unrenewed: max(l.now().Round(0).Sub(l.renewTime), 0), RenewInterval: l.interval}
}

// awaitRead waits until the Lease was read or ctx ends, calling waiting
// once if it has to wait.
func (l *nodeLease) awaitRead(ctx context.Context, waiting func()) bool {
	if l == nil {
		return true
	}
	select {
	case <-l.read:
		return true
	default:
	}
	waiting()
	select {
	case <-l.read:
		return true
	case <-ctx.Done():
		return false
	}
}

// lease is what the agent reads of a Lease.
type lease struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Spec struct {
		RenewTime            *time.Time `json:"renewTime"`
		LeaseDurationSeconds int32      `json:"leaseDurationSeconds"`
	} `json:"spec"`
}

// followNodeLease watches the node's Lease until ctx ends.
func (a *Agent) followNodeLease(ctx context.Context) {
	retry := newBackoff()
	resourceVersion := ""
	for ctx.Err() == nil {
		w, err := a.api.Watch(ctx, leases, agentspec.NodeLeaseNamespace, kubeclient.WatchOptions{Name: a.cfg.NodeName, ResourceVersion: resourceVersion})
		if err == nil {
			resourceVersion, err = a.consumeNodeLease(w, resourceVersion, retry)
			w.Stop()
		}
		switch {
		case ctx.Err() != nil:
			return
		case kubeclient.IsDenied(err):
			klog.ErrorS(err, "The agent may not watch its node's Lease: its worker does not start until it can. Allow its ServiceAccount to watch leases in "+
				agentspec.NodeLeaseNamespace+" (a Role and RoleBinding there), or set "+agentspec.EnvFenceNodeLease+"=false",
				"lease", agentspec.NodeLeaseNamespace+"/"+a.cfg.NodeName)
			a.barrier.hold("the agent may not watch its node's Lease %s/%s (%v): the worker starts once it can", agentspec.NodeLeaseNamespace, a.cfg.NodeName, err)
		case kubeclient.IsExpired(err):
			resourceVersion = ""
		case err != nil:
			klog.V(2).InfoS("Watching the node's Lease failed; retrying", "err", err)
		default:
			_ = retry.rewatch(ctx)
			continue
		}
		_ = retry.wait(ctx, err)
	}
}

// consumeNodeLease reads one watch of the node's Lease until it ends, and
// returns the resourceVersion to resume from and the error that ended it.
func (a *Agent) consumeNodeLease(w *kubeclient.Watcher, resourceVersion string, retry *backoff) (string, error) {
	for {
		event, err := w.Next()
		switch {
		case errors.Is(err, io.EOF):
			return resourceVersion, nil
		case err != nil:
			return resourceVersion, err
		}
		switch event.Type {
		case kubeclient.Error:
			if err := event.Err(); !kubeclient.IsExpired(err) {
				return resourceVersion, err
			}
			return "", nil
		case kubeclient.Deleted:
			// Its Node was deleted: the silence goes on, and the
			// controller leaves the node's Pods to go with it.
		case kubeclient.Bookmark, kubeclient.Added, kubeclient.Modified:
			var l lease
			if err := json.Unmarshal(event.Object, &l); err != nil {
				return resourceVersion, fmt.Errorf("reading the node's Lease from its watch: %w", err)
			}
			resourceVersion = l.Metadata.ResourceVersion
			if event.Type == kubeclient.Bookmark || l.Spec.RenewTime == nil {
				continue
			}
			retry.reset()
			a.nodeLease.observe(*l.Spec.RenewTime, agentspec.NodeRenewInterval(l.Spec.LeaseDurationSeconds))
		}
	}
}
