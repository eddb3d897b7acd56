package agent

import (
	"cmp"
	"context"
	"math/rand/v2"
	"net"
	"net/url"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// A silent agent finds its witnesses by their DNS names, but the cluster's
// DNS does not outlive the API server by itself: a DNS Pod that starts
// during an outage cannot load the records it serves, and one the node
// lifecycle controller marked not ready after an earlier outage stays out
// of the DNS Service until its kubelet reports it ready again. So, while in
// contact, the agent learns where its witnesses are, and a name that does
// not resolve when it asks is dialed at the address learned.
//
// Which address reaches a peer does not matter to safety: a witness answers
// for itself (its JobSet, restart attempt, epoch and node), and an asker
// counts nodes, not names. An address that now belongs to another Pod gets
// a refusal or that Pod's own answer.

const (
	// learnPeersEvery is how often an agent in contact looks whether it
	// has its witnesses' addresses for the current epoch. Each agent
	// starts at a random point of the period, so a large group's agents
	// do not ask the DNS all at once after a group restart.
	learnPeersEvery = 30 * time.Second
	// lookupFirst is how long a witness question waits for the DNS before
	// it dials a learned address instead: the rest of witnessTimeout is
	// the dial's and the answer's.
	lookupFirst = witnessTimeout / 4
)

// peerAddresses dials peers by name, remembering what their names resolved
// to.
type peerAddresses struct {
	lookup func(ctx context.Context, host string) ([]string, error)
	dialer net.Dialer

	mu    sync.Mutex
	known map[string][]string
}

func newPeerAddresses(lookup func(ctx context.Context, host string) ([]string, error)) *peerAddresses {
	return &peerAddresses{lookup: lookup, known: map[string][]string{}}
}

// dial is an http.Transport's DialContext.
func (p *peerAddresses) dial(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	if net.ParseIP(host) != nil {
		return p.dialer.DialContext(ctx, network, address)
	}
	ips, err := p.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var first error
	for _, ip := range ips {
		conn, err := p.dialer.DialContext(ctx, network, net.JoinHostPort(ip, port))
		if err == nil {
			return conn, nil
		}
		first = cmp.Or(first, err)
	}
	return nil, first
}

// resolve looks host up; when the DNS does not answer in time and host's
// addresses were learned, those.
func (p *peerAddresses) resolve(ctx context.Context, host string) ([]string, error) {
	p.mu.Lock()
	known := p.known[host]
	p.mu.Unlock()
	lookupCtx := ctx
	if len(known) > 0 {
		var cancel context.CancelFunc
		lookupCtx, cancel = context.WithTimeout(ctx, lookupFirst)
		defer cancel()
	}
	ips, err := p.lookup(lookupCtx, host)
	switch {
	case err == nil && len(ips) > 0:
		return ips, nil
	case len(known) > 0:
		klog.V(2).InfoS("A peer's name did not resolve: dialing the address learned while in contact", "peer", host, "err", err, "addresses", known)
		return known, nil
	}
	if err == nil {
		err = &net.DNSError{Err: "no address", Name: host, IsNotFound: true}
	}
	return nil, err
}

// learn resolves hosts, each within timeout, and keeps what it learned of
// them only: the agent's witnesses change with the group. It reports
// whether every host resolved.
func (p *peerAddresses) learn(ctx context.Context, hosts []string, timeout time.Duration) bool {
	learned := make(map[string][]string, len(hosts))
	p.mu.Lock()
	for _, host := range hosts {
		if ips, ok := p.known[host]; ok {
			learned[host] = ips
		}
	}
	p.mu.Unlock()
	complete := true
	for _, host := range hosts {
		lookupCtx, cancel := context.WithTimeout(ctx, timeout)
		ips, err := p.lookup(lookupCtx, host)
		cancel()
		if err != nil || len(ips) == 0 {
			// A Pod not scheduled yet has no record; an address learned
			// for the name earlier may still be its Pod's.
			complete = false
			continue
		}
		learned[host] = ips
	}
	p.mu.Lock()
	p.known = learned
	p.mu.Unlock()
	return complete
}

// peerGeneration is what the witnesses' addresses depend on: a peer gets a
// new address only in a new Pod, which joins the group only in a new epoch
// or restart attempt.
type peerGeneration struct {
	uid            string
	attempt, epoch int32
}

// learnPeers learns the addresses of the agent's witnesses while it is in
// contact: once for each generation, and again while a name does not
// resolve yet.
func (a *Agent) learnPeers(ctx context.Context) {
	var learned peerGeneration
	wait := rand.N(a.learnPeersEvery)
	for {
		if sleepContext(ctx, wait) != nil {
			return
		}
		wait = a.learnPeersEvery
		view := a.jobSetView()
		now := peerGeneration{uid: view.uid, attempt: view.attempt, epoch: a.epoch.Load()}
		if now == learned || now.epoch == 0 || a.contact.silence() != 0 {
			continue
		}
		names := a.witnessNames(view.peers)
		if a.peerAddresses.learn(ctx, names, witnessTimeout) {
			klog.InfoS("Learned where this agent's witnesses are, for an outage that takes the cluster's DNS with the API server", "witnesses", len(names), "epoch", now.epoch)
			learned = now
		}
	}
}

// witnessNames are the host names the agent dials for its witnesses.
func (a *Agent) witnessNames(peers peerSpace) []string {
	hosts := a.witnessOrder(peers)
	names := make([]string, 0, len(hosts))
	for _, host := range hosts {
		if u, err := url.Parse(a.witnessURL(host, peers.subdomain)); err == nil && net.ParseIP(u.Hostname()) == nil {
			names = append(names, u.Hostname())
		}
	}
	return names
}
