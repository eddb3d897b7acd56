package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// An API server that every node loses (a restart, an upgrade, a failover)
// must stop no worker; a node that alone loses it must stop its worker
// before the controller replaces its rank. The agent cannot tell the two
// apart by itself, so a silent agent with a running worker asks peers of
// its group on other nodes, over the Pod network, whether they are out of
// contact too.
//
// A peer in contact says so, and the asker stops its worker unless it
// reaches the API server itself soon (regainContactWithin). A silent peer
// that joined no epoch beyond the asker's promises to write none for
// agentspec.WitnessPromiseSeconds: the group cannot sync past the asker's
// epoch without that peer, unless the controller declares the peer lost
// too. The controller declares members lost only while no more nodes of the
// group are silent than the witnesses an agent needs (FENCE_WITNESSES), so
// it cannot replace an agent and all of its witnesses while each still
// runs (docs/controller.md, "Shared silence"). The asker asks again after
// a third of the promise; when it is no longer vouched for, the rest of the
// promise covers its worker's stop.
//
// Peers are found by name, not through the API server: the group's Pods
// have stable DNS hostnames (<jobset>-<replicatedJob>-<job>-<index>, under
// the JobSet's subdomain) that the cluster's DNS keeps answering while the
// API server is away. Each silent agent asks a few peers, in an order of
// its own, every few seconds: no traffic grows with the group's square.

// promiseFor is how long a witness's promise lasts; askAgainAfter is when
// the asker asks again.
const (
	promiseFor    = agentspec.WitnessPromiseSeconds * time.Second
	askAgainAfter = promiseFor / 3
	// witnessTimeout bounds one question, name lookup included.
	witnessTimeout = agentspec.WitnessRound
	// regainRenewalWithin: an agent in contact whose node's Lease is
	// stale, told it is alone once the silence it shared ended, waits that
	// long for its kubelet to renew the Lease before it stops its worker:
	// a kubelet renews on an interval of its own (10 s by default) and
	// retries a failed renewal with a backoff of its own, so it comes back
	// after its agent. The promises it held outlive that: asked last at
	// most askAgainAfter and a question's witnessTimeout before it heard
	// it is alone, then this wait, then a tick and its worker's stop.
	regainRenewalWithin = 14 * time.Second
	// regainContactWithin: once an API server answers again, an agent
	// whose link works gets an answer of its own within its backoff's cap
	// through an outage and a round trip. Told by a peer in contact that
	// it is alone, an agent waits that long for its own answer before it
	// stops its worker: it asks its witnesses that much earlier before its
	// fence time, and past it, rides on the promises it held last, which
	// outlive its next question by more than that and its worker's stop.
	regainContactWithin = unreachableMax + witnessTimeout
	// askAhead is how long before its fence time an agent asks.
	askAhead = witnessTimeout + regainContactWithin
)

// witnessRequest is what an asker sends a peer. Host is the asker's
// hostname, by which the witness asks it later whether it is back in
// contact (ContactCheck: that question, which no promise answers).
type witnessRequest struct {
	JobSetUID    string `json:"jobSetUID"`
	Attempt      int32  `json:"attempt"`
	Epoch        int32  `json:"epoch"`
	Pod          string `json:"pod"`
	Host         string `json:"host,omitempty"`
	ContactCheck bool   `json:"contactCheck,omitempty"`
	// NodeUnrenewedMillis and NodeRenewIntervalMillis: how long the
	// asker's node's Lease has gone unrenewed, and its renew interval,
	// when that is what silences it (sharesNodeSilence).
	NodeUnrenewedMillis     int64 `json:"nodeUnrenewedMillis,omitempty"`
	NodeRenewIntervalMillis int64 `json:"nodeRenewIntervalMillis,omitempty"`
}

// releaseCheckEvery is how often a witness held by its promise asks its
// askers whether they are back in contact.
const releaseCheckEvery = time.Second

// witnessAnswer is a peer's answer: in contact, or a promise, or neither
// and why.
type witnessAnswer struct {
	Node      string `json:"node,omitempty"`
	InContact bool   `json:"inContact,omitempty"`
	Promised  bool   `json:"promised,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// jobSetView is what the agent last read of its JobSet that its witness
// role needs: who the group is, and which JobSet and restart attempt.
type jobSetView struct {
	uid     string
	attempt int32
	peers   peerSpace
}

// peerSpace names the Pods of the in-place group by their DNS hostnames,
// without listing them (a group may have many thousands).
type peerSpace struct {
	subdomain string
	jobs      []peerJobs
	total     int
}

// peerJobs are the Jobs of one replicatedJob of the group.
type peerJobs struct {
	prefix         string // <jobset>-<replicatedJob>-
	replicas, pods int
}

// host is the hostname of the i-th Pod of the group.
func (s peerSpace) host(i int) string {
	for _, j := range s.jobs {
		if n := j.replicas * j.pods; i >= n {
			i -= n
			continue
		}
		return j.prefix + strconv.Itoa(i/j.pods) + "-" + strconv.Itoa(i%j.pods)
	}
	return ""
}

// peerSpaceOf reads the group from the JobSet: the replicatedJobs whose
// Pods run the agent, when Pods get DNS hostnames.
func peerSpaceOf(name string, spec jobSetSpec) peerSpace {
	s := peerSpace{subdomain: name}
	if n := spec.Network; n != nil {
		if n.EnableDNSHostnames != nil && !*n.EnableDNSHostnames {
			return peerSpace{}
		}
		if n.Subdomain != "" {
			s.subdomain = n.Subdomain
		}
	}
	for _, rj := range spec.ReplicatedJobs {
		if !rj.runsTheAgent() {
			continue
		}
		pods := 1
		switch job := rj.Template.Spec; {
		case job.Completions != nil:
			pods = int(*job.Completions)
		case job.Parallelism != nil:
			pods = int(*job.Parallelism)
		}
		replicas := int(rj.Replicas)
		if rj.Replicas == 0 {
			replicas = 1
		}
		if pods <= 0 || replicas <= 0 {
			continue
		}
		s.jobs = append(s.jobs, peerJobs{prefix: name + "-" + rj.Name + "-", replicas: replicas, pods: pods})
		s.total += replicas * pods
	}
	return s
}

// witnesses is what the agent heard from its peers during its silence.
type witnesses struct {
	mu sync.Mutex
	// vouchedUntil: vouched for until then (the agent's clock), when it
	// asks again; alone: a peer is in contact, or too few vouched.
	vouchedUntil time.Time
	alone        bool
	// aloneSince: told it is alone while it held promises, then; the
	// agent tries to reach the API server itself for a while after
	// (regaining).
	aloneSince time.Time
}

func (w *witnesses) state(now time.Time) Witnessed {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.alone:
		return Alone
	case now.Before(w.vouchedUntil):
		return Vouched
	}
	return NotAsked
}

// forget drops what the peers said: the agent is in contact again, or
// stalled (promises it held may have run out meanwhile).
func (w *witnesses) forget() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.vouchedUntil, w.alone, w.aloneSince = time.Time{}, false, time.Time{}
}

// regaining: the agent was told it is alone while it held promises, less
// than regainContactWithin ago, or regainRenewalWithin for an agent in
// contact, which waits for its kubelet.
func (w *witnesses) regaining(now time.Time, inContact bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	window := regainContactWithin
	if inContact {
		window = regainRenewalWithin
	}
	return w.alone && !w.aloneSince.IsZero() && now.Before(w.aloneSince.Add(window))
}

// heard records a round's outcome at now: vouched for until vouchedUntil,
// or alone.
func (w *witnesses) heard(now, vouchedUntil time.Time, alone bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if alone && !w.alone && !w.vouchedUntil.IsZero() {
		w.aloneSince = now
	}
	w.vouchedUntil, w.alone = vouchedUntil, alone
}

// askWitnesses asks a round of peers on other nodes at once, within
// witnessTimeout (the fence asks that long before its fence time): vouched
// for when FenceWitnesses of them promised, alone when one said it is in
// contact or too few promised.
func (a *Agent) askWitnesses(ctx context.Context) {
	view := a.jobSetView()
	need := a.cfg.FenceWitnesses
	request := witnessRequest{JobSetUID: view.uid, Attempt: view.attempt, Epoch: a.epoch.Load(), Pod: a.cfg.PodName, Host: a.hostname}
	if node := a.nodeLease.silence(); node.RenewInterval > 0 {
		request.NodeUnrenewedMillis, request.NodeRenewIntervalMillis = node.Unrenewed.Milliseconds(), node.RenewInterval.Milliseconds()
	}
	hosts := a.witnessOrder(view.peers)
	// Promises count from when the question was sent: the peer promised
	// later, so its promise lasts at least that long from here.
	sentAt := a.contact.now()
	promised := map[string]bool{}
	for i, answer := range a.ask(ctx, view.peers, hosts, request) {
		switch {
		case answer == nil:
		case answer.InContact:
			klog.InfoS("A peer is in contact with the API server: unless this agent reaches it too before its fence time (or soon, on the promises it held), this node alone is cut off and its worker stops", "peer", hosts[i], "peerNode", answer.Node)
			a.witnesses.heard(a.contact.now(), time.Time{}, true)
			return
		case answer.Promised && answer.Node != "" && answer.Node != a.cfg.NodeName:
			promised[answer.Node] = true
		case !answer.Promised:
			klog.V(2).InfoS("A peer could not vouch", "peer", hosts[i], "reason", answer.Reason)
		}
	}
	if len(promised) >= need {
		klog.InfoS("Peers on other nodes are out of contact with the API server too: the outage is shared, the worker keeps running",
			"witnesses", len(promised), "epoch", request.Epoch)
		a.witnesses.heard(a.contact.now(), sentAt.Add(askAgainAfter), false)
		return
	}
	klog.InfoS("Too few peers on other nodes vouched for this node's silence", "vouched", len(promised), "need", need, "asked", len(hosts))
	a.witnesses.heard(a.contact.now(), time.Time{}, true)
}

// maxAsked bounds the peers one round asks.
func maxAsked(need int) int { return max(8, 4*(need+1)) }

// witnessOrder is the peers to ask, in an order of this agent's own
// (agents that ask at once spread over the group), without itself.
func (a *Agent) witnessOrder(peers peerSpace) []string {
	if peers.total <= 1 {
		return nil
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(a.hostname))
	rng := rand.New(rand.NewPCG(h.Sum64(), uint64(peers.total)))
	limit := min(peers.total-1, maxAsked(a.cfg.FenceWitnesses))
	order := make([]string, 0, limit)
	for _, i := range rng.Perm(peers.total) {
		if host := peers.host(i); host != a.hostname {
			order = append(order, host)
		}
		if len(order) == limit {
			break
		}
	}
	return order
}

// ask asks each host at once; a nil answer is none.
func (a *Agent) ask(ctx context.Context, peers peerSpace, hosts []string, request witnessRequest) []*witnessAnswer {
	body, err := json.Marshal(request)
	if err != nil {
		return make([]*witnessAnswer, len(hosts))
	}
	answers := make([]*witnessAnswer, len(hosts))
	var wg sync.WaitGroup
	for i, host := range hosts {
		wg.Go(func() {
			answer, err := a.askOne(ctx, a.witnessURL(host, peers.subdomain), body)
			if err != nil {
				klog.V(2).InfoS("A peer did not answer", "peer", host, "err", err)
				return
			}
			answers[i] = answer
		})
	}
	wg.Wait()
	return answers
}

func (a *Agent) askOne(ctx context.Context, url string, body []byte) (*witnessAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, witnessTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.peerClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s", url, resp.Status)
	}
	var answer witnessAnswer
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 4096)).Decode(&answer); err != nil {
		return nil, fmt.Errorf("reading the answer of %s: %w", url, err)
	}
	return &answer, nil
}

// peerURL is where a peer's witness endpoint is, by its DNS name.
func peerURL(port int) func(host, subdomain string) string {
	return func(host, subdomain string) string {
		return "http://" + host + "." + subdomain + ":" + strconv.Itoa(port) + agentspec.WitnessPath
	}
}

// answerWitness is this agent as a witness: in contact, it says so; silent,
// it promises, if it can keep the promise. Silent is as its own fence
// counts it, or, for an agent that fences on its node's Lease, silent
// with the asker's node (sharesNodeSilence): peers whose kubelets all fell
// silent at once, their agents in contact (an API server that takes no
// renewals while its watches go on), vouch for each other, as in an
// outage.
func (a *Agent) answerWitness(request witnessRequest) witnessAnswer {
	answer := witnessAnswer{Node: a.cfg.NodeName}
	silence := a.silence()
	if silence == 0 && a.sharesNodeSilence(request) {
		silence = time.Nanosecond
	}
	view := a.jobSetView()
	epoch := a.epoch.Load()
	switch {
	case silence == 0:
		// In contact, it relies on no promise; a peer that asks so that it
		// may release one must not find it relying on an old one later.
		a.witnesses.forget()
		answer.InContact = true
		return answer
	case request.ContactCheck:
		answer.Reason = "out of contact with the API server"
	case view.uid == "" || view.uid != request.JobSetUID || view.attempt != request.Attempt:
		answer.Reason = fmt.Sprintf("not a member of the same JobSet and restart attempt (this agent read JobSet %q, attempt %d)", view.uid, view.attempt)
	case a.cfg.NodeName == "":
		answer.Reason = agentspec.EnvNodeName + " is not set: an asker counts nodes"
	case !a.promises.canPromise():
		answer.Reason = agentspec.EnvStateDir + " is not set: a promise must bind the agents that follow in this Pod"
	case epoch == 0 || epoch > request.Epoch:
		answer.Reason = fmt.Sprintf("this agent joined epoch %d, not one up to %d", epoch, request.Epoch)
	case a.cfg.FenceDeferLimit > 0 && silence >= a.cfg.FenceDeferLimit:
		answer.Reason = "silent past the defer limit"
	default:
		if err := a.promises.give(request.Epoch, promiseFor, request.Host); err != nil {
			answer.Reason = "recording the promise failed: " + err.Error()
			klog.ErrorS(err, "Recording a promise to a peer")
			return answer
		}
		klog.InfoS("Vouched for a peer out of contact with the API server too: writing no epoch beyond its own for a while",
			"peer", request.Pod, "epoch", request.Epoch, "for", promiseFor)
		answer.Promised = true
	}
	return answer
}

// sharesNodeSilence: this agent's node's Lease has gone unrenewed since
// before the asker's kubelet was due to renew: the kubelets of both fell
// silent together, as far as one renew interval tells
// (agentspec.NodeSilenceSharedAfter). The question's way only adds to this
// node's count.
func (a *Agent) sharesNodeSilence(request witnessRequest) bool {
	mine := a.nodeLease.silence()
	if request.NodeUnrenewedMillis <= 0 || mine.RenewInterval == 0 {
		return false
	}
	asker := time.Duration(request.NodeUnrenewedMillis) * time.Millisecond
	due := asker - agentspec.RenewedWithin(time.Duration(request.NodeRenewIntervalMillis)*time.Millisecond)
	return due > 0 && mine.Unrenewed >= due
}

// askersBackInContact asks each asker of this agent's promise whether it
// is in contact with the API server again: true when every one says so.
func (a *Agent) askersBackInContact(ctx context.Context, askers []string) bool {
	view := a.jobSetView()
	body, err := json.Marshal(witnessRequest{JobSetUID: view.uid, Attempt: view.attempt, Pod: a.cfg.PodName, Host: a.hostname, ContactCheck: true})
	if err != nil {
		return false
	}
	for _, asker := range askers {
		answer, err := a.askOne(ctx, a.witnessURL(asker, view.peers.subdomain), body)
		if err != nil || !answer.InContact {
			return false
		}
	}
	return true
}

// serveWitness is the HTTP side of answerWitness.
func (a *Agent) serveWitness(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST a witness request", http.StatusMethodNotAllowed)
		return
	}
	var request witnessRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&request); err != nil {
		http.Error(w, "reading the witness request: "+err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(a.answerWitness(request))
}
