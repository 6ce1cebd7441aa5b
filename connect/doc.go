// Package connect is the Kafka Connect data model and plugin API of connectd.
//
// It mirrors org.apache.kafka.connect.data and org.apache.kafka.connect.source:
// a Schema describes a value (type, name, version, parameters, optionality,
// default); a Struct holds the values of a STRUCT schema in field order; a
// SourceRecord is what a source task hands to the worker, with the source
// partition and source offset that locate it in the upstream system.
//
// Connectors reach the worker only through the interfaces in plugin.go, and
// the worker reaches connectors only through them. Delivery is explicit: the
// worker calls SourceTask.Commit with an offset only after every record up to
// it was acknowledged by Kafka and the offset itself was durably stored.
package connect
