// Package brokertest holds what the tests of the embedded broker and of
// its conformance with Apache Kafka share (broker/protocol_test.go,
// integration/broker_conformance_test.go).
package brokertest

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Request sends req at exactly req's version (a kgo client would pick the
// version) on a connection of its own to addr (host:port, PLAINTEXT) and
// returns the decoded answer. The exchange has 30 s; any failure to
// connect, send, read or decode fails t.
func Request(t testing.TB, addr string, req kmsg.Request) kmsg.Response {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("connectd-test"))
	if _, err := c.Write(f.AppendRequest(nil, req, 1)); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatalf("%s v%d to %s: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), addr, err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	body = body[4:] // correlation id
	resp := req.ResponseKind()
	// Every flexible response header has tags, except ApiVersions'.
	if resp.IsFlexible() && req.Key() != int16(kmsg.ApiVersions) {
		r := kbin.Reader{Src: body}
		kmsg.SkipTags(&r)
		body = r.Src
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("decoding %s v%d from %s: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), addr, err)
	}
	return resp
}
