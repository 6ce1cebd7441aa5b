package converters

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
)

// AvroConverterClass is the class name of Confluent's Avro converter.
const AvroConverterClass = "io.confluent.connect.avro.AvroConverter"

// Subject name strategies (io.confluent.kafka.serializers.subject.*).
const (
	TopicNameStrategy       = "io.confluent.kafka.serializers.subject.TopicNameStrategy"
	RecordNameStrategy      = "io.confluent.kafka.serializers.subject.RecordNameStrategy"
	TopicRecordNameStrategy = "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy"
)

// AvroConverter is io.confluent.connect.avro.AvroConverter: each record is
// the Confluent wire format, magic byte 0, the 4-byte big-endian schema id,
// then the Avro binary encoding of the value. The Avro schema is the one
// Confluent's AvroData derives from the Connect schema (avro_schema.go); it
// is registered (auto.register.schemas=true, the default), looked up, or
// taken as the subject's latest version (use.latest.version=true) once per
// *connect.Schema and topic: after that, a record costs no HTTP call and no
// schema work, only the encoding.
type AvroConverter struct {
	client       *sr.Client
	isKey        bool
	autoRegister bool
	useLatest    bool
	latestStrict bool
	strategy     string
	data         avroDataConfig
	timeout      time.Duration

	mu    sync.RWMutex
	cache map[*connect.Schema]*avroEntry // by schema, for its first topic
	other map[avroKey]*avroEntry         // the same schema on other topics
	miss  sync.Mutex                     // one registry round trip at a time

	writers sync.Pool

	// readers decode records by writer schema id (avro_read.go).
	readers map[int]*avroReader
}

type avroKey struct {
	s     *connect.Schema
	topic string
}

type avroEntry struct {
	topic  string
	header [5]byte
	enc    avroEncFn
	// toLatest, with use.latest.version and a latest version that is not
	// the record's schema, rewrites the record's Avro encoding into the
	// latest schema's (Avro schema resolution: own schema as writer, the
	// latest as reader).
	toLatest func([]byte) ([]byte, error)
}

var _ connect.Converter = (*AvroConverter)(nil)

// NewAvroConverter returns an unconfigured converter; Configure must be
// called before use.
func NewAvroConverter() *AvroConverter { return &AvroConverter{} }

// Configure reads the converter properties of Confluent's
// AvroConverterConfig: schema.registry.url (required; comma-separated),
// auto.register.schemas (true), use.latest.version (false) with
// latest.compatibility.strict (true),
// key.subject.name.strategy / value.subject.name.strategy
// (TopicNameStrategy; RecordNameStrategy, TopicRecordNameStrategy),
// basic.auth.credentials.source (URL or USER_INFO) with
// basic.auth.user.info (or schema.registry.basic.auth.user.info),
// and the AvroDataConfig keys connect.meta.data (true),
// enhanced.avro.schema.support (false: Connect strings carrying
// io.confluent.connect.avro.Enum parameters become Avro enums) and
// scrub.invalid.names (false: record, namespace and field names made valid
// Avro names).
func (c *AvroConverter) Configure(props map[string]string, isKey bool) error {
	*c = AvroConverter{isKey: isKey, autoRegister: true, latestStrict: true, data: avroDataConfig{metaData: true},
		strategy: TopicNameStrategy, timeout: 30 * time.Second}
	raw := strings.TrimSpace(props["schema.registry.url"])
	if raw == "" {
		return errors.New("Missing required configuration \"schema.registry.url\" which has no default value.")
	}
	boolProp := func(k string, dst *bool) error {
		v, ok := props[k]
		if !ok {
			return nil
		}
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
			*dst = true
		case "false":
			*dst = false
		default:
			return fmt.Errorf("Invalid value %s for configuration %s: Expected value to be either true or false", v, k)
		}
		return nil
	}
	for k, dst := range map[string]*bool{
		"auto.register.schemas": &c.autoRegister, "use.latest.version": &c.useLatest, "latest.compatibility.strict": &c.latestStrict,
		"connect.meta.data": &c.data.metaData, "enhanced.avro.schema.support": &c.data.enhanced, "scrub.invalid.names": &c.data.scrub,
	} {
		if err := boolProp(k, dst); err != nil {
			return err
		}
	}
	skey := "value.subject.name.strategy"
	if isKey {
		skey = "key.subject.name.strategy"
	}
	if v := strings.TrimSpace(props[skey]); v != "" {
		switch v {
		case TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy:
			c.strategy = v
		case "TopicNameStrategy", "RecordNameStrategy", "TopicRecordNameStrategy":
			c.strategy = "io.confluent.kafka.serializers.subject." + v
		default:
			return fmt.Errorf("Invalid value %s for configuration %s: Class %s could not be found.", v, skey, v)
		}
	}
	var urls []string
	var user, pass string
	var urlUser bool
	for _, u := range strings.Split(raw, ",") {
		u = strings.TrimSpace(u)
		if u == "" {
			continue
		}
		pu, err := url.Parse(u)
		if err != nil || pu.Host == "" {
			return fmt.Errorf("Invalid value %s for configuration schema.registry.url: not a URL like http://host:port", u)
		}
		if pu.User != nil && !urlUser {
			user = pu.User.Username()
			pass, _ = pu.User.Password()
			urlUser = true
		}
		pu.User = nil
		urls = append(urls, pu.String())
	}
	opts := []sr.ClientOpt{sr.URLs(urls...)}
	switch src := strings.ToUpper(strings.TrimSpace(props["basic.auth.credentials.source"])); src {
	case "", "URL":
		if urlUser {
			opts = append(opts, sr.BasicAuth(user, pass))
		}
	case "USER_INFO":
		info := props["basic.auth.user.info"]
		if info == "" {
			info = props["schema.registry.basic.auth.user.info"]
		}
		u, p, ok := strings.Cut(info, ":")
		if !ok {
			return errors.New("Invalid value for configuration basic.auth.user.info: expected user:password")
		}
		opts = append(opts, sr.BasicAuth(u, p))
	default:
		return fmt.Errorf("Invalid value %s for configuration basic.auth.credentials.source: String must be one of: URL, USER_INFO", src)
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("schema.registry.url: %w", err)
	}
	c.client = cl
	c.cache = map[*connect.Schema]*avroEntry{}
	c.other = map[avroKey]*avroEntry{}
	return nil
}

// FromConnect encodes v. A nil value is a nil record value (a tombstone),
// as Confluent's serializer returns null for null. Errors from the
// registry (an incompatible schema: 409) carry the registry's message.
func (c *AvroConverter) FromConnect(topic string, s *connect.Schema, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	if s == nil {
		return nil, errors.New("avro converter: schemaless values are not supported (a Connect schema is required)")
	}
	e, err := c.entry(topic, s)
	if err != nil {
		return nil, err
	}
	w, _ := c.writers.Get().(*avro.Writer)
	if w == nil {
		w = avro.NewWriter(nil, 512)
	}
	w.Reset(nil)
	w.Write(e.header[:])
	if err := e.enc(w, v); err != nil {
		c.writers.Put(w)
		return nil, err
	}
	if e.toLatest != nil {
		body, err := e.toLatest(w.Buffer()[5:])
		c.writers.Put(w)
		if err != nil {
			return nil, err
		}
		return append(e.header[:], body...), nil
	}
	out := make([]byte, len(w.Buffer()))
	copy(out, w.Buffer())
	c.writers.Put(w)
	return out, nil
}

func (c *AvroConverter) entry(topic string, s *connect.Schema) (*avroEntry, error) {
	c.mu.RLock()
	e := c.cache[s]
	if e != nil && e.topic != topic {
		e = c.other[avroKey{s, topic}]
	}
	c.mu.RUnlock()
	if e != nil {
		return e, nil
	}
	c.miss.Lock()
	defer c.miss.Unlock()
	c.mu.RLock()
	e = c.cache[s]
	if e != nil && e.topic != topic {
		e = c.other[avroKey{s, topic}]
	}
	c.mu.RUnlock()
	if e != nil {
		return e, nil
	}
	e, err := c.newEntry(topic, s)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.cache)+len(c.other) >= schemaCacheSize {
		c.cache = map[*connect.Schema]*avroEntry{}
		c.other = map[avroKey]*avroEntry{}
	}
	if c.cache[s] == nil {
		c.cache[s] = e
	} else {
		c.other[avroKey{s, topic}] = e
	}
	c.mu.Unlock()
	return e, nil
}

// Subject returns the registry subject of a record of schema s on topic
// under the configured strategy.
func (c *AvroConverter) Subject(topic string, s *connect.Schema) string {
	suffix := "-value"
	if c.isKey {
		suffix = "-key"
	}
	switch c.strategy {
	case RecordNameStrategy:
		return avroFullName(s, c.data.scrub)
	case TopicRecordNameStrategy:
		return topic + "-" + avroFullName(s, c.data.scrub)
	}
	return topic + suffix
}

func (c *AvroConverter) newEntry(topic string, s *connect.Schema) (*avroEntry, error) {
	text, err := avroSchemaJSONOpts(s, c.data)
	if err != nil {
		return nil, err
	}
	subject := c.Subject(topic, s)
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	schema := sr.Schema{Schema: text, Type: sr.TypeAvro}
	var id int
	var toLatest func([]byte) ([]byte, error)
	switch {
	// Confluent's AbstractKafkaAvroSerializer: auto.register.schemas
	// first; use.latest.version only applies when it is false.
	case c.autoRegister:
		id, err = c.client.RegisterSchema(ctx, subject, schema, -1, -1)
		if err != nil {
			return nil, fmt.Errorf("avro converter: registering the schema of subject %s: %w", subject, err)
		}
	case c.useLatest:
		ss, err := c.client.SchemaByVersion(ctx, subject, -1)
		if err != nil {
			return nil, fmt.Errorf("avro converter: latest schema of subject %s: %w", subject, err)
		}
		id = ss.ID
		if ss.Schema.Schema != text {
			if toLatest, err = c.latestWriter(subject, ss, text); err != nil {
				return nil, err
			}
		}
	default:
		ss, err := c.client.LookupSchema(ctx, subject, schema)
		if err != nil {
			return nil, fmt.Errorf("avro converter: looking up the schema of subject %s: %w", subject, err)
		}
		id = ss.ID
	}
	if id < 0 || id > 1<<31-1 {
		return nil, fmt.Errorf("avro converter: registry returned schema id %s", strconv.Itoa(id))
	}
	e := &avroEntry{topic: topic, enc: compileAvroEncoderOpts(s, c.data), toLatest: toLatest}
	binary.BigEndian.PutUint32(e.header[1:], uint32(id))
	return e, nil
}

// latestWriter prepares use.latest.version for a latest version ss whose
// schema is not the record's (text), as Confluent's
// AbstractKafkaSchemaSerDe.lookupLatestVersion and the serializer after it:
// with latest.compatibility.strict=true (default) the latest schema must be
// able to read data written with the record's schema (its
// isBackwardCompatible), else the error is Confluent's "Incompatible
// schema … Set latest.compatibility.strict=false to disable this check";
// records are then written with the latest schema. Confluent's serializer
// hands the GenericRecord built for the record's schema to a
// GenericDatumWriter of the latest one; we resolve by field name instead
// (Avro schema resolution: the record's schema as writer, the latest as
// reader: missing fields take their default, unknown ones are dropped,
// int→long and the like are promoted), and fail with a message naming
// both schemas when that is impossible (strict=false and, e.g., a latest
// field without default that the record lacks). This path decodes and
// re-encodes every record (generic, slower than the compiled encoder).
func (c *AvroConverter) latestWriter(subject string, ss sr.SubjectSchema, text string) (func([]byte) ([]byte, error), error) {
	latest, err := avro.ParseWithCache(ss.Schema.Schema, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("avro converter: use.latest.version: the latest schema of subject %s (id %d) does not parse: %w", subject, ss.ID, err)
	}
	own, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("avro converter: the record's schema does not parse: %w", err)
	}
	compat := avro.NewSchemaCompatibility()
	if c.latestStrict {
		if err := compat.Compatible(latest, own); err != nil {
			return nil, fmt.Errorf("avro converter: Incompatible schema %s with refs [] of type AVRO for schema %s. Set latest.compatibility.strict=false to disable this check (%v)", ss.Schema.Schema, text, err)
		}
	}
	resolved, err := compat.Resolve(latest, own)
	if err != nil {
		return nil, fmt.Errorf("avro converter: use.latest.version: records of schema %s cannot be written with the latest schema of subject %s (version %d, id %d) %s: %v", text, subject, ss.Version, ss.ID, ss.Schema.Schema, err)
	}
	return func(b []byte) ([]byte, error) {
		var v any
		if err := avro.Unmarshal(resolved, b, &v); err != nil {
			return nil, fmt.Errorf("avro converter: use.latest.version: record cannot be written with the latest schema of subject %s (id %d): %w", subject, ss.ID, err)
		}
		out, err := avro.Marshal(latest, v)
		if err != nil {
			return nil, fmt.Errorf("avro converter: use.latest.version: record cannot be written with the latest schema of subject %s (id %d): %w", subject, ss.ID, err)
		}
		return out, nil
	}, nil
}
