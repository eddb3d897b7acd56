package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// replicated is a replicatedJob of replicas Jobs of pods Pods, which run
// the agent as injection makes them when agent is set.
func replicated(name string, replicas, pods int32, agent bool) replicatedJob {
	var rj replicatedJob
	rj.Name, rj.Replicas = name, replicas
	rj.Template.Spec.Completions = &pods
	if agent {
		rj.Template.Spec.Template.Spec.InitContainers = append(rj.Template.Spec.Template.Spec.InitContainers, struct {
			RestartPolicy      string `json:"restartPolicy"`
			RestartPolicyRules []struct {
				Action string `json:"action"`
			} `json:"restartPolicyRules"`
		}{RestartPolicy: "Always", RestartPolicyRules: []struct {
			Action string `json:"action"`
		}{{Action: "RestartAllContainers"}}})
	}
	return rj
}

func TestPeerSpace(t *testing.T) {
	off := false
	cases := map[string]struct {
		spec jobSetSpec
		want []string
	}{
		"the group's Pods, by hostname, in spec order; not the Pods without the agent": {
			spec: jobSetSpec{ReplicatedJobs: []replicatedJob{replicated("init", 1, 1, false), replicated("w", 2, 2, true), replicated("ps", 1, 1, true)}},
			want: []string{"js-w-0-0", "js-w-0-1", "js-w-1-0", "js-w-1-1", "js-ps-0-0"},
		},
		"Pods without DNS hostnames have no peers to ask": {
			spec: jobSetSpec{Network: &struct {
				EnableDNSHostnames *bool  `json:"enableDNSHostnames"`
				Subdomain          string `json:"subdomain"`
			}{EnableDNSHostnames: &off}, ReplicatedJobs: []replicatedJob{replicated("w", 2, 2, true)}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := peerSpaceOf("js", tc.spec)
			var got []string
			for i := range s.total {
				got = append(got, s.host(i))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("hosts = %v, want %v", got, tc.want)
			}
		})
	}
	s := peerSpaceOf("js", jobSetSpec{Network: &struct {
		EnableDNSHostnames *bool  `json:"enableDNSHostnames"`
		Subdomain          string `json:"subdomain"`
	}{Subdomain: "net"}, ReplicatedJobs: []replicatedJob{replicated("w", 1, 1, true)}})
	if s.subdomain != "net" {
		t.Errorf("subdomain = %q, want the JobSet's network.subdomain", s.subdomain)
	}
}

type fakeBootClock struct{ now time.Duration }

func (c *fakeBootClock) read() time.Duration { return c.now }

func TestPromisesBindTheAgentsThatFollow(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeBootClock{now: time.Hour}
	p, err := loadPromises(dir, clock.read)
	if err != nil {
		t.Fatal(err)
	}
	if !p.canPromise() || p.holding(9) != 0 {
		t.Fatalf("a fresh state directory: canPromise %v, holding %s; want true, 0", p.canPromise(), p.holding(9))
	}
	if err := p.give(3, 30*time.Second, ""); err != nil {
		t.Fatal(err)
	}
	clock.now += 10 * time.Second
	if got := p.holding(4); got != 20*time.Second {
		t.Errorf("a write of epoch 4 waits %s, want 20s", got)
	}
	if got := p.holding(3); got != 0 {
		t.Errorf("a write of the promised epoch waits %s, want 0: it moves no group past the asker", got)
	}
	if err := p.give(2, 5*time.Second, ""); err != nil {
		t.Fatal(err)
	}
	if got := p.holding(3); got != 20*time.Second {
		t.Errorf("after a second, shorter promise up to epoch 2, a write of 3 waits %s, want the longer 20s", got)
	}

	next, err := loadPromises(dir, clock.read)
	if err != nil {
		t.Fatal(err)
	}
	if got := next.holding(3); got != 20*time.Second {
		t.Errorf("the next agent of the Pod waits %s to write epoch 3, want 20s", got)
	}
	clock.now += 20 * time.Second
	if got := next.holding(3); got != 0 {
		t.Errorf("once the promise ran out, a write waits %s", got)
	}

	if err := os.WriteFile(filepath.Join(dir, promiseFile), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadPromises(dir, clock.read); err == nil || !strings.Contains(err.Error(), "<epoch> <boot clock nanoseconds>") {
		t.Errorf("a damaged promise file: err = %v, want one that says what it should hold", err)
	}
	none, err := loadPromises("", clock.read)
	if err != nil || none.canPromise() {
		t.Errorf("no state directory: canPromise %v, err %v; want false, nil", none.canPromise(), err)
	}
}

// witnessAgent is an agent as its witness role sees it, silent for silence
// (0: in contact), joined to epoch.
func witnessAgent(t *testing.T, silence time.Duration, epoch int32) *Agent {
	t.Helper()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newContact(func() time.Time { return now }, 0)
	if silence > 0 {
		c.silentSince = now.Add(-silence)
	}
	p, err := loadPromises(t.TempDir(), (&fakeBootClock{now: time.Hour}).read)
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{cfg: Config{PodName: "js-w-0-1", NodeName: "node-b", FenceDeferLimit: 10 * time.Minute, FenceWitnesses: 1},
		contact: c, promises: p, view: jobSetView{uid: "uid-1", attempt: 0}}
	a.epoch.Store(epoch)
	return a
}

// leaseUnrenewed has the agent fence on its node's Lease, renewed every
// 10 s and last unrenewed for unrenewed.
func leaseUnrenewed(unrenewed time.Duration) func(*Agent) {
	return func(a *Agent) {
		now := time.Now()
		a.nodeLease = newNodeLease(func() time.Time { return now })
		a.nodeLease.observe(now.Add(-unrenewed), 10*time.Second)
	}
}

func TestAnswerWitness(t *testing.T) {
	ask := witnessRequest{JobSetUID: "uid-1", Attempt: 0, Epoch: 3, Pod: "js-w-0-0"}
	// An asker whose Lease, renewed every 10 s, has gone unrenewed for
	// 24 s: its kubelet was due 12.6 s ago at the latest.
	askOnLease := ask
	askOnLease.NodeUnrenewedMillis, askOnLease.NodeRenewIntervalMillis = 24000, 10000
	cases := map[string]struct {
		silence time.Duration
		epoch   int32
		change  func(*Agent)
		request witnessRequest
		want    witnessAnswer
		reason  string
	}{
		"in contact: says so, promises nothing": {epoch: 3, request: ask, want: witnessAnswer{Node: "node-b", InContact: true}},
		"silent, joined the asker's epoch: promises": {silence: 20 * time.Second, epoch: 3, request: ask,
			want: witnessAnswer{Node: "node-b", Promised: true}},
		"silent, joined an earlier epoch: promises": {silence: 20 * time.Second, epoch: 2, request: ask,
			want: witnessAnswer{Node: "node-b", Promised: true}},
		"silent, joined a later epoch: its join counts already": {silence: 20 * time.Second, epoch: 4, request: ask,
			reason: "joined epoch 4"},
		"silent, joined nothing: its Pod may show any epoch": {silence: 20 * time.Second, epoch: 0, request: ask,
			reason: "joined epoch 0"},
		"another JobSet": {silence: 20 * time.Second, epoch: 3, request: witnessRequest{JobSetUID: "uid-2", Epoch: 3},
			reason: "not a member of the same JobSet"},
		"another restart attempt": {silence: 20 * time.Second, epoch: 3, request: witnessRequest{JobSetUID: "uid-1", Attempt: 1, Epoch: 3},
			reason: "not a member of the same JobSet"},
		"silent past the defer limit": {silence: 11 * time.Minute, epoch: 3, request: ask, reason: "past the defer limit"},
		"no node name": {silence: 20 * time.Second, epoch: 3, request: ask, change: func(a *Agent) { a.cfg.NodeName = "" },
			reason: agentspec.EnvNodeName},
		"no state directory": {silence: 20 * time.Second, epoch: 3, request: ask, change: func(a *Agent) { a.promises.path = "" },
			reason: agentspec.EnvStateDir},
		"in contact, its kubelet silent since the asker's was due: the silence is shared, promises": {epoch: 3, request: askOnLease,
			change: leaseUnrenewed(13 * time.Second), want: witnessAnswer{Node: "node-b", Promised: true}},
		"in contact, its kubelet renewed since the asker's was due: says it is in contact": {epoch: 3, request: askOnLease,
			change: leaseUnrenewed(12 * time.Second), want: witnessAnswer{Node: "node-b", InContact: true}},
		"in contact, its kubelet silent, the asker out of contact only: says it is in contact": {epoch: 3, request: ask,
			change: leaseUnrenewed(20 * time.Second), want: witnessAnswer{Node: "node-b", InContact: true}},
		"in contact, not fencing on its Lease: says it is in contact": {epoch: 3, request: askOnLease,
			want: witnessAnswer{Node: "node-b", InContact: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a := witnessAgent(t, tc.silence, tc.epoch)
			if tc.change != nil {
				tc.change(a)
			}
			got := a.answerWitness(tc.request)
			if tc.reason != "" {
				if got.Promised || got.InContact || !strings.Contains(got.Reason, tc.reason) {
					t.Fatalf("answer = %+v, want no promise, because of %q", got, tc.reason)
				}
				if a.promises.holding(99) != 0 {
					t.Error("it promised nothing, yet holds its joins")
				}
				return
			}
			if got != tc.want {
				t.Fatalf("answer = %+v, want %+v", got, tc.want)
			}
			if tc.want.Promised && a.promises.holding(tc.request.Epoch+1) != promiseFor {
				t.Errorf("promised, but a join beyond epoch %d waits %s, want %s", tc.request.Epoch, a.promises.holding(tc.request.Epoch+1), promiseFor)
			}
		})
	}
}

// peers serves a fixed answer per hostname, as the group's agents would.
func peers(t *testing.T, answers map[string]witnessAnswer) func(host, subdomain string) string {
	t.Helper()
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer, ok := answers[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.Error(w, "no such peer", http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(answer)
	}))
	t.Cleanup(server.Close)
	return func(host, _ string) string { return server.URL + "/" + host }
}

func TestAskWitnesses(t *testing.T) {
	group := peerSpace{subdomain: "js", jobs: []peerJobs{{prefix: "js-w-", replicas: 4, pods: 1}}, total: 4}
	silentOn := func(node string) witnessAnswer { return witnessAnswer{Node: node, Promised: true} }
	cases := map[string]struct {
		need    int
		answers map[string]witnessAnswer
		want    Witnessed
	}{
		"every peer silent too: vouched": {need: 1, want: Vouched, answers: map[string]witnessAnswer{
			"js-w-1-0": silentOn("b"), "js-w-2-0": silentOn("c"), "js-w-3-0": silentOn("d")}},
		"peers in contact: alone": {need: 1, want: Alone, answers: map[string]witnessAnswer{
			"js-w-1-0": {Node: "b", InContact: true}, "js-w-2-0": {Node: "c", InContact: true}, "js-w-3-0": {Node: "d", InContact: true}}},
		"a peer in contact, none can vouch: alone": {need: 1, want: Alone, answers: map[string]witnessAnswer{
			"js-w-1-0": {Node: "b", Reason: "joined epoch 4"}, "js-w-2-0": {Node: "c", InContact: true}, "js-w-3-0": {Node: "d", Reason: "joined epoch 0"}}},
		"only peers of its own node vouch: alone": {need: 1, want: Alone, answers: map[string]witnessAnswer{
			"js-w-1-0": silentOn("a"), "js-w-2-0": silentOn("a"), "js-w-3-0": silentOn("a")}},
		"two needed, two peers of one other node vouch: alone": {need: 2, want: Alone, answers: map[string]witnessAnswer{
			"js-w-1-0": silentOn("b"), "js-w-2-0": silentOn("b"), "js-w-3-0": {Node: "c", Reason: "joined epoch 4"}}},
		"two needed, two nodes vouch": {need: 2, want: Vouched, answers: map[string]witnessAnswer{
			"js-w-1-0": silentOn("b"), "js-w-2-0": {Node: "c", Reason: "joined epoch 0"}, "js-w-3-0": silentOn("d")}},
		"no peer answers (a node cut off from the network): alone": {need: 1, want: Alone},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			a := &Agent{cfg: Config{PodName: "js-w-0-0", NodeName: "a", FenceWitnesses: tc.need},
				contact: newContact(func() time.Time { return now }, 0), hostname: "js-w-0-0",
				view: jobSetView{uid: "uid-1", peers: group}, peerClient: http.DefaultClient, witnessURL: peers(t, tc.answers)}
			a.epoch.Store(3)
			a.askWitnesses(context.Background())
			if got := a.witnesses.state(now); got != tc.want {
				t.Fatalf("after asking: %v, want %v", got, tc.want)
			}
			if tc.want == Vouched && a.witnesses.state(now.Add(askAgainAfter)) != NotAsked {
				t.Errorf("vouched for past %s: it must ask again while the promises still cover its worker's stop", askAgainAfter)
			}
		})
	}
}

// TestWitnessesRegaining: an agent told it is alone tries to reach the API
// server itself for regainContactWithin (in contact, waits for its
// kubelet for regainRenewalWithin) only when the promises it held until
// then still bind its witnesses, counted from the first time it was told.
func TestWitnessesRegaining(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		rounds []bool // alone, round after round, askAgainAfter apart
		// aloneFor: how long before the last round the window opened
		// (-1: it never did).
		aloneFor time.Duration
	}{
		"alone at its first question: nothing held":          {rounds: []bool{true}, aloneFor: -1},
		"alone after being vouched for: held promises cover": {rounds: []bool{false, true}, aloneFor: 0},
		"alone again: the window does not start over":        {rounds: []bool{false, true, true}, aloneFor: askAgainAfter},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var w witnesses
			at := now
			for i, alone := range tc.rounds {
				if i > 0 {
					at = at.Add(askAgainAfter)
				}
				vouchedUntil := time.Time{}
				if !alone {
					vouchedUntil = at.Add(askAgainAfter)
				}
				w.heard(at, vouchedUntil, alone)
			}
			for _, c := range []struct {
				inContact bool
				window    time.Duration
			}{{false, regainContactWithin}, {true, regainRenewalWithin}} {
				want := tc.aloneFor >= 0 && tc.aloneFor < c.window
				if got := w.regaining(at, c.inContact); got != want {
					t.Fatalf("regaining (in contact %v) = %v, want %v", c.inContact, got, want)
				}
				if opened := at.Add(-tc.aloneFor); tc.aloneFor >= 0 && w.regaining(opened.Add(c.window), c.inContact) {
					t.Errorf("still regaining (in contact %v) %s after the window opened", c.inContact, c.window)
				}
			}
			w.forget()
			if w.regaining(at, false) || w.regaining(at, true) {
				t.Error("regaining after forget (in contact again)")
			}
		})
	}
}

// TestPromiseCoversTheRegainWindow: a witness's promise outlives the
// asker's next question, its wait for the API server or its kubelet, and a
// wrapped worker's stop.
func TestPromiseCoversTheRegainWindow(t *testing.T) {
	wrappedStop := (agentspec.WorkerStopGraceSeconds + agentspec.WorkerStopSlackSeconds) * time.Second
	for _, window := range []time.Duration{regainContactWithin, regainRenewalWithin} {
		if need := askAgainAfter + witnessTimeout + window + fenceTick + wrappedStop; promiseFor <= need {
			t.Fatalf("a promise of %s does not cover %s", promiseFor, need)
		}
	}
}

// TestPromiseReleasedOnceItsAskersAreBackInContact: a promise whose askers
// are all back in contact with the API server holds no write any more,
// and the agent that follows in the Pod finds it released; one that an
// asker without a hostname holds runs its full length.
func TestPromiseReleasedOnceItsAskersAreBackInContact(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeBootClock{now: time.Hour}
	p, err := loadPromises(dir, clock.read)
	if err != nil {
		t.Fatal(err)
	}
	for _, asker := range []string{"js-w-0-0", "js-w-1-0", "js-w-0-0"} {
		if err := p.give(3, 30*time.Second, asker); err != nil {
			t.Fatal(err)
		}
	}
	if got := p.releasable(4); !slices.Equal(got, []string{"js-w-0-0", "js-w-1-0"}) {
		t.Fatalf("releasable = %q, want each asker once", got)
	}
	kept, err := loadPromises(dir, clock.read)
	if err != nil {
		t.Fatal(err)
	}
	if got := kept.releasable(4); !slices.Equal(got, []string{"js-w-0-0", "js-w-1-0"}) {
		t.Fatalf("the next agent of the Pod reads askers %q", got)
	}

	var asked [][]string
	inContact := map[string]bool{"js-w-0-0": true}
	backInContact := func(_ context.Context, askers []string) bool {
		asked = append(asked, askers)
		for _, a := range askers {
			if !inContact[a] {
				return false
			}
		}
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := p.wait(ctx, 4, time.Millisecond, backInContact, func(time.Duration) {}); err == nil {
		t.Fatal("the write went ahead while an asker was still out of contact")
	}
	inContact["js-w-1-0"] = true
	if err := p.wait(context.Background(), 4, time.Millisecond, backInContact, func(time.Duration) {}); err != nil {
		t.Fatal(err)
	}
	if p.holding(4) != 0 || len(asked) == 0 {
		t.Fatalf("holding %s after every asker is back, asked %d times", p.holding(4), len(asked))
	}
	if next, err := loadPromises(dir, clock.read); err != nil || next.holding(4) != 0 {
		t.Errorf("the next agent of the Pod: holding %s, err %v; want the release kept", next.holding(4), err)
	}

	if err := p.give(5, 30*time.Second, ""); err != nil {
		t.Fatal(err)
	}
	if got := p.releasable(6); got != nil {
		t.Errorf("a promise to an asker that named no hostname is releasable to %q", got)
	}
}

// TestContactCheckPromisesNothing: asked whether it is back in contact, a
// silent agent says no and promises nothing; one in contact says so and
// relies on no promise from then on.
func TestContactCheckPromisesNothing(t *testing.T) {
	silent := witnessAgent(t, 20*time.Second, 3)
	answer := silent.answerWitness(witnessRequest{JobSetUID: "uid-1", Epoch: 3, Pod: "js-w-0-0", ContactCheck: true})
	if answer.InContact || answer.Promised || silent.promises.holding(4) != 0 {
		t.Fatalf("a silent agent asked a contact check: %+v, holding %s; want neither, nothing held", answer, silent.promises.holding(4))
	}
	back := witnessAgent(t, 0, 3)
	back.witnesses.heard(time.Now(), time.Now().Add(time.Hour), false)
	if answer := back.answerWitness(witnessRequest{JobSetUID: "uid-1", Pod: "js-w-0-1", ContactCheck: true}); !answer.InContact {
		t.Fatalf("an agent in contact: %+v", answer)
	}
	if got := back.witnesses.state(time.Now()); got != NotAsked {
		t.Errorf("after saying it is in contact, its witnesses' state is %v, want NotAsked: it relies on no promise", got)
	}
}
