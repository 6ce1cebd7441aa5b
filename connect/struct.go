package connect

import "fmt"

// Struct holds the values of a STRUCT schema, one per field, in field order.
// A nil value is a null.
type Struct struct {
	Schema *Schema
	Values []any
	// frozen: see Freeze.
	frozen bool
}

// Freeze marks st as never changing again, so that many records can share
// it (the PostgreSQL connector gives all rows of a table's snapshot one
// source block) and converters can reuse what they wrote for it for every
// record that holds the same *Struct. Put panics on a frozen struct;
// writing Values directly is as wrong. It returns st.
func (st *Struct) Freeze() *Struct {
	st.frozen = true
	return st
}

// Frozen reports whether Freeze was called on st.
func (st *Struct) Frozen() bool { return st.frozen }

// NewStruct returns an empty struct of schema s.
func NewStruct(s *Schema) *Struct {
	return &Struct{Schema: s, Values: make([]any, len(s.Fields))}
}

// Put sets field name to v. It panics on an unknown field, as Kafka Connect's
// Struct.put throws DataException: that is a programming error.
func (st *Struct) Put(name string, v any) *Struct {
	if st.frozen {
		panic(fmt.Sprintf("connect: Put(%q) on a frozen struct of %s", name, st.Schema.Name))
	}
	f := st.Schema.Field(name)
	if f == nil {
		panic(fmt.Sprintf("connect: %q is not a field of %s", name, st.Schema.Name))
	}
	st.Values[f.Index] = v
	return st
}

// Get returns the value of field name, or nil.
func (st *Struct) Get(name string) any {
	f := st.Schema.Field(name)
	if f == nil {
		return nil
	}
	return st.Values[f.Index]
}
