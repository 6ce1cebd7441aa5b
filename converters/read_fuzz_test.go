package converters

import (
	"testing"
)

// FuzzJSONToConnect: whatever a topic holds, JsonConverter's reading (a
// sink task's, connectd verify's) returns a value or an error, never panics.
func FuzzJSONToConnect(f *testing.F) {
	for _, s := range []string{
		`{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"},"field":"d"}]},"payload":{"id":1,"d":"AQI="}}`,
		`{"schema":{"type":"array","items":{"type":"string"}},"payload":["a",null]}`,
		`{"schema":{"type":"map","keys":{"type":"string"},"values":{"type":"int64"}},"payload":{"a":1}}`,
		`{"id":1}`, `null`, `[1,2]`, `{"schema":null,"payload":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, schemas := range []bool{true, false} {
			c := NewJSONConverter()
			c.SchemasEnable = schemas
			c.ToConnect("t", b)
		}
	})
}
