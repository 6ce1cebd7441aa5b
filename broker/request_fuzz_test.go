package broker

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/connectd/connectd/broker/brokertest"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzRequestDecoding: whatever bytes a client sends as a request — any API
// key and version, truncated or corrupt bodies, lying lengths — the embedded
// broker answers or closes that connection, and keeps serving others: after
// each input an ApiVersions request on a new connection is answered.
func FuzzRequestDecoding(f *testing.F) {
	fmtr := kmsg.NewRequestFormatter(kmsg.FormatterClientID("fuzz"))
	for _, r := range []kmsg.Request{kmsg.NewPtrApiVersionsRequest(), kmsg.NewPtrMetadataRequest(), kmsg.NewPtrProduceRequest(),
		kmsg.NewPtrFetchRequest(), kmsg.NewPtrCreateTopicsRequest(), kmsg.NewPtrJoinGroupRequest(), kmsg.NewPtrInitProducerIDRequest(),
		kmsg.NewPtrDescribeConfigsRequest(), kmsg.NewPtrCreateACLsRequest()} {
		r.SetVersion(r.MaxVersion())
		f.Add(fmtr.AppendRequest(nil, r, 7)[4:]) // without the length prefix
	}
	b, err := Start(freeAddr(f), f.TempDir(), false)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(b.Close)
	f.Fuzz(func(t *testing.T, frame []byte) {
		c, err := net.DialTimeout("tcp", b.Addr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(2 * time.Second))
		c.Write(binary.BigEndian.AppendUint32(nil, uint32(len(frame))))
		c.Write(frame)
		var one [1]byte
		c.Read(one[:]) // an answer, a close or the deadline
		c.Close()
		api := kmsg.NewPtrApiVersionsRequest()
		api.SetVersion(3)
		api.ClientSoftwareName, api.ClientSoftwareVersion = "fuzz", "1"
		if resp := brokertest.Request(t, b.Addr(), api).(*kmsg.ApiVersionsResponse); resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
			t.Fatalf("the broker stopped answering ApiVersions after %x: %+v", frame, resp)
		}
	})
}
