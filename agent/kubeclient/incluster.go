package kubeclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ServiceAccountDir is where the kubelet mounts a Pod's service account
// credentials.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// tokenRereadPeriod bounds how long a rotated token goes unnoticed: the
// kubelet refreshes projected tokens well before they expire (client-go
// rereads its token file on the same period).
const tokenRereadPeriod = time.Minute

// InCluster returns the client of a process in a Pod: the API server from
// KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, verified with the
// cluster CA, authenticated with the Pod's service account token.
func InCluster(userAgent string) (*Client, error) {
	return inCluster(os.Getenv, ServiceAccountDir, userAgent)
}

func inCluster(getenv func(string) string, dir, userAgent string) (*Client, error) {
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errors.New("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set: not running in a Pod, or the Pod has no service links to the API server")
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("reading the cluster CA: %w (is the agent's token mounted? With automountServiceAccountToken: false, mount the projected volume jobset-agent-token at %s into the agent container, as agent injection does)", err, dir)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s holds no PEM certificate", filepath.Join(dir, "ca.crt"))
	}
	token := &tokenFile{path: filepath.Join(dir, "token"), now: time.Now}
	if _, err := token.get(); err != nil {
		return nil, fmt.Errorf("reading the service account token: %w", err)
	}
	transport := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
		// A watch on a connection that died silently would wait forever,
		// and the agent's fence counts an open connection as contact: ping
		// after a short silence, give up soon after (see PingAfter).
		HTTP2: &http.HTTP2Config{SendPingTimeout: PingAfter, PingTimeout: PingTimeout},
	}
	c, err := New("https://"+net.JoinHostPort(host, port),
		&http.Client{Transport: &bearer{token: token, next: transport}}, userAgent)
	if err != nil {
		return nil, err
	}
	c.linkSlack = LinkSlack
	return c, nil
}

// The in-cluster transport's HTTP/2 health check: after PingAfter without a
// frame it pings the API server, and closes the connection when no answer
// comes within PingTimeout. A connection that died silently thus looks open
// for LinkSlack at most, which the agent's fence counts as silence.
const (
	PingAfter   = 5 * time.Second
	PingTimeout = 3 * time.Second
	LinkSlack   = PingAfter + PingTimeout
)

// tokenFile reads a bearer token from a file the kubelet rotates.
type tokenFile struct {
	path string
	now  func() time.Time

	mu     sync.Mutex
	token  string
	readAt time.Time
}

// get returns the token, read again once tokenRereadPeriod has passed; a
// failed reread keeps the last token, which is still valid for a while.
func (t *tokenFile) get() (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token != "" && t.now().Sub(t.readAt) < tokenRereadPeriod {
		return t.token, nil
	}
	raw, err := os.ReadFile(t.path)
	token := strings.TrimSpace(string(raw))
	switch {
	case err == nil && token == "":
		err = fmt.Errorf("%s is empty", t.path)
	case err == nil:
		t.token, t.readAt = token, t.now()
	}
	if t.token == "" {
		return "", err
	}
	return t.token, nil
}

// bearer adds the service account token to every request.
type bearer struct {
	token *tokenFile
	next  http.RoundTripper
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	token, err := b.token.get()
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+token)
	return b.next.RoundTrip(req)
}
