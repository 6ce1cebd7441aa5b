package broker

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The embedded broker accepts batches as large as the worker's producers
// make against it (BatchMaxBytes), even when they do not compress:
// a 1.5 MiB record of random bytes is over Kafka's (and kfake's) default
// message.max.bytes of 1,048,588 and under BatchMaxBytes, and reads
// back whole.
func TestEmbeddedBrokerTakesLargeBatches(t *testing.T) {
	b, err := Start(freeAddr(t), t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	val := make([]byte, 3<<19)
	rand.Read(val)
	if len(val) <= 1048588 || len(val) >= BatchMaxBytes {
		t.Fatalf("record of %d bytes does not test the limit", len(val))
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.AllowAutoTopicCreation(), kgo.ProducerBatchCompression(kgo.SnappyCompression()),
		kgo.ProducerBatchMaxBytes(BatchMaxBytes), kgo.ConsumeTopics("big"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "big", Value: val}).FirstErr(); err != nil {
		t.Fatalf("producing a %d-byte record: %v", len(val), err)
	}
	fs := cl.PollFetches(ctx)
	if err := fs.Err0(); err != nil {
		t.Fatal(err)
	}
	recs := fs.Records()
	if len(recs) != 1 || string(recs[0].Value) != string(val) {
		t.Fatalf("read back %d records", len(recs))
	}
}
