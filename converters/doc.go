// Package converters holds the record converters: JsonConverter
// (org.apache.kafka.connect.json.JsonConverter) and AvroConverter
// (io.confluent.connect.avro.AvroConverter, Confluent wire format). JSON output is byte-compatible with Kafka
// Connect's: same field order, number formatting and string escaping as
// Jackson produces for JsonConverter.
package converters
