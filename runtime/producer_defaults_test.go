package runtime

import (
	"reflect"
	"testing"

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
