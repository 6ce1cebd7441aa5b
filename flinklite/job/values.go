package job

import "encoding/json"

// Exported row-value arithmetic and comparison, for other compilers onto
// the same Row values (flinklite/sql): the same exact int64/Decimal rules
// as the JSON job specs' filter, map and aggregates.

// Normalize turns a Kafka Connect value into a row value (see Row):
// schemaName is the field's Kafka Connect schema name.
func Normalize(v any, schemaName string) any { return normalize(v, schemaName) }

// AddNumbers is a+b (nil: the empty sum): int64 while it fits, else an
// exact Decimal; a float64 operand makes a float64.
func AddNumbers(a, b any) any { return addNumbers(a, b) }

// NegNumber is −v.
func NegNumber(v any) any { return negNumber(v) }

// AvgNumbers is sum / n, Flink's AVG: a Decimal rounded half up to scale
// max(6, sum's scale), or a float64 for a float64 sum; nil when n is 0.
func AvgNumbers(sum any, n int64) any { return avgNumbers(sum, n) }

// Compare orders a and b (numbers exactly whatever their kind, strings
// lexically, booleans false < true); ok is false for NULL or mixed kinds.
func Compare(a, b any) (int, bool) { return compare(a, b) }

// IsNumber says whether v is an int64, float64 or Decimal.
func IsNumber(v any) bool { return isNumber(v) }

// ToDecimal is v (an int64, a Decimal or a float64's shortest form) as a
// Decimal.
func ToDecimal(v any) (Decimal, bool) { return toDecimal(v) }

// ParseDecimal reads [-+]digits[.digits] exactly.
func ParseDecimal(s string) (Decimal, bool) { return parseDecimal(s) }

// JSONNumber is the row value of a JSON number literal: int64, exact
// Decimal, or float64 with an exponent.
func JSONNumber(s string) any { return jsonNumber(json.Number(s)) }

// Canonical is d without trailing fraction zeros: equal values have one
// form (1.50 and 1.5 are both 1.5).
func (d Decimal) Canonical() Decimal { return d.canonical() }

// Rescale is d with scale s ≥ d.Scale (the same value).
func (d Decimal) Rescale(s int32) Decimal { return d.rescale(s) }

// Cmp orders d and e by value.
func (d Decimal) Cmp(e Decimal) int { return d.cmp(e) }

// Float is d's nearest float64.
func (d Decimal) Float() float64 { return d.float() }

// AppendString appends d's plain notation (String) to b.
func (d Decimal) AppendString(b []byte) []byte { return d.append(b) }

// AppendValue appends the checkpoint encoding of a row value: JSON that
// keeps the kind of each number (Row's MarshalJSON), so a value is the
// same after a restore.
func AppendValue(b []byte, v any) ([]byte, error) { return appendValue(b, v) }

// EncodeValues is AppendValue's encoding of a JSON array of values.
func EncodeValues(vals []any) string { return encodeValues(vals) }

// DecodeValues reads EncodeValues' array.
func DecodeValues(s string) ([]any, error) { return decodeValues(s) }
