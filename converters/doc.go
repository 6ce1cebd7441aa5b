// Package converters holds the record converters: JsonConverter
// (org.apache.kafka.connect.json.JsonConverter) now; Avro with the
// Confluent wire format later. Output is byte-compatible with Kafka
// Connect's: same field order, number formatting and string escaping as
// Jackson produces for JsonConverter.
package converters
