package runtime

import (
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
)

// newConverter builds the key or value converter of a connector: the
// connector's own "key.converter"/"value.converter" (with its prefixed
// properties) when set, else the worker's, as Kafka Connect does.
func newConverter(worker WorkerConfig, conn map[string]string, isKey bool) (connect.Converter, error) {
	prefix := "value.converter"
	if isKey {
		prefix = "key.converter"
	}
	class := worker.Get(prefix)
	props := worker.Prefixed(prefix + ".")
	if c, ok := conn[prefix]; ok && strings.TrimSpace(c) != "" {
		class = strings.TrimSpace(c)
		props = map[string]string{}
		for k, v := range conn {
			if strings.HasPrefix(k, prefix+".") {
				props[strings.TrimPrefix(k, prefix+".")] = v
			}
		}
	}
	var conv connect.Converter
	switch class {
	case converters.JSONConverterClass, "JsonConverter":
		conv = converters.NewJSONConverter()
	case converters.AvroConverterClass, "AvroConverter":
		conv = converters.NewAvroConverter() // its registry client comes from props (schema.registry.url, basic.auth.*)
	default:
		return nil, fmt.Errorf("Invalid value %s for configuration %s: Class %s could not be found.", class, prefix, class)
	}
	if err := conv.Configure(props, isKey); err != nil {
		return nil, fmt.Errorf("%s: %w", prefix, err)
	}
	return conv, nil
}
