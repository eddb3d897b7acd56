package framework

import (
	"crypto/tls"
	"net"
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
