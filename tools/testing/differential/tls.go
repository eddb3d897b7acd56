package differential

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"time"
)

// What a server under a TLS policy (the TLSOptions feature gate: the
// minimum protocol version and the TLS 1.2 cipher suites of the admission
// and metrics servers) made of a client: it completed the handshake
// (Accepted), or ended it with a TLS alert (Refused, then the alert:
// "refused: protocol version not supported").
const (
	Accepted = "accepted"
	Refused  = "refused"
)

// TLSClient is a TLS client that a server accepts or refuses: one protocol
// version with Go's cipher suites for it, or TLS 1.2 with one cipher suite
// alone.
type TLSClient struct {
	Version uint16
	// Suite is the one cipher suite offered; 0 for Go's.
	Suite uint16
}

// versionNames are the protocol versions by the names both sides' policies
// use (Go's constants').
var versionNames = map[uint16]string{
	tls.VersionTLS10: "VersionTLS10",
	tls.VersionTLS11: "VersionTLS11",
	tls.VersionTLS12: "VersionTLS12",
	tls.VersionTLS13: "VersionTLS13",
}

// Path names the client in a field's path: "VersionTLS12", or with a
// suite "VersionTLS12[TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]".
func (c TLSClient) Path() string {
	name, ok := versionNames[c.Version]
	if !ok {
		name = tls.VersionName(c.Version)
	}
	if c.Suite == 0 {
		return name
	}
	return name + "[" + tls.CipherSuiteName(c.Suite) + "]"
}

// TLSClients are every protocol version from TLS 1.0 to 1.3 with Go's
// cipher suites, then TLS 1.2 with each cipher suite Go implements for it
// alone, the insecure ones too (a policy may name them), in Go's order.
func TLSClients() []TLSClient {
	var out []TLSClient
	for _, v := range []uint16{tls.VersionTLS10, tls.VersionTLS11, tls.VersionTLS12, tls.VersionTLS13} {
		out = append(out, TLSClient{Version: v})
	}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		if slices.Contains(s.SupportedVersions, tls.VersionTLS12) {
			out = append(out, TLSClient{Version: tls.VersionTLS12, Suite: s.ID})
		}
	}
	return out
}

// Dial opens a connection to the server under test.
type Dial func(ctx context.Context) (net.Conn, error)

// handshakeTimeout bounds one handshake.
const handshakeTimeout = 10 * time.Second

// Handshake runs one TLS handshake of c with the server dial reaches and
// returns Accepted, or Refused with the alert the server sent. Anything
// else (no connection, a connection closed without an alert, the server's
// internal error, as from a server without its certificate yet) says
// nothing of the server's policy and is an error, for the caller to try
// again.
func Handshake(ctx context.Context, dial Dial, c TLSClient) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	conn, err := dial(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	cfg := &tls.Config{
		//nolint:gosec // The protocol version and the cipher suite are in question, not the server's identity.
		InsecureSkipVerify: true,
		//nolint:gosec // TLS 1.0 and 1.1 clients, which a server must refuse.
		MinVersion: c.Version,
		MaxVersion: c.Version,
	}
	if c.Suite != 0 {
		cfg.CipherSuites = []uint16{c.Suite}
	}
	tc := tls.Client(conn, cfg)
	err = tc.HandshakeContext(ctx)
	if err == nil {
		return Accepted, nil
	}
	var remote *net.OpError
	if errors.As(err, &remote) && remote.Op == "remote error" && remote.Err != nil {
		alert := strings.TrimPrefix(remote.Err.Error(), "tls: ")
		if alert != "internal error" {
			return Refused + ": " + alert, nil
		}
	}
	return "", fmt.Errorf("%s: %w", c.Path(), err)
}

// TLS is what the server dial reaches made of each client:
// "<prefix>.<client's Path>" to Accepted or Refused with the alert. The
// first handshake that says nothing of the policy (Handshake's error)
// ends it with that error.
func TLS(ctx context.Context, prefix string, dial Dial, clients []TLSClient) (Fields, error) {
	out := Fields{}
	for _, c := range clients {
		v, err := Handshake(ctx, dial, c)
		if err != nil {
			return nil, err
		}
		out[prefix+"."+c.Path()] = v
	}
	return out, nil
}

// Alike merges the Fields of servers that must behave alike (the replicas
// of one, or the two metrics servers of ours, a controller's and a
// webhook's), by each server's name: a field has their common value where
// they agree, and otherwise each one's, "a: v; b: w" (Absent for one that
// lacks it), which no single server shows, so that Diff reports the field.
func Alike(byServer map[string]Fields) Fields {
	names := slices.Sorted(maps.Keys(byServer))
	all := Fields{}
	for _, f := range byServer {
		maps.Copy(all, f)
	}
	out := Fields{}
	for path := range all {
		values := make([]string, len(names))
		for i, name := range names {
			v, ok := byServer[name][path]
			if !ok {
				v = Absent
			}
			values[i] = v
		}
		if len(slices.Compact(slices.Clone(values))) == 1 {
			out[path] = values[0]
			continue
		}
		each := make([]string, len(names))
		for i, name := range names {
			each[i] = name + ": " + values[i]
		}
		out[path] = strings.Join(each, "; ")
	}
	return out
}
