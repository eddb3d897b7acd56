// Package outage plays an API server outage for tests: a TCP proxy in
// front of the API server that a test takes down (open connections cut, new
// ones refused, as when the API server's process is gone) and brings back
// on the same address.
package outage

import (
	"io"
	"net"
	"net/url"
	"sync"

	"k8s.io/client-go/rest"
)

// Proxy forwards TCP connections to the API server; TLS passes through, so
// clients keep the API server's certificate and credentials.
type Proxy struct {
	addr, target string

	mu       sync.Mutex
	listener net.Listener
	conns    map[net.Conn]struct{}
	wg       sync.WaitGroup
}

// Start proxies 127.0.0.1:<free port> to the host of cfg.
func Start(cfg *rest.Config) (*Proxy, error) {
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{addr: l.Addr().String(), target: u.Host, conns: map[net.Conn]struct{}{}}
	p.serve(l)
	return p, nil
}

// Config is cfg pointed at the proxy.
func (p *Proxy) Config(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Host = "https://" + p.addr
	return c
}

// Down cuts every connection and refuses new ones until Up.
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.listener == nil {
		return
	}
	_ = p.listener.Close()
	p.listener = nil
	for c := range p.conns {
		_ = c.Close()
	}
}

// Up accepts connections again, on the same address.
func (p *Proxy) Up() error {
	p.mu.Lock()
	up := p.listener != nil
	p.mu.Unlock()
	if up {
		return nil
	}
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.serve(l)
	return nil
}

// Close takes the proxy down for good and waits for its goroutines.
func (p *Proxy) Close() {
	p.Down()
	p.wg.Wait()
}

func (p *Proxy) serve(l net.Listener) {
	p.mu.Lock()
	p.listener = l
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			p.wg.Go(func() { p.forward(c) })
		}
	})
}

func (p *Proxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.listener == nil { // went down meanwhile
		p.mu.Unlock()
		_ = c.Close()
		_ = up.Close()
		return
	}
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	// Either direction ending (or Down closing both) ends the connection.
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	_ = c.Close()
	_ = up.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}
