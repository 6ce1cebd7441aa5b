package runtime

import (
	"bytes"
	"io"
	"reflect"
	"testing"

	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The task producer compresses with lz4 against an external Kafka and
// with snappy against the embedded broker (defaultCompression, issue 20),
// and a connector's producer.override.compression.type wins over either:
// its option comes after the defaults (applyProducerOverrides), and the
// client built from both uses the override's codec.
func TestProducerDefaultCompressionAndOverride(t *testing.T) {
	for _, tc := range []struct {
		bootstrap string
		want      kgo.CompressionCodec
	}{{"127.0.0.1:1", kgo.Lz4Compression()}, {"", kgo.SnappyCompression()}} {
		h := &Herder{cfg: WorkerConfig{"bootstrap.servers": tc.bootstrap}, brokers: []string{"127.0.0.1:1"}, producerSec: &kafkaSecuritySettings{}}
		codecs := func(extra ...kgo.Opt) []kgo.CompressionCodec {
			cl, err := kgo.NewClient(append(h.producerOptsWith(nil), extra...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			v, _ := cl.OptValue(kgo.ProducerBatchCompression).([]kgo.CompressionCodec)
			return v
		}
		if got := codecs(); !reflect.DeepEqual(got, []kgo.CompressionCodec{tc.want}) {
			t.Errorf("bootstrap.servers=%q: default codecs %v, want %v", tc.bootstrap, got, tc.want)
		}
		over, _, err := producerOverrides(map[string]string{ProducerOverridePrefix + "compression.type": "none"})
		if err != nil {
			t.Fatal(err)
		}
		if got := codecs(over...); !reflect.DeepEqual(got, []kgo.CompressionCodec{kgo.NoCompression()}) {
			t.Errorf("bootstrap.servers=%q: with producer.override.compression.type=none codecs %v", tc.bootstrap, got)
		}
	}
}

// Against an external Kafka the producer's lz4 frames carry no content
// checksum (lz4Compressor), and an override of compression.type gives
// kgo's compressor for its codec back.
func TestProducerLZ4WithoutContentChecksum(t *testing.T) {
	h := &Herder{cfg: WorkerConfig{"bootstrap.servers": "127.0.0.1:1"}, brokers: []string{"127.0.0.1:1"}, producerSec: &kafkaSecuritySettings{}}
	compressor := func(extra ...kgo.Opt) any {
		cl, err := kgo.NewClient(append(h.producerOptsWith(nil), extra...)...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		return cl.OptValue(kgo.WithCompressor)
	}
	if c, ok := compressor().(*lz4Compressor); !ok || c != lz4Default {
		t.Fatalf("external Kafka: compressor %T, want the lz4Compressor", compressor())
	}
	over, _, err := producerOverrides(map[string]string{ProducerOverridePrefix + "compression.type": "lz4"})
	if err != nil {
		t.Fatal(err)
	}
	if c := compressor(over...); c == nil {
		t.Fatal("with producer.override.compression.type no compressor")
	} else if _, ok := c.(*lz4Compressor); ok {
		t.Fatal("with producer.override.compression.type the compressor is still the lz4Compressor")
	}

	src := bytes.Repeat([]byte(`{"payload":{"after":{"id":1,"first_name":"Sally"}}}`), 5000)
	for i := 0; i < 3; i++ { // pooled writers are reset between batches
		out, codec := lz4Default.Compress(new(bytes.Buffer), src)
		if codec != kgo.CodecLz4 {
			t.Fatalf("codec %v", codec)
		}
		// Frame descriptor FLG (byte 4 after the magic): bit 2 is the
		// content checksum flag, bit 4 the block checksum flag.
		if flg := out[4]; flg&0x04 != 0 || flg&0x10 != 0 {
			t.Fatalf("FLG %08b: a checksum flag is set", flg)
		}
		got, err := io.ReadAll(lz4.NewReader(bytes.NewReader(out)))
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("round trip: %v, %d bytes of %d", err, len(got), len(src))
		}
	}
}
