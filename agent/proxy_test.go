package agent_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"

	"github.com/fastjobset/jobset/agent/kubeclient"
)

// apiProxy stands between the agent and the apiserver, so that tests can
// answer 429, drop watches, or let requests through (authenticated as the
// test's admin).
type apiProxy struct {
	URL string
	// tooManyPatches answers this many PATCH requests with 429 Retry-After.
	tooManyPatches atomic.Int32
	retryAfter     string
	// gone answers this many watch requests that resume from a
	// resourceVersion with 410 Gone.
	gone atomic.Int32
	// denyEpoch, when set, answers every PATCH that writes this epoch
	// value with 403, as the epoch-not-lower rule of the agent's
	// admission policy does; denied counts them.
	denyEpoch atomic.Value
	denied    atomic.Int32
	// cut: every request is dropped unanswered, as on a node cut off from
	// the API server.
	cut atomic.Bool

	requests atomic.Int32
	mu       sync.Mutex
	server   *http.Server
	hijacked []net.Conn
}

func startProxy(cfg *rest.Config) *apiProxy {
	target, err := url.Parse(cfg.Host)
	Expect(err).NotTo(HaveOccurred())
	transport, err := rest.TransportFor(cfg)
	Expect(err).NotTo(HaveOccurred())
	reverse := httputil.NewSingleHostReverseProxy(target)
	reverse.Transport = transport
	reverse.FlushInterval = -1 // stream watch events at once

	listener, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	p := &apiProxy{URL: "http://" + listener.Addr().String(), retryAfter: "2"}
	p.server = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p.requests.Add(1)
			if p.cut.Load() {
				if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
					_ = conn.Close()
				}
				return
			}
			if r.Method == http.MethodPatch && p.tooManyPatches.Add(-1) >= 0 {
				w.Header().Set("Retry-After", p.retryAfter)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429,"message":"slow down","details":{"retryAfterSeconds":` + p.retryAfter + `}}`))
				return
			}
			if value, _ := p.denyEpoch.Load().(string); r.Method == http.MethodPatch && value != "" {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if strings.Contains(string(body), `:"`+value+`"`) {
					p.denied.Add(1)
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusForbidden)
					_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"rule epoch-not-lower: the Pod annotation may not decrease"}`))
					return
				}
			}
			if r.URL.Query().Get("watch") == "true" && r.URL.Query().Get("resourceVersion") != "" && p.gone.Add(-1) >= 0 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusGone)
				_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,"message":"too old resource version"}`))
				return
			}
			reverse.ServeHTTP(w, r)
		}),
		ConnState: func(c net.Conn, s http.ConnState) {
			if s == http.StateActive {
				p.mu.Lock()
				p.hijacked = append(p.hijacked, c)
				p.mu.Unlock()
			}
		},
	}
	go func() { _ = p.server.Serve(listener) }()
	return p
}

// cutOff drops every connection and every request until reconnect.
func (p *apiProxy) cutOff() {
	p.cut.Store(true)
	p.dropConnections()
}

func (p *apiProxy) reconnect() { p.cut.Store(false) }

// dropConnections cuts every open connection, as an apiserver restart or a
// load balancer would: the agent's watch ends.
func (p *apiProxy) dropConnections() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.hijacked {
		_ = c.Close()
	}
	p.hijacked = nil
}

func (p *apiProxy) close() { _ = p.server.Close() }

// client is how the agent reaches the apiserver through the proxy.
func (p *apiProxy) client() *kubeclient.Client {
	c, err := kubeclient.New(p.URL, &http.Client{}, "agent-test")
	Expect(err).NotTo(HaveOccurred())
	return c
}
