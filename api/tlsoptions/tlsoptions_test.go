package tlsoptions

import (
	"crypto/tls"
	"flag"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/fastjobset/jobset/api/features"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

func TestServerConfig(t *testing.T) {
	on := features.Gates{}
	off := on.With(features.TLSOptions, false)
	for name, tc := range map[string]struct {
		args         []string
		gates        features.Gates
		wantMin      uint16
		wantSuites   []uint16
		wantErrParts []string
	}{
		"unset: TLS 1.2 and Go's suites": {
			gates: on, wantMin: tls.VersionTLS12,
		},
		"TLS 1.3": {
			args: []string{"--tls-min-version=VersionTLS13"}, gates: on, wantMin: tls.VersionTLS13,
		},
		"TLS 1.2 with two suites, given in two flags": {
			args: []string{"--tls-min-version=VersionTLS12",
				"--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"},
			gates: on, wantMin: tls.VersionTLS12,
			wantSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384},
		},
		"the CHACHA20 suites by the names crypto/tls had before SHA256, as community accepts them": {
			args:  []string{"--tls-cipher-suites=TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305,TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305"},
			gates: on, wantMin: tls.VersionTLS12,
			wantSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256},
		},
		"the gate off, nothing set": {gates: off},
		"the gate off and a flag set": {
			args: []string{"--tls-min-version=VersionTLS13"}, gates: off,
			wantErrParts: []string{"--tls-min-version", "TLSOptions feature gate"},
		},
		"TLS 1.1 is refused as insecure": {
			args: []string{"--tls-min-version=VersionTLS11"}, gates: on,
			wantErrParts: []string{"--tls-min-version=VersionTLS11", "insecure", "use VersionTLS12 or VersionTLS13"},
		},
		"a version that is not one": {
			args: []string{"--tls-min-version=1.3"}, gates: on,
			wantErrParts: []string{`--tls-min-version="1.3"`, "use VersionTLS12 or VersionTLS13"},
		},
		"an unknown suite is named, with examples": {
			args: []string{"--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_MADE_UP"}, gates: on,
			wantErrParts: []string{"--tls-cipher-suites", "TLS_MADE_UP", "for example TLS_"},
		},
		"a TLS 1.3 suite has no effect and is refused": {
			args: []string{"--tls-cipher-suites=TLS_AES_128_GCM_SHA256"}, gates: on,
			wantErrParts: []string{"--tls-cipher-suites", "TLS_AES_128_GCM_SHA256", "TLS 1.3"},
		},
		"suites with TLS 1.3 as the minimum": {
			args:         []string{"--tls-min-version=VersionTLS13", "--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},
			gates:        on,
			wantErrParts: []string{"--tls-cipher-suites may not be set with --tls-min-version=VersionTLS13"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			var o Options
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			o.BindFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			apply, err := o.ServerConfig(tc.gates)
			if len(tc.wantErrParts) > 0 {
				if err == nil {
					t.Fatalf("no error, want one with %q", tc.wantErrParts)
				}
				for _, part := range tc.wantErrParts {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("error %q lacks %q", err, part)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var c tls.Config
			apply(&c)
			if c.MinVersion != tc.wantMin || !slices.Equal(c.CipherSuites, tc.wantSuites) {
				t.Errorf("MinVersion %x, CipherSuites %x; want %x, %x", c.MinVersion, c.CipherSuites, tc.wantMin, tc.wantSuites)
			}
		})
	}
}

// A server that applies the options refuses a client below the minimum
// and serves one at it.
func TestServerRefusesClientsBelowTheMinimum(t *testing.T) {
	apply, err := Options{MinVersion: "VersionTLS13"}.ServerConfig(features.Gates{})
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	server.TLS = &tls.Config{}
	apply(server.TLS)
	server.StartTLS()
	defer server.Close()

	if err := framework.TLSHandshake(server.Listener.Addr().String(), tls.VersionTLS12); err == nil {
		t.Errorf("a TLS 1.2 client was served by a server that requires TLS 1.3")
	}
	if err := framework.TLSHandshake(server.Listener.Addr().String(), tls.VersionTLS13); err != nil {
		t.Errorf("a TLS 1.3 client was refused: %v", err)
	}
}
