package agent

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"
	"time"
)

// dnsTable answers names from a table until it is down; a name it does not
// hold is not found.
type dnsTable struct {
	addresses map[string][]string
	down      bool
	asked     []string
}

func (d *dnsTable) lookup(ctx context.Context, host string) ([]string, error) {
	d.asked = append(d.asked, host)
	if d.down {
		<-ctx.Done() // a DNS Service without endpoints drops the question
		return nil, ctx.Err()
	}
	if ips, ok := d.addresses[host]; ok {
		return ips, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func TestPeerAddressesResolve(t *testing.T) {
	cases := map[string]struct {
		learned   map[string][]string // the DNS while the agent learned
		now       map[string][]string // the DNS when the agent asks
		down      bool
		host      string
		want      []string
		wantError bool
	}{
		"the DNS answers: its answer, not the learned one": {
			learned: map[string][]string{"w-0-1.js": {"10.0.0.1"}},
			now:     map[string][]string{"w-0-1.js": {"10.0.0.9"}},
			host:    "w-0-1.js", want: []string{"10.0.0.9"},
		},
		"the DNS is down: the learned address": {
			learned: map[string][]string{"w-0-1.js": {"10.0.0.1"}},
			down:    true,
			host:    "w-0-1.js", want: []string{"10.0.0.1"},
		},
		"the DNS no longer knows the name: the learned address": {
			learned: map[string][]string{"w-0-1.js": {"10.0.0.1"}},
			now:     map[string][]string{},
			host:    "w-0-1.js", want: []string{"10.0.0.1"},
		},
		"the DNS is down and nothing was learned of the name": {
			learned: map[string][]string{"w-0-1.js": {"10.0.0.1"}},
			down:    true,
			host:    "w-0-2.js", wantError: true,
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dns := &dnsTable{addresses: c.learned}
			p := newPeerAddresses(dns.lookup)
			if !p.learn(context.Background(), []string{"w-0-1.js"}, time.Second) {
				t.Fatal("learn: not every name resolved")
			}
			dns.addresses, dns.down = c.now, c.down
			// The question's own deadline: the learned address must be
			// dialed well within it.
			ctx, cancel := context.WithTimeout(context.Background(), witnessTimeout)
			defer cancel()
			got, err := p.resolve(ctx, c.host)
			switch {
			case c.wantError && err == nil:
				t.Fatalf("resolve(%s) = %v, want an error", c.host, got)
			case !c.wantError && err != nil:
				t.Fatalf("resolve(%s): %v", c.host, err)
			case !slices.Equal(got, c.want):
				t.Errorf("resolve(%s) = %v, want %v", c.host, got, c.want)
			}
			if deadline, _ := ctx.Deadline(); !c.wantError && time.Until(deadline) < witnessTimeout/2 {
				t.Errorf("resolve took %v of the question's %v", witnessTimeout-time.Until(deadline), witnessTimeout)
			}
		})
	}
}

func TestPeerAddressesLearn(t *testing.T) {
	dns := &dnsTable{addresses: map[string][]string{"a.js": {"10.0.0.1"}, "b.js": {"10.0.0.2"}}}
	p := newPeerAddresses(dns.lookup)
	if !p.learn(context.Background(), []string{"a.js", "b.js"}, time.Second) {
		t.Fatal("learn: not every name resolved")
	}

	// b's Pod is replaced and not scheduled yet; c is a new witness (the
	// group grew); a is no longer one.
	dns.addresses = map[string][]string{"c.js": {"10.0.0.3"}}
	if p.learn(context.Background(), []string{"b.js", "c.js"}, time.Second) {
		t.Error("learn: every name resolved, want b's not")
	}
	want := map[string][]string{"b.js": {"10.0.0.2"}, "c.js": {"10.0.0.3"}}
	if len(p.known) != len(want) {
		t.Errorf("known = %v, want %v", p.known, want)
	}
	for host, ips := range want {
		if !slices.Equal(p.known[host], ips) {
			t.Errorf("known[%s] = %v, want %v", host, p.known[host], ips)
		}
	}
}

func TestPeerAddressesDial(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = listener.Close() }()
	_, port, _ := net.SplitHostPort(listener.Addr().String())
	dns := &dnsTable{addresses: map[string][]string{"a.js": {"127.0.0.1"}}}
	p := newPeerAddresses(dns.lookup)
	p.learn(context.Background(), []string{"a.js"}, time.Second)
	dns.down = true

	ctx, cancel := context.WithTimeout(context.Background(), witnessTimeout)
	defer cancel()
	for _, address := range []string{net.JoinHostPort("a.js", port), listener.Addr().String()} {
		asked := len(dns.asked)
		conn, err := p.dial(ctx, "tcp", address)
		if err != nil {
			t.Fatalf("dial %s: %v", address, err)
		}
		_ = conn.Close()
		if host, _, _ := net.SplitHostPort(address); net.ParseIP(host) != nil && len(dns.asked) != asked {
			t.Errorf("dial %s asked the DNS for %v", address, dns.asked[asked:])
		}
	}
	if _, err := p.dial(ctx, "tcp", net.JoinHostPort("b.js", port)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("dial b.js (never learned, DNS down) = %v, want the DNS's timeout", err)
	}
}
