package registry

import (
	"bytes"
	"encoding/json"
)

// The `_schemas` record layout of Confluent Schema Registry
// (io.confluent.kafka.schemaregistry.storage.{SchemaKey,SchemaValue,
// ConfigKey,ConfigValue,ModeKey,ModeValue,DeleteSubjectKey,DeleteSubjectValue}):
// JSON keys with a "keytype", JSON values, tombstones for permanent deletes.
const (
	keySchema        = "SCHEMA"
	keyConfig        = "CONFIG"
	keyMode          = "MODE"
	keyDeleteSubject = "DELETE_SUBJECT"
	keyClearSubject  = "CLEAR_SUBJECT"
	keyNoop          = "NOOP"
)

// recordKey is every key type; fields absent from a type are omitted, in
// the property order Confluent's @JsonPropertyOrder gives
// (keytype, subject, version, magic).
type recordKey struct {
	KeyType string  `json:"keytype"`
	Subject *string `json:"subject,omitempty"`
	Version int     `json:"version,omitempty"`
	Magic   int     `json:"magic"`
}

// schemaValue is SchemaValue; schemaType is omitted for AVRO, as Confluent
// does (@JsonInclude NON_EMPTY and AVRO being the default).
type schemaValue struct {
	Subject    string `json:"subject"`
	Version    int    `json:"version"`
	ID         int    `json:"id"`
	SchemaType string `json:"schemaType,omitempty"`
	Schema     string `json:"schema"`
	Deleted    bool   `json:"deleted"`
}

type configValue struct {
	Subject            string `json:"subject,omitempty"`
	CompatibilityLevel string `json:"compatibilityLevel,omitempty"`
}

type modeValue struct {
	Subject string `json:"subject,omitempty"`
	Mode    string `json:"mode"`
}

type deleteSubjectValue struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // Jackson does not escape <, >, &
	if err := enc.Encode(v); err != nil {
		panic(err) // only our own plain structs are marshalled
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

func schemaKeyBytes(subject string, version int) []byte {
	return marshal(recordKey{KeyType: keySchema, Subject: &subject, Version: version, Magic: 1})
}

// subjectKeyBytes is a CONFIG, MODE or DELETE_SUBJECT key; subject "" is
// the global config/mode (the subject property is then absent).
func subjectKeyBytes(keyType, subject string) []byte {
	k := recordKey{KeyType: keyType, Magic: 0}
	if subject != "" {
		k.Subject = &subject
	}
	return marshal(k)
}
