package converters

import (
	"encoding/binary"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/hamba/avro/v2"
)

// unwrapUnion returns the branch value of a union hamba/avro decoded as
// {"type name": value}, or v itself.
func unwrapUnion(v any) any {
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		for _, x := range m {
			return x
		}
	}
	return v
}

// registerHTTP registers schema under subject on the test registry (as an
// operator or a CI pipeline would, with auto.register.schemas=false on the
// converter) and returns the response body.
func registerHTTP(t *testing.T, url, subject, schema string) string {
	t.Helper()
	return doHTTP(t, "POST", url+"/subjects/"+subject+"/versions", fmt.Sprintf(`{"schema":%q}`, schema))
}

func doHTTP(t *testing.T, method, url, body string) string {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if resp.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b.String())
	}
	return b.String()
}

// TestAvroConverterUseLatestVersion: with auto.register.schemas=false and
// use.latest.version=true, Confluent's serializer writes every record with
// the subject's latest schema and its id
// (AbstractKafkaSchemaSerDe.lookupLatestVersion, AbstractKafkaAvroSerializer;
// https://docs.confluent.io/platform/7.5/schema-registry/fundamentals/serdes-develop/index.html
// "use.latest.version"), after checking with latest.compatibility.strict
// (default true) that the latest schema can read the record's schema.
func TestAvroConverterUseLatestVersion(t *testing.T) {
	ts, n := testRegistry(t)
	rec := connect.StructSchema().Name("x.V").
		Field("id", connect.Prim(connect.Int32, false)).
		Field("name", connect.Prim(connect.String, true)).
		Field("gone", connect.Prim(connect.String, true)).Build()
	own, _ := avroSchemaJSON(rec, true)
	registerHTTP(t, ts.URL, "t-value", own)
	// v2 (BACKWARD compatible with v1): id promoted to long, "gone"
	// dropped, "extra" added with a default.
	latest := `{"type":"record","name":"V","namespace":"x","fields":[{"name":"id","type":"long"},{"name":"name","type":["null","string"],"default":null},{"name":"extra","type":"string","default":"none"}],"connect.name":"x.V"}`
	if got := registerHTTP(t, ts.URL, "t-value", latest); got != `{"id":2}` {
		t.Fatalf("register v2: %s", got)
	}
	c := NewAvroConverter()
	if err := c.Configure(map[string]string{"schema.registry.url": ts.URL, "auto.register.schemas": "false", "use.latest.version": "true"}, false); err != nil {
		t.Fatal(err)
	}
	before := n.Load()
	var b []byte
	for i := 0; i < 50; i++ {
		var err error
		if b, err = c.FromConnect("t", rec, connect.NewStruct(rec).Put("id", int32(42)).Put("name", "n").Put("gone", "dropped")); err != nil {
			t.Fatal(err)
		}
	}
	if got := n.Load() - before; got != 1 {
		t.Fatalf("%d registry requests for 50 records, want 1 (latest version cached)", got)
	}
	if b[0] != 0 || binary.BigEndian.Uint32(b[1:5]) != 2 {
		t.Fatalf("header % x: want the latest version's id 2", b[:5])
	}
	var got map[string]any
	if err := avro.Unmarshal(avro.MustParse(latest), b[5:], &got); err != nil {
		t.Fatalf("the payload is not in the latest schema: %v", err)
	}
	if got["id"] != int64(42) || unwrapUnion(got["name"]) != "n" || got["extra"] != "none" || len(got) != 3 {
		t.Fatalf("decoded with the latest schema: %v", got)
	}

	// use.latest.version only applies with auto.register.schemas=false
	// (Confluent's serializer registers first): the record's own schema,
	// version 1, id 1.
	auto := NewAvroConverter()
	auto.Configure(map[string]string{"schema.registry.url": ts.URL, "use.latest.version": "true"}, false)
	if b, err := auto.FromConnect("t", rec, connect.NewStruct(rec).Put("id", int32(1))); err != nil || binary.BigEndian.Uint32(b[1:5]) != 1 {
		t.Fatalf("auto.register.schemas=true with use.latest.version: %v, % x", err, b)
	}

	// The latest version cannot read the record's schema (a required
	// field without default the record lacks): strict mode fails with
	// Confluent's message; strict=false fails when writing instead.
	doHTTP(t, "PUT", ts.URL+"/config/u-value", `{"compatibility":"NONE"}`)
	registerHTTP(t, ts.URL, "u-value", own)
	bad := `{"type":"record","name":"V","namespace":"x","fields":[{"name":"id","type":"int"},{"name":"age","type":"int"}]}`
	registerHTTP(t, ts.URL, "u-value", bad)
	for strict, want := range map[string]string{
		"true":  "Set latest.compatibility.strict=false to disable this check",
		"false": "cannot be written with the latest schema of subject u-value (version 2, id 3)",
	} {
		c := NewAvroConverter()
		c.Configure(map[string]string{"schema.registry.url": ts.URL, "auto.register.schemas": "false", "use.latest.version": "true", "latest.compatibility.strict": strict}, false)
		_, err := c.FromConnect("u", rec, connect.NewStruct(rec).Put("id", int32(1)))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("strict=%s: %v, want %q", strict, err, want)
		}
	}
	if err := NewAvroConverter().Configure(map[string]string{"schema.registry.url": ts.URL, "latest.compatibility.strict": "maybe"}, false); err == nil {
		t.Error("latest.compatibility.strict=maybe accepted")
	}
}

// enumColor is a Connect string as Confluent's AvroData.toConnectSchema
// makes it from an Avro enum (and as an SMT or a converter round trip
// hands it to a source connector): the parameter
// io.confluent.connect.avro.Enum names the enum, one
// io.confluent.connect.avro.Enum.<symbol> parameter per symbol.
func enumColor(optional bool) *connect.Schema {
	b := connect.NewSchema(connect.String).Name("db.public.Color").
		Param("io.confluent.connect.avro.Enum", "db.public.Color").
		Param("io.confluent.connect.avro.Enum.RED", "RED").
		Param("io.confluent.connect.avro.Enum.GREEN", "GREEN").
		Param("io.confluent.connect.avro.Enum.BLUE", "BLUE").
		Param("io.confluent.connect.avro.enum.doc.Color", "a colour")
	if optional {
		b = b.Optional()
	}
	return b.Build()
}

// TestAvroEnhancedSchemaSupportGolden locks the Avro schema of enums with
// enhanced.avro.schema.support=true in testdata/avro/enhanced_enum.avsc.
// Expected from AvroData.fromConnectSchema, case STRING (confluentinc/
// schema-registry avro-data AvroData.java): an enum named by the
// io.confluent.connect.avro.Enum parameter (its namespace from that full
// name; "namespace":"" when it has none inside a namespaced record, as
// Avro's Name.writeName), symbols = the parameter keys after
// "io.confluent.connect.avro.Enum." in order, doc from
// io.confluent.connect.avro.enum.doc.<Connect short name>, default from
// io.confluent.connect.avro.enum.default.<Connect short name> (an unnamed
// schema's short name is ConnectDefault, taking an unnamed index), then the
// usual connect.* properties; a second use is a name reference. Debezium's
// io.debezium.data.Enum stays a string (AvroData only knows its own
// parameters). Without the option every one of them is a string.
func TestAvroEnhancedSchemaSupportGolden(t *testing.T) {
	mood := connect.NewSchema(connect.String).
		Param("io.confluent.connect.avro.Enum", "Mood").
		Param("io.confluent.connect.avro.Enum.OK", "OK").
		Param("io.confluent.connect.avro.Enum.MEH", "MEH").
		Param("io.confluent.connect.avro.enum.default.ConnectDefault", "OK").Build()
	dbz := connect.NewSchema(connect.String).Name("io.debezium.data.Enum").Version(1).Param("allowed", "a,b").Build()
	s := connect.StructSchema().Name("db.public.t.Value").
		Field("color", enumColor(false)).
		Field("color2", enumColor(true)).
		Field("mood", mood).
		Field("status", dbz).Build()
	got, err := avroSchemaJSONOpts(s, avroDataConfig{metaData: true, enhanced: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := avro.ParseWithCache(got, "", &avro.SchemaCache{}); err != nil {
		t.Fatalf("hamba/avro rejects %s: %v", got, err)
	}
	checkGolden(t, filepath.Join("..", "testdata", "avro", "enhanced_enum.avsc"), []byte(got+"\n"))
	for _, want := range []string{
		`{"name":"color","type":{"type":"enum","name":"Color","namespace":"db.public","doc":"a colour","symbols":["RED","GREEN","BLUE"],"connect.parameters":`,
		`{"name":"color2","type":["null","db.public.Color"],"default":null}`,
		`{"type":"enum","name":"Mood","namespace":"","symbols":["OK","MEH"],"default":"OK","connect.parameters":`,
		`{"name":"status","type":{"type":"string","connect.version":1,"connect.parameters":{"allowed":"a,b"},"connect.name":"io.debezium.data.Enum"}}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("schema lacks %s:\n%s", want, got)
		}
	}
	plain, _ := avroSchemaJSONOpts(s, avroDataConfig{metaData: true})
	if strings.Contains(plain, `"enum"`) {
		t.Errorf("enums without enhanced.avro.schema.support: %s", plain)
	}

	// Values: the index of the symbol; an unknown symbol is an error.
	st := connect.NewStruct(s).Put("color", "GREEN").Put("color2", "BLUE").Put("mood", "MEH").Put("status", "b")
	w := avro.NewWriter(nil, 64)
	enc := compileAvroEncoderOpts(s, avroDataConfig{metaData: true, enhanced: true})
	if err := enc(w, st); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := avro.Unmarshal(avro.MustParse(got), w.Buffer(), &back); err != nil {
		t.Fatal(err)
	}
	if back["color"] != "GREEN" || unwrapUnion(back["color2"]) != "BLUE" || back["mood"] != "MEH" || back["status"] != "b" {
		t.Fatalf("decoded %v", back)
	}
	w.Reset(nil)
	if err := enc(w, st.Put("color", "PINK")); err == nil || !strings.Contains(err.Error(), `"PINK" is not a symbol of enum db.public.Color`) {
		t.Fatalf("unknown symbol: %v", err)
	}
}

// TestAvroScrubInvalidNames: scrub.invalid.names=true makes record,
// namespace and field names valid Avro names as AvroData.doScrubName does
// (URL-encode, "x" before a leading digit, every other invalid character
// "_"); connect.name keeps the Connect name. Locked in
// testdata/avro/scrub_invalid_names.avsc.
func TestAvroScrubInvalidNames(t *testing.T) {
	for in, want := range map[string]string{
		"ok_name": "ok_name", "my-server": "my_server", "1t": "x1t", "first name": "first_name", "é": "_C3_A9", "a.b": "a_b",
	} {
		if got := scrubAvroName(in); got != want {
			t.Errorf("scrub %q = %q, want %q", in, got, want)
		}
	}
	s := connect.StructSchema().Name("my-server.public.1t.Value").
		Field("first name", connect.Prim(connect.String, false)).
		Field("ok", connect.Prim(connect.Int32, false)).Build()
	got, err := avroSchemaJSONOpts(s, avroDataConfig{metaData: true, scrub: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := avro.ParseWithCache(got, "", &avro.SchemaCache{}); err != nil {
		t.Fatalf("hamba/avro rejects %s: %v", got, err)
	}
	checkGolden(t, filepath.Join("..", "testdata", "avro", "scrub_invalid_names.avsc"), []byte(got+"\n"))
	want := `{"type":"record","name":"Value","namespace":"my_server.public.x1t","fields":[{"name":"first_name","type":"string"},{"name":"ok","type":"int"}],"connect.name":"my-server.public.1t.Value"}`
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	c := NewAvroConverter()
	c.Configure(map[string]string{"schema.registry.url": "http://127.0.0.1:1", "scrub.invalid.names": "true", "value.subject.name.strategy": "RecordNameStrategy"}, false)
	if sub := c.Subject("t", s); sub != "my_server.public.x1t.Value" {
		t.Errorf("RecordNameStrategy subject %s", sub)
	}
}

// TestAvroConnectMetaDataOff: connect.meta.data=false leaves out every
// connect.* property (AvroData.fromConnectSchema adds connect.doc,
// connect.version, connect.parameters, connect.default, connect.name and
// connect.type only under connectMetaData) but keeps the logical types and
// the Decimal scale/precision, which Avro readers need.
func TestAvroConnectMetaDataOff(t *testing.T) {
	s := connect.StructSchema().Name("x.Y").Version(3).
		Field("small", connect.Prim(connect.Int16, false)).
		Field("amount", connect.DecimalSchema(2, true)).
		Field("d", connect.NewSchema(connect.Int32).Name(connect.DateName).Version(1).Build()).Build()
	got, err := avroSchemaJSONOpts(s, avroDataConfig{metaData: false})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"record","name":"Y","namespace":"x","fields":[{"name":"small","type":"int"},{"name":"amount","type":["null",{"type":"bytes","scale":2,"precision":64,"logicalType":"decimal"}],"default":null},{"name":"d","type":{"type":"int","logicalType":"date"}}]}`
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	c := NewAvroConverter()
	if err := c.Configure(map[string]string{"schema.registry.url": "http://127.0.0.1:1", "connect.meta.data": "false"}, false); err != nil || c.data.metaData {
		t.Fatalf("connect.meta.data=false: %v %+v", err, c.data)
	}
}
