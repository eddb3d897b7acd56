package kubeclient

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serviceAccount writes what the kubelet mounts: the cluster CA and a token.
func serviceAccount(t *testing.T, server *httptest.Server, token string) string {
	t.Helper()
	dir := t.TempDir()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	writeToken(t, dir, token)
	return dir
}

func writeToken(t *testing.T, dir, token string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestInClusterVerifiesTheServerAndSendsTheRotatedToken(t *testing.T) {
	var authorizations []string
	server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authorizations = append(authorizations, r.Header.Get("Authorization"))
	}))
	defer server.Close()
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(server.URL, "https://"))
	env := map[string]string{"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port}
	dir := serviceAccount(t, server, "first")

	c, err := inCluster(func(k string) string { return env[k] }, dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	token := c.http.Transport.(*bearer).token
	token.now = func() time.Time { return now }
	patch := func() {
		t.Helper()
		if err := c.MergePatch(context.Background(), Resource{Version: "v1", Resource: "pods"}, "ns", "p", []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}

	patch()
	writeToken(t, dir, "second") // the kubelet rotates the token
	patch()                      // within the reread period: the cached token
	now = now.Add(tokenRereadPeriod)
	patch()
	// A failed reread keeps the last token.
	if err := os.Remove(filepath.Join(dir, "token")); err != nil {
		t.Fatal(err)
	}
	now = now.Add(tokenRereadPeriod)
	patch()

	want := []string{"Bearer first", "Bearer first", "Bearer second", "Bearer second"}
	if strings.Join(authorizations, ",") != strings.Join(want, ",") {
		t.Errorf("Authorization headers: got %q, want %q", authorizations, want)
	}
}

func TestInClusterRejectsAServerTheClusterCADidNotSign(t *testing.T) {
	server := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer server.Close()
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(server.URL, "https://"))
	env := map[string]string{"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port}
	dir := serviceAccount(t, server, "t")
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), selfSignedCA(t), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := inCluster(func(k string) string { return env[k] }, dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	err = c.MergePatch(context.Background(), Resource{Version: "v1", Resource: "pods"}, "ns", "p", []byte(`{}`))
	if err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Errorf("got %v, want the server's certificate refused", err)
	}
}

func selfSignedCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "another cluster"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestInClusterConfigurationErrors(t *testing.T) {
	server := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer server.Close()
	full := map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
	cases := map[string]struct {
		env     map[string]string
		corrupt func(dir string) error
		want    string
	}{
		"no service environment": {
			env: map[string]string{}, want: "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set",
		},
		"no CA (token not mounted)": {
			env: full, corrupt: func(dir string) error { return os.Remove(filepath.Join(dir, "ca.crt")) }, want: "automountServiceAccountToken",
		},
		"a CA file without a certificate": {
			env: full, corrupt: func(dir string) error { return os.WriteFile(filepath.Join(dir, "ca.crt"), []byte("junk"), 0o600) }, want: "holds no PEM certificate",
		},
		"an empty token": {
			env: full, corrupt: func(dir string) error { return os.WriteFile(filepath.Join(dir, "token"), nil, 0o600) }, want: "token is empty",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := serviceAccount(t, server, "t")
			if tc.corrupt != nil {
				if err := tc.corrupt(dir); err != nil {
					t.Fatal(err)
				}
			}
			_, err := inCluster(func(k string) string { return tc.env[k] }, dir, "test")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
