package connect

import "testing"

// newStructOf gives n empty values of its own for every n (the sizes with
// a combined allocation and those above), with no spare capacity that an
// append could share; Put on a frozen struct panics.
func TestNewStructOf(t *testing.T) {
	s := StructSchema().Field("a", Prim(Int32, true)).Build()
	for n := 0; n <= 20; n++ {
		a, b := newStructOf(s, n), newStructOf(s, n)
		if len(a.Values) != n || cap(a.Values) != n || a.Schema != s {
			t.Fatalf("n=%d: len %d cap %d", n, len(a.Values), cap(a.Values))
		}
		for i := range a.Values {
			if a.Values[i] != nil {
				t.Fatalf("n=%d: value %d not empty", n, i)
			}
			a.Values[i] = i
		}
		for i := range b.Values {
			if b.Values[i] != nil {
				t.Fatalf("n=%d: two structs share values", n)
			}
		}
	}
	st := NewStruct(s).Put("a", int32(1))
	if st.Get("a") != int32(1) || st.Frozen() {
		t.Fatal("Put/Get")
	}
	st.Freeze()
	defer func() {
		if recover() == nil {
			t.Fatal("Put on a frozen struct must panic")
		}
	}()
	st.Put("a", int32(2))
}
