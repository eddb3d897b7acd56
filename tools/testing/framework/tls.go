package framework

import (
	"crypto/tls"
	"net"
	"testing"
	"time"
)

// TLSHandshake connects to addr as a client whose highest TLS version is
// maxVersion and completes the handshake, without verifying the server's
// certificate: it answers whether the server accepts that version.
func TLSHandshake(addr string, maxVersion uint16) error {
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	//nolint:gosec // Only the protocol version is in question, not the server's identity.
	conn, err := tls.DialWithDialer(dialer, "tcp", addr, &tls.Config{InsecureSkipVerify: true, MaxVersion: maxVersion})
	if err != nil {
		return err
	}
	return conn.Close()
}

// FreeLoopbackAddress is a loopback address with a port nothing listens on
// as it returns, for a server under test to listen on.
func FreeLoopbackAddress(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
