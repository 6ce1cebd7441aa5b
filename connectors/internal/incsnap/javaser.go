package incsnap

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
)

// Debezium stores the chunk position keys of an incremental snapshot
// (incremental_snapshot_primary_key, incremental_snapshot_maximum_key) as
// the lower-case hex of a Java ObjectOutputStream serialization of an
// Object[] (AbstractIncrementalSnapshotContext.arrayToSerializedString). This
// file writes and reads that format for the key values a chunk key can hold
// here: java.lang.Short (int16), Integer (int32), Long (int64), String
// (string), Boolean (bool) and null (nil), so offsets move between Debezium
// and connectd in both directions. Reading also accepts Byte, Float, Double
// and java.util.UUID (as its canonical string).
//
// Format: Java Object Serialization Specification, chapter 6 (stream
// protocol version 2, handles from 0x7e0000).

const (
	tcNull        = 0x70
	tcReference   = 0x71
	tcClassDesc   = 0x72
	tcObject      = 0x73
	tcString      = 0x74
	tcArray       = 0x75
	tcEndBlock    = 0x78
	tcLongString  = 0x7c
	scWriteMethod = 0x01
	scSerializ    = 0x02
	baseHandle    = 0x7e0000
)

// javaBox describes a boxed java.lang type: class name, serialVersionUID and
// its one primitive field "value".
type javaBox struct {
	name string
	uid  uint64
	code byte
}

var (
	boxShort   = javaBox{"java.lang.Short", 0x684d37133460da52, 'S'}
	boxInteger = javaBox{"java.lang.Integer", 0x12e2a0a4f7818738, 'I'}
	boxLong    = javaBox{"java.lang.Long", 0x3b8be490cc8f23df, 'J'}
	boxBoolean = javaBox{"java.lang.Boolean", 0xcd207280d59cfaee, 'Z'}
)

const (
	objectArrayUID = 0x90ce589f1073296c // [Ljava.lang.Object;
	numberUID      = 0x86ac951d0b94e08b // java.lang.Number
)

// EncodeKey serializes key as Debezium stores it in an offset. It fails for
// a value of another type than int16, int32, int64, string, bool or nil.
func EncodeKey(key []any) (string, error) {
	w := &javaWriter{descs: map[string]uint32{}, cached: map[any]uint32{}}
	w.b = append(w.b, 0xac, 0xed, 0x00, 0x05, tcArray, tcClassDesc)
	w.utf("[Ljava.lang.Object;")
	w.u64(objectArrayUID)
	w.b = append(w.b, scSerializ, 0, 0, tcEndBlock, tcNull)
	w.handle() // the array's class descriptor
	w.handle() // the array
	w.u32(uint32(len(key)))
	for _, v := range key {
		mark, handles := len(w.b), w.next
		switch x := v.(type) {
		case nil:
			w.b = append(w.b, tcNull)
		case string:
			w.str(x)
		case int16:
			w.boxed(boxShort, func() { w.b = binary.BigEndian.AppendUint16(w.b, uint16(x)) })
		case int32:
			w.boxed(boxInteger, func() { w.u32(uint32(x)) })
		case int64:
			w.boxed(boxLong, func() { w.u64(uint64(x)) })
		case bool:
			w.boxed(boxBoolean, func() {
				if x {
					w.b = append(w.b, 1)
				} else {
					w.b = append(w.b, 0)
				}
			})
		default:
			return "", fmt.Errorf("incsnap: key value %v of type %T cannot be stored in an offset", v, v)
		}
		if h, ok := w.cached[v]; ok && h != 0 {
			// Short/Integer/Long.valueOf and Boolean.valueOf return shared
			// instances, which ObjectOutputStream writes once: the box just
			// written is replaced by a reference to the first one.
			w.b = append(w.b[:mark], tcReference)
			w.u32(h)
			w.next = handles
		} else if javaShared(v) {
			w.cached[v] = baseHandle + w.next - 1
		}
	}
	return hex.EncodeToString(w.b), nil
}

// javaShared reports whether Java boxes v into a cached, shared instance.
func javaShared(v any) bool {
	switch x := v.(type) {
	case bool:
		return true
	case int16:
		return x >= -128 && x <= 127
	case int32:
		return x >= -128 && x <= 127
	case int64:
		return x >= -128 && x <= 127
	}
	return false
}

type javaWriter struct {
	b      []byte
	next   uint32
	descs  map[string]uint32
	number uint32         // handle of java.lang.Number's descriptor (0 = not written)
	cached map[any]uint32 // handles of boxes Java shares (valueOf caches -128..127, Boolean.TRUE/FALSE)
}

func (w *javaWriter) handle() uint32 { h := baseHandle + w.next; w.next++; return h }
func (w *javaWriter) u32(v uint32)   { w.b = binary.BigEndian.AppendUint32(w.b, v) }
func (w *javaWriter) u64(v uint64)   { w.b = binary.BigEndian.AppendUint64(w.b, v) }
func (w *javaWriter) utf(s string) {
	w.b = binary.BigEndian.AppendUint16(w.b, uint16(len(s)))
	w.b = append(w.b, s...)
}

// str writes a String object (modified UTF-8: NUL as 0xc0 0x80, characters
// outside the BMP as surrogate pairs).
func (w *javaWriter) str(s string) {
	var m []byte
	for _, r := range s {
		switch {
		case r == 0:
			m = append(m, 0xc0, 0x80)
		case r < 0x80:
			m = append(m, byte(r))
		case r < 0x800:
			m = append(m, 0xc0|byte(r>>6), 0x80|byte(r&0x3f))
		case r < 0x10000:
			m = append(m, 0xe0|byte(r>>12), 0x80|byte(r>>6&0x3f), 0x80|byte(r&0x3f))
		default:
			r -= 0x10000
			for _, c := range []rune{0xd800 + r>>10, 0xdc00 + r&0x3ff} {
				m = append(m, 0xe0|byte(c>>12), 0x80|byte(c>>6&0x3f), 0x80|byte(c&0x3f))
			}
		}
	}
	if len(m) > 0xffff {
		w.b = append(w.b, tcLongString)
		w.u64(uint64(len(m)))
	} else {
		w.b = append(w.b, tcString)
		w.b = binary.BigEndian.AppendUint16(w.b, uint16(len(m)))
	}
	w.b = append(w.b, m...)
	w.handle()
}

// boxed writes a java.lang box object; class descriptors already written are
// referenced, as ObjectOutputStream does.
func (w *javaWriter) boxed(bx javaBox, value func()) {
	w.b = append(w.b, tcObject)
	if h, ok := w.descs[bx.name]; ok {
		w.b = append(w.b, tcReference)
		w.u32(h)
	} else {
		w.b = append(w.b, tcClassDesc)
		w.utf(bx.name)
		w.u64(bx.uid)
		w.descs[bx.name] = w.handle()
		w.b = append(w.b, scSerializ, 0, 1, bx.code)
		w.utf("value")
		w.b = append(w.b, tcEndBlock)
		switch {
		case bx == boxBoolean:
			w.b = append(w.b, tcNull)
		case w.number != 0:
			w.b = append(w.b, tcReference)
			w.u32(w.number)
		default:
			w.b = append(w.b, tcClassDesc)
			w.utf("java.lang.Number")
			w.u64(numberUID)
			w.number = w.handle()
			w.b = append(w.b, scSerializ, 0, 0, tcEndBlock, tcNull)
		}
	}
	w.handle() // the object
	value()
}

// DecodeKey reads a key written by EncodeKey or by Debezium (a serialized
// null gives nil). Values come back
// as int16, int32, int64, string, bool, nil, int8 (Byte), float32, float64,
// or a UUID string.
func DecodeKey(s string) ([]any, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("incsnap: key %q is not hex: %w", s, err)
	}
	if len(b) < 4 || b[0] != 0xac || b[1] != 0xed {
		return nil, fmt.Errorf("incsnap: key %q is not a Java serialization stream", s)
	}
	r := &javaReader{b: b, p: 4}
	v, err := r.object()
	if err != nil {
		return nil, fmt.Errorf("incsnap: key %q: %w", s, err)
	}
	if v == nil {
		return nil, nil // writeObject(null): no key yet
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("incsnap: key %q is not an Object[]", s)
	}
	return arr, nil
}

type javaReader struct {
	b       []byte
	p       int
	handles []any
}

type classDesc struct {
	name   string
	flags  byte
	fields []fieldDesc
	super  *classDesc
}

type fieldDesc struct {
	code byte
	name string
}

var errShort = errors.New("truncated stream")

func (r *javaReader) take(n int) ([]byte, error) {
	if n < 0 || r.p+n > len(r.b) {
		return nil, errShort
	}
	out := r.b[r.p : r.p+n]
	r.p += n
	return out, nil
}

func (r *javaReader) u8() (byte, error) {
	b, err := r.take(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

func (r *javaReader) u16() (uint16, error) {
	b, err := r.take(2)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint16(b), nil
}

func (r *javaReader) u32() (uint32, error) {
	b, err := r.take(4)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(b), nil
}

func (r *javaReader) u64() (uint64, error) {
	b, err := r.take(8)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint64(b), nil
}

func (r *javaReader) utf() (string, error) {
	n, err := r.u16()
	if err != nil {
		return "", err
	}
	b, err := r.take(int(n))
	return decodeModifiedUTF8(b), err
}

func decodeModifiedUTF8(b []byte) string {
	var u []uint16
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c < 0x80:
			u = append(u, uint16(c))
			i++
		case c&0xe0 == 0xc0 && i+1 < len(b):
			u = append(u, uint16(c&0x1f)<<6|uint16(b[i+1]&0x3f))
			i += 2
		case i+2 < len(b):
			u = append(u, uint16(c&0x0f)<<12|uint16(b[i+1]&0x3f)<<6|uint16(b[i+2]&0x3f))
			i += 3
		default:
			i = len(b)
		}
	}
	var rs []rune
	for i := 0; i < len(u); i++ {
		if u[i] >= 0xd800 && u[i] < 0xdc00 && i+1 < len(u) && u[i+1] >= 0xdc00 && u[i+1] < 0xe000 {
			rs = append(rs, 0x10000+(rune(u[i])-0xd800)<<10+(rune(u[i+1])-0xdc00))
			i++
			continue
		}
		rs = append(rs, rune(u[i]))
	}
	return string(rs)
}

func (r *javaReader) ref() (any, error) {
	h, err := r.u32()
	if err != nil {
		return nil, err
	}
	i := int(h) - baseHandle
	if i < 0 || i >= len(r.handles) {
		return nil, fmt.Errorf("bad handle %#x", h)
	}
	return r.handles[i], nil
}

func (r *javaReader) classDesc() (*classDesc, error) {
	tc, err := r.u8()
	if err != nil {
		return nil, err
	}
	switch tc {
	case tcNull:
		return nil, nil
	case tcReference:
		v, err := r.ref()
		if err != nil {
			return nil, err
		}
		d, ok := v.(*classDesc)
		if !ok {
			return nil, errors.New("reference is not a class descriptor")
		}
		return d, nil
	case tcClassDesc:
	default:
		return nil, fmt.Errorf("unexpected type code %#x for a class descriptor", tc)
	}
	d := &classDesc{}
	if d.name, err = r.utf(); err != nil {
		return nil, err
	}
	if _, err = r.u64(); err != nil {
		return nil, err
	}
	r.handles = append(r.handles, d)
	if d.flags, err = r.u8(); err != nil {
		return nil, err
	}
	n, err := r.u16()
	if err != nil {
		return nil, err
	}
	for i := 0; i < int(n); i++ {
		var f fieldDesc
		if f.code, err = r.u8(); err != nil {
			return nil, err
		}
		if f.name, err = r.utf(); err != nil {
			return nil, err
		}
		if f.code == 'L' || f.code == '[' {
			if _, err := r.object(); err != nil { // field class name
				return nil, err
			}
		}
		d.fields = append(d.fields, f)
	}
	if tc, err := r.u8(); err != nil || tc != tcEndBlock {
		return nil, errors.New("class annotations are not supported")
	}
	d.super, err = r.classDesc()
	return d, err
}

func (r *javaReader) object() (any, error) {
	tc, err := r.u8()
	if err != nil {
		return nil, err
	}
	switch tc {
	case tcNull:
		return nil, nil
	case tcReference:
		return r.ref()
	case tcString, tcLongString:
		var n uint64
		if tc == tcString {
			m, err := r.u16()
			n = uint64(m)
			if err != nil {
				return nil, err
			}
		} else if n, err = r.u64(); err != nil {
			return nil, err
		}
		if n > uint64(len(r.b)) {
			return nil, errShort
		}
		b, err := r.take(int(n))
		if err != nil {
			return nil, err
		}
		s := decodeModifiedUTF8(b)
		r.handles = append(r.handles, s)
		return s, nil
	case tcArray:
		d, err := r.classDesc()
		if err != nil {
			return nil, err
		}
		if d == nil || len(d.name) < 2 || (d.name[1] != 'L' && d.name[1] != '[') {
			return nil, errors.New("only object arrays are supported")
		}
		h := len(r.handles)
		r.handles = append(r.handles, nil)
		n, err := r.u32()
		if err != nil {
			return nil, err
		}
		if uint64(n) > uint64(len(r.b)) {
			return nil, errShort
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = r.object(); err != nil {
				return nil, err
			}
		}
		r.handles[h] = out
		return out, nil
	case tcObject:
		d, err := r.classDesc()
		if err != nil {
			return nil, err
		}
		if d == nil {
			return nil, errors.New("object without class descriptor")
		}
		h := len(r.handles)
		r.handles = append(r.handles, nil)
		var chain []*classDesc
		for c := d; c != nil; c = c.super {
			chain = append([]*classDesc{c}, chain...)
		}
		vals := map[string]any{}
		for _, c := range chain {
			if c.flags&scWriteMethod != 0 {
				return nil, fmt.Errorf("class %s with writeObject is not supported", c.name)
			}
			for _, f := range c.fields {
				v, err := r.field(f.code)
				if err != nil {
					return nil, err
				}
				vals[f.name] = v
			}
		}
		v, err := unbox(d.name, vals)
		r.handles[h] = v
		return v, err
	}
	return nil, fmt.Errorf("unsupported type code %#x", tc)
}

func (r *javaReader) field(code byte) (any, error) {
	switch code {
	case 'B':
		b, err := r.u8()
		return int8(b), err
	case 'Z':
		b, err := r.u8()
		return b != 0, err
	case 'C', 'S':
		v, err := r.u16()
		return int16(v), err
	case 'I':
		v, err := r.u32()
		return int32(v), err
	case 'F':
		v, err := r.u32()
		return math.Float32frombits(v), err
	case 'J':
		v, err := r.u64()
		return int64(v), err
	case 'D':
		v, err := r.u64()
		return math.Float64frombits(v), err
	case 'L', '[':
		return r.object()
	}
	return nil, fmt.Errorf("unknown field type %q", code)
}

func unbox(class string, f map[string]any) (any, error) {
	switch class {
	case "java.lang.Short", "java.lang.Integer", "java.lang.Long", "java.lang.Byte",
		"java.lang.Boolean", "java.lang.Float", "java.lang.Double":
		return f["value"], nil
	case "java.util.UUID":
		hi, _ := f["mostSigBits"].(int64)
		lo, _ := f["leastSigBits"].(int64)
		var b [16]byte
		binary.BigEndian.PutUint64(b[:8], uint64(hi))
		binary.BigEndian.PutUint64(b[8:], uint64(lo))
		x := hex.EncodeToString(b[:])
		return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:], nil
	}
	return nil, fmt.Errorf("key values of class %s are not supported", class)
}
