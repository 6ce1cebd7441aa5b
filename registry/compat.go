package registry

import (
	"fmt"
	"strings"

	"github.com/hamba/avro/v2"
)

// Compatibility levels, as Confluent's CompatibilityLevel.
var compatLevels = map[string]bool{
	"NONE": true, "BACKWARD": true, "BACKWARD_TRANSITIVE": true, "FORWARD": true,
	"FORWARD_TRANSITIVE": true, "FULL": true, "FULL_TRANSITIVE": true,
}

// parseSchema parses an Avro schema text into its own name cache, so that
// two versions of one record name never meet in a shared cache.
func parseSchema(text string) (avro.Schema, error) {
	return avro.ParseWithCache(text, "", &avro.SchemaCache{})
}

// checkCompat checks candidate against the previous versions (oldest
// first) under level, with hamba/avro's SchemaCompatibility: BACKWARD means
// the new schema reads data written with the old one(s), FORWARD the
// reverse, FULL both; the non-transitive levels look at the latest
// version only, as Confluent's AvroCompatibilityChecker does. It returns
// one message per failed check (empty = compatible).
func checkCompat(level string, candidate avro.Schema, previous []avro.Schema) []string {
	if level == "NONE" || len(previous) == 0 {
		return nil
	}
	if !strings.HasSuffix(level, "_TRANSITIVE") {
		previous = previous[len(previous)-1:]
	}
	base := strings.TrimSuffix(level, "_TRANSITIVE")
	var msgs []string
	for i := len(previous) - 1; i >= 0; i-- {
		old := previous[i]
		if base == "BACKWARD" || base == "FULL" {
			if err := avro.NewSchemaCompatibility().Compatible(candidate, old); err != nil {
				msgs = append(msgs, fmt.Sprintf("{errorType:'READER_INCOMPATIBLE', description:'The new schema cannot read data written with an old schema: %s'}", err))
			}
		}
		if base == "FORWARD" || base == "FULL" {
			if err := avro.NewSchemaCompatibility().Compatible(old, candidate); err != nil {
				msgs = append(msgs, fmt.Sprintf("{errorType:'WRITER_INCOMPATIBLE', description:'An old schema cannot read data written with the new schema: %s'}", err))
			}
		}
	}
	if len(msgs) > 0 {
		msgs = append(msgs, fmt.Sprintf("{compatibility: '%s'}", level))
	}
	return msgs
}
