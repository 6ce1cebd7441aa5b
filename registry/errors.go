package registry

import (
	"fmt"
	"net/http"
)

// Error is a Confluent Schema Registry error: an HTTP status and the
// `error_code`/`message` body. The codes and messages are those of
// Confluent's io.confluent.kafka.schemaregistry.rest.exceptions.Errors.
type Error struct {
	Status  int    `json:"-"`
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (error code %d)", e.Message, e.Code) }

// Error codes of Confluent Schema Registry.
const (
	CodeSubjectNotFound           = 40401
	CodeVersionNotFound           = 40402
	CodeSchemaNotFound            = 40403
	CodeSubjectSoftDeleted        = 40404
	CodeSubjectNotSoftDeleted     = 40405
	CodeVersionSoftDeleted        = 40406
	CodeVersionNotSoftDeleted     = 40407
	CodeSubjectCompatNotConfig    = 40408
	CodeSubjectModeNotConfig      = 40409
	CodeIncompatibleSchema        = 409
	CodeInvalidSchema             = 42201
	CodeInvalidVersion            = 42202
	CodeInvalidCompatibilityLevel = 42203
	CodeInvalidMode               = 42204
	CodeOperationNotPermitted     = 42205
	CodeStoreError                = 50001
	CodeJSONParse                 = 50005
)

func errSubjectNotFound(s string) *Error {
	return &Error{http.StatusNotFound, CodeSubjectNotFound, fmt.Sprintf("Subject '%s' not found.", s)}
}

func errVersionNotFound(v int) *Error {
	return &Error{http.StatusNotFound, CodeVersionNotFound, fmt.Sprintf("Version %d not found.", v)}
}

func errSchemaNotFound() *Error {
	return &Error{http.StatusNotFound, CodeSchemaNotFound, "Schema not found"}
}

func errSchemaIDNotFound(id int) *Error {
	return &Error{http.StatusNotFound, CodeSchemaNotFound, fmt.Sprintf("Schema %d not found", id)}
}

func errSubjectSoftDeleted(s string) *Error {
	return &Error{http.StatusNotFound, CodeSubjectSoftDeleted, fmt.Sprintf("Subject '%s' was soft deleted.Set permanent=true to delete permanently", s)}
}

func errSubjectNotSoftDeleted(s string) *Error {
	return &Error{http.StatusNotFound, CodeSubjectNotSoftDeleted, fmt.Sprintf("Subject '%s' was not deleted first before being permanently deleted", s)}
}

func errVersionSoftDeleted(s string, v int) *Error {
	return &Error{http.StatusNotFound, CodeVersionSoftDeleted, fmt.Sprintf("Subject '%s' Version %d was soft deleted.Set permanent=true to delete permanently", s, v)}
}

func errVersionNotSoftDeleted(s string, v int) *Error {
	return &Error{http.StatusNotFound, CodeVersionNotSoftDeleted, fmt.Sprintf("Subject '%s' Version %d was not deleted first before being permanently deleted", s, v)}
}

func errSubjectCompatNotConfigured(s string) *Error {
	return &Error{http.StatusNotFound, CodeSubjectCompatNotConfig, fmt.Sprintf("Subject '%s' does not have subject-level compatibility configured", s)}
}

func errSubjectModeNotConfigured(s string) *Error {
	return &Error{http.StatusNotFound, CodeSubjectModeNotConfig, fmt.Sprintf("Subject '%s' does not have subject-level mode configured", s)}
}

func errIncompatible(subject, details string) *Error {
	return &Error{http.StatusConflict, CodeIncompatibleSchema, fmt.Sprintf("Schema being registered is incompatible with an earlier schema for subject \"%s\", details: %s", subject, details)}
}

func errInvalidSchema(msg string) *Error {
	return &Error{http.StatusUnprocessableEntity, CodeInvalidSchema, msg}
}

func errInvalidVersion(v string) *Error {
	return &Error{http.StatusUnprocessableEntity, CodeInvalidVersion, fmt.Sprintf("The specified version '%s' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\"", v)}
}

func errInvalidCompatibility() *Error {
	return &Error{http.StatusUnprocessableEntity, CodeInvalidCompatibilityLevel, "Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive"}
}

func errInvalidMode() *Error {
	return &Error{http.StatusUnprocessableEntity, CodeInvalidMode, "Invalid mode. Valid values are READWRITE, READONLY, and IMPORT."}
}

func errReadOnly(subject string) *Error {
	return &Error{http.StatusUnprocessableEntity, CodeOperationNotPermitted, fmt.Sprintf("Subject %s is in read-only mode", subject)}
}

func errNotImportMode(subject string) *Error {
	return &Error{http.StatusUnprocessableEntity, CodeOperationNotPermitted, fmt.Sprintf("Subject %s is not in import mode", subject)}
}

func errNotReadWriteMode(subject string) *Error {
	return &Error{http.StatusUnprocessableEntity, CodeOperationNotPermitted, fmt.Sprintf("Subject %s is not in read-write mode", subject)}
}

func errOverwriteID(id int) *Error {
	return &Error{http.StatusUnprocessableEntity, CodeOperationNotPermitted, fmt.Sprintf("Overwrite new schema with id %d is not permitted.", id)}
}

func errCannotImport() *Error {
	return &Error{http.StatusUnprocessableEntity, CodeOperationNotPermitted, "Cannot import since found existing subjects"}
}

func errStore(err error) *Error {
	return &Error{http.StatusInternalServerError, CodeStoreError, "Error while storing the schema: " + err.Error()}
}
