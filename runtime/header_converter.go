package runtime

import (
	"fmt"
	"strings"

	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/transforms"
)

// StageHeaderConverter is the stage of a header converter failure
// (org.apache.kafka.connect.runtime.errors.Stage.HEADER_CONVERTER).
const StageHeaderConverter Stage = "HEADER_CONVERTER"

// simpleHeaderConverterClass is Kafka Connect's default header.converter.
const simpleHeaderConverterClass = "org.apache.kafka.connect.storage.SimpleHeaderConverter"

// sinkHeaderConverter reads a consumed header value as the sink
// connector's header.converter (HeaderConverter.toConnectHeader) and
// hands it to the task in connectd's in-memory header form,
// connect.Header's bytes: the text Kafka Connect's SimpleHeaderConverter
// writes for that value (Values.convertToString), which is what the
// source side and the transforms (HeaderFrom, HeaderToValue, …) read and
// write.
type sinkHeaderConverter interface {
	// toSink converts the value of header key of a record of topic; nil
	// stays nil (a null header). Errors: bytes the converter cannot read.
	toSink(topic, key string, value []byte) ([]byte, error)
	// class is the converter's class name, for error reports.
	class() string
}

// simpleHeaders is SimpleHeaderConverter: its wire form is already the
// in-memory text, so values pass unchanged.
type simpleHeaders struct{}

func (simpleHeaders) toSink(_, _ string, v []byte) ([]byte, error) { return v, nil }
func (simpleHeaders) class() string                                { return simpleHeaderConverterClass }

// jsonHeaders is JsonConverter used as a header converter: each header
// value is a JSON document (with a {"schema","payload"} envelope when
// schemas.enable, its default, is true).
type jsonHeaders struct{ conv *converters.JSONConverter }

func (j jsonHeaders) toSink(topic, key string, v []byte) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	s, val, err := j.conv.ToConnect(topic, v)
	if err != nil {
		return nil, fmt.Errorf("header %s: %w", key, err)
	}
	return transforms.HeaderText(s, val), nil
}

func (jsonHeaders) class() string { return converters.JSONConverterClass }

// newSinkHeaderConverter resolves header.converter as Kafka Connect does:
// the connector's value (with its header.converter.* properties)
// overrides the worker's, and SimpleHeaderConverter is the default.
// Errors: an unknown class or invalid properties.
func newSinkHeaderConverter(worker WorkerConfig, conn map[string]string) (sinkHeaderConverter, error) {
	const prefix = "header.converter"
	class := strings.TrimSpace(worker.Get(prefix))
	props := worker.Prefixed(prefix + ".")
	if c := strings.TrimSpace(conn[prefix]); c != "" {
		class = c
		props = map[string]string{}
		for k, v := range conn {
			if strings.HasPrefix(k, prefix+".") && k != prefix+".plugin.version" {
				props[strings.TrimPrefix(k, prefix+".")] = v
			}
		}
	}
	switch class {
	case "", simpleHeaderConverterClass, "SimpleHeaderConverter":
		return simpleHeaders{}, nil
	case converters.JSONConverterClass, "JsonConverter":
		c := converters.NewJSONConverter()
		if err := c.Configure(props, false); err != nil {
			return nil, fmt.Errorf("%s: %w", prefix, err)
		}
		return jsonHeaders{conv: c}, nil
	}
	return nil, fmt.Errorf("Invalid value %s for configuration %s: Class %s could not be found.", class, prefix, class)
}
