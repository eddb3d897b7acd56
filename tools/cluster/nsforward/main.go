// Command nsforward makes the local cluster's API server, which listens
// only inside the cluster's network namespace, reachable from the host's
// loopback: it accepts on 127.0.0.1 and dials each connection from inside
// the namespace. Tests and kubectl on the host then use an ordinary
// kubeconfig.
//
//	nsforward -netns /run/jobset-cluster/net -listen 127.0.0.1:16443 -target 198.18.0.1:6443
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

func main() {
	netns := flag.String("netns", "", "Network namespace file to dial from (required).")
	listen := flag.String("listen", "127.0.0.1:16443", "Loopback address to accept on.")
	target := flag.String("target", "", "Address to dial inside the namespace (required).")
	flag.Parse()
	if *netns == "" || *target == "" {
		fmt.Fprintln(os.Stderr, "nsforward: -netns and -target are required")
		os.Exit(2)
	}
	if host, _, err := net.SplitHostPort(*listen); err != nil || !net.ParseIP(host).IsLoopback() {
		fmt.Fprintf(os.Stderr, "nsforward: -listen %q: must be a loopback address\n", *listen)
		os.Exit(2)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nsforward:", err)
		os.Exit(1)
	}
	for {
		conn, err := l.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "nsforward:", err)
			os.Exit(1)
		}
		go forward(conn, *netns, *target)
	}
}

func forward(conn net.Conn, netns, target string) {
	defer conn.Close()
	upstream, err := dialIn(netns, target)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nsforward:", err)
		return
	}
	defer upstream.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(upstream, conn); done <- struct{}{} }()
	go func() { _, _ = io.Copy(conn, upstream); done <- struct{}{} }()
	<-done
}

// dialIn dials target from inside the namespace: on a thread of its own
// that enters the namespace and is then discarded (never unlocked), so no
// other goroutine runs in the wrong namespace. The socket keeps the
// namespace it was created in.
func dialIn(netns, target string) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		fd, err := unix.Open(netns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			err = unix.Setns(fd, unix.CLONE_NEWNET)
			unix.Close(fd)
		}
		if err != nil {
			ch <- result{err: fmt.Errorf("entering %s: %w", netns, err)}
			return
		}
		conn, err := net.Dial("tcp", target)
		if err != nil && strings.Contains(err.Error(), "connection refused") {
			err = fmt.Errorf("%w (is the cluster up?)", err)
		}
		ch <- result{conn: conn, err: err}
	}()
	r := <-ch
	return r.conn, r.err
}
