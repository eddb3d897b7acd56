package differential

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// serve runs a TLS server on loopback with cfg (a self-signed RSA
// certificate unless cfg has a way to get one) for the test, completing
// handshakes only, and returns how to dial it.
func serve(t *testing.T, cfg *tls.Config) Dial {
	t.Helper()
	if cfg.GetCertificate == nil {
		cfg.Certificates = []tls.Certificate{selfSigned(t)}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				_ = tls.Server(conn, cfg).Handshake()
			}()
		}
	}()
	return dialTo(l.Addr().String())
}

func dialTo(addr string) Dial {
	return func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
}

var testCert *tls.Certificate

func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	if testCert != nil {
		return *testCert
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	testCert = &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return *testCert
}

func TestTLSClients(t *testing.T) {
	clients := TLSClients()
	var paths []string
	for _, c := range clients {
		paths = append(paths, c.Path())
	}
	for _, want := range []string{
		"VersionTLS10", "VersionTLS11", "VersionTLS12", "VersionTLS13",
		"VersionTLS12[TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]",
		"VersionTLS12[TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]",
		"VersionTLS12[TLS_RSA_WITH_AES_128_CBC_SHA]",
	} {
		if !strings.Contains(strings.Join(paths, " "), want) {
			t.Errorf("TLSClients lack %s: %v", want, paths)
		}
	}
	for _, p := range paths {
		if strings.Contains(p, "TLS_AES_") || strings.Contains(p, "TLS_CHACHA20_POLY1305_SHA256") {
			t.Errorf("TLSClients offer the TLS 1.3 suite %s under TLS 1.2", p)
		}
	}
}

// A server's policy shows in what it accepted and refused, by client.
func TestTLS(t *testing.T) {
	ctx := context.Background()
	suites := []uint16{tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}
	cases := map[string]struct {
		cfg  *tls.Config
		want Fields
	}{
		"minimum TLS 1.3": {
			cfg: &tls.Config{MinVersion: tls.VersionTLS13},
			want: Fields{
				"s.VersionTLS10": "refused: protocol version not supported",
				"s.VersionTLS11": "refused: protocol version not supported",
				"s.VersionTLS12": "refused: protocol version not supported",
				"s.VersionTLS13": Accepted,
				"s.VersionTLS12[TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384]": "refused: protocol version not supported",
				"s.VersionTLS12[TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]": "refused: protocol version not supported",
			},
		},
		"TLS 1.2 with two suites": {
			cfg: &tls.Config{MinVersion: tls.VersionTLS12, CipherSuites: suites},
			want: Fields{
				"s.VersionTLS10": "refused: protocol version not supported",
				"s.VersionTLS12": Accepted,
				"s.VersionTLS13": Accepted,
				"s.VersionTLS12[TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384]": Accepted,
				// Allowed, but not with an RSA certificate.
				"s.VersionTLS12[TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]": "refused: handshake failure",
				"s.VersionTLS12[TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]":   "refused: handshake failure",
				"s.VersionTLS12[TLS_RSA_WITH_AES_128_CBC_SHA]":            "refused: handshake failure",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := TLS(ctx, "s", serve(t, tc.cfg), TLSClients())
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(TLSClients()) {
				t.Errorf("TLS: %d fields, want one per client, %d", len(got), len(TLSClients()))
			}
			for path, want := range tc.want {
				if got[path] != want {
					t.Errorf("%s: %q, want %q", path, got[path], want)
				}
			}
		})
	}
}

// What says nothing of the policy is an error, not a refusal.
func TestHandshakeErrors(t *testing.T) {
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	closed := dialTo(l.Addr().String())
	l2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nobody := dialTo(l2.Addr().String())
	l2.Close()
	t.Cleanup(func() { l.Close() })
	noCert := serve(t, &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		return nil, errors.New("no certificate yet")
	}})
	for name, dial := range map[string]Dial{
		"closed without an alert":     closed,
		"nothing listens":             nobody,
		"the server's internal error": noCert,
	} {
		t.Run(name, func(t *testing.T) {
			if v, err := Handshake(ctx, dial, TLSClient{Version: tls.VersionTLS13}); err == nil {
				t.Errorf("Handshake: %q, want an error", v)
			}
		})
	}
}

func TestAlike(t *testing.T) {
	got := Alike(map[string]Fields{
		"b": {"agree": Accepted, "differ": Accepted, "one": "x"},
		"a": {"agree": Accepted, "differ": "refused: handshake failure"},
	})
	want := Fields{
		"agree":  Accepted,
		"differ": "a: refused: handshake failure; b: accepted",
		"one":    "a: (absent); b: x",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Alike (-want +got):\n%s", diff)
	}
	if got := Alike(map[string]Fields{"only": {"f": "v"}}); !cmp.Equal(got, Fields{"f": "v"}) {
		t.Errorf("Alike of one server: %v", got)
	}
}
