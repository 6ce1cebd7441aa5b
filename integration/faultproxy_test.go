package integration

import (
	"net"
	"sync"
	"testing"
	"time"
)

// faultProxy is a TCP proxy between connectd and a database that can drop
// every connection (as a network partition or a firewall reset does) or
// stall them (nothing forwarded either way for a while, connections kept
// open: a congested or half-dead link).
type faultProxy struct {
	t      *testing.T
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  map[net.Conn]bool
	until  time.Time // forwarding stalls until then
}

func startFaultProxy(t *testing.T, target string) *faultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{t: t, ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.drop() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

// host and port of the proxy's listener.
func (p *faultProxy) host() string { return "127.0.0.1" }
func (p *faultProxy) port() int    { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *faultProxy) serve(c net.Conn) {
	u, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[u] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { p.pipe(u, c); done <- struct{}{} }()
	go func() { p.pipe(c, u); done <- struct{}{} }()
	<-done
	c.Close()
	u.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, u)
	p.mu.Unlock()
}

// pipe copies src to dst, holding each chunk while the proxy stalls.
func (p *faultProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			for {
				p.mu.Lock()
				wait := time.Until(p.until)
				p.mu.Unlock()
				if wait <= 0 {
					break
				}
				time.Sleep(wait)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // io.EOF or a closed connection
			return
		}
	}
}

// drop closes every proxied connection (new ones are accepted).
func (p *faultProxy) drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// stall holds all traffic for d.
func (p *faultProxy) stall(d time.Duration) {
	p.mu.Lock()
	p.until = time.Now().Add(d)
	p.mu.Unlock()
}
