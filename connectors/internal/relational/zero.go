package relational

import "github.com/connectd/connectd/connect"

// ZeroOf is the value Debezium puts in a NOT NULL column that a row image
// does not carry (a delete event whose before image has only the key
// columns, or a column added without a default): the zero of the column's
// primitive Kafka Connect type: int16/int32/int64(0), float32/float64(0),
// false, "" or an empty []byte. For any other type (INT8, STRUCT, ARRAY,
// MAP) it returns nil; a connector that has such columns, or logical types
// over BYTES such as Decimal, handles them before calling ZeroOf.
func ZeroOf(t connect.Type) any {
	switch t {
	case connect.Int16:
		return int16(0)
	case connect.Int32:
		return int32(0)
	case connect.Int64:
		return int64(0)
	case connect.Float32:
		return float32(0)
	case connect.Float64:
		return float64(0)
	case connect.Boolean:
		return false
	case connect.String:
		return ""
	case connect.Bytes:
		return []byte{}
	}
	return nil
}
