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
func NewStruct(s *Schema) *Struct { return newStructOf(s, len(s.Fields)) }

// newStructOf returns a struct of schema s with n empty values.
// Up to 16 values are allocated together with the struct, in an array of
// the next of 1, 2, 3, 4, 6, 8, 10, 12 or 16 values: one object instead of
// two for every key, row and envelope of a change event, which the
// garbage collector then has fewer of to find (bench/postgres, issue 3).
func newStructOf(s *Schema, n int) *Struct {
	switch {
	case n <= 1:
		b := new(structBlock[[1]any])
		b.st = Struct{Schema: s, Values: b.vals[:n:n]}
		return &b.st
	case n <= 2:
		b := new(structBlock[[2]any])
		b.st = Struct{Schema: s, Values: b.vals[:n:n]}
		return &b.st
	case n <= 3:
		b := new(structBlock[[3]any])
		b.st = Struct{Schema: s, Values: b.vals[:n:n]}
		return &b.st
	case n <= 4:
		b := new(structBlock[[4]any])
		b.st = Struct{Schema: s, Values: b.vals[:n:n]}
		return &b.st
	case n <= 6:
		b := new(structBlock[[6]any])
		b.st = Struct{Schema: s, Values: b.vals[:n:n]}
		return &b.st
	case n <= 8:
		b := new(structBlock[[8]any])
		b.st = Struct{Schema: s, Values: b.vals[:n:n]}
		return &b.st
	case n <= 10:
		b := new(structBlock[[10]any])
		b.st = Struct{Schema: s, Values: b.vals[:n:n]}
		return &b.st
	case n <= 12:
		b := new(structBlock[[12]any])
		b.st = Struct{Schema: s, Values: b.vals[:n:n]}
		return &b.st
	case n <= 16:
		b := new(structBlock[[16]any])
		b.st = Struct{Schema: s, Values: b.vals[:n:n]}
		return &b.st
	}
	return &Struct{Schema: s, Values: make([]any, n)}
}

// structBlock is a Struct and the array its Values slice.
type structBlock[A any] struct {
	st   Struct
	vals A
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
