package transforms

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// PartitionRouting is io.debezium.transforms.partitions.PartitionRouting
// (Debezium 3.6 "Partition Routing",
// https://debezium.io/documentation/reference/stable/transformations/partition-routing.html):
// it sets a change event's partition from a hash of payload fields.
//
//   - partition.payload.fields lists envelope paths in dot notation
//     ("after.name", "source.table", "op"); the first element "change" means
//     "before" for a delete and "after" otherwise. A path naming a field
//     that the schema lacks, or a null value, is skipped; when every path is
//     skipped the record is unchanged. A path through a null struct (e.g.
//     "after.name" on a delete) fails the record, as Debezium's
//     NullPointerException does ("Unprocessable message").
//   - The partition is (sum of the hashes, int32 overflow) & 0x7fffffff,
//     with Integer.MAX_VALUE mapped to 0, modulo partition.topic.num.
//   - partition.hash.function "java" (default) is Java's Object.hashCode of
//     the value Kafka Connect holds for the field, "murmur" Debezium's
//     MurmurHash3.hash(Object) (x64 64-bit variant, seed 9001, upper 32 bits;
//     strings hashed over their UTF-8 bytes, other values over their Java
//     hashCode). See javaHashCode for the value types.
//   - Tombstones, records that are not change event envelopes, and truncate
//     and logical decoding message events (op "t", "m") pass unchanged.
type PartitionRouting struct {
	paths      [][]string
	partitions int
	murmur     bool
}

var _ connect.Transformation = (*PartitionRouting)(nil)

// Config: partition.payload.fields and partition.topic.num (required),
// partition.hash.function.
func (t *PartitionRouting) Config() *connect.ConfigDef {
	d := connect.NewConfigDef()
	d.Define(connect.ConfigKey{Name: "partition.payload.fields", Type: connect.TypeList, Importance: connect.High, Group: "partitions",
		DisplayName: "List of payload fields to use for compute partition.",
		Doc: "Payload fields to use to calculate the partition. Supports Struct nesting using dot notation." +
			"To access fields related to data collections, you can use: after, before or change, " +
			"where 'change' is a special field that will automatically choose, based on operation, the 'after' or 'before'. " +
			"If a field not exist for the current record it will simply not used" +
			"e.g. after.name,source.table,change.name",
		Validator: func(v string) string {
			for _, s := range strings.Split(v, ",") {
				if strings.TrimSpace(s) == "" {
					return "Empty string element(s) not permitted"
				}
			}
			return ""
		}})
	d.Define(connect.ConfigKey{Name: "partition.topic.num", Type: connect.TypeInt, Importance: connect.High, Group: "partitions",
		DisplayName: "Number of partition configured for topic",
		Doc:         "Number of partition for the topic on which this SMT act. Use TopicNameMatches predicate to filter records by topic",
		Validator: func(v string) string {
			var n int
			if _, err := fmt.Sscan(v, &n); err != nil || n <= 0 {
				return "A positive integer is expected"
			}
			return ""
		}})
	d.Define(connect.ConfigKey{Name: "partition.hash.function", Type: connect.TypeString, Default: connect.Str("java"), Importance: connect.Low, Group: "partitions",
		DisplayName: "Hash function",
		Doc:         "Hash function to be used when computing hash of the fields which would determine number of the destination partition.",
		Recommended: []string{"java", "murmur"}})
	return d
}

// Configure reads the keys of Config. As Debezium's HashFunction.parse, an
// unknown hash function name means "java".
func (t *PartitionRouting) Configure(props map[string]string) error {
	p, err := parse(t.Config(), props)
	if err != nil {
		return err
	}
	t.paths = nil
	for _, f := range p.List("partition.payload.fields") {
		parts := strings.Split(f, ".")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		t.paths = append(t.paths, parts)
	}
	t.partitions = p.Int("partition.topic.num")
	t.murmur = strings.EqualFold(p.String("partition.hash.function"), "murmur")
	return nil
}

// Apply sets r's partition as described on the type.
func (t *PartitionRouting) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	if r.Value == nil || !isEnvelope(r.ValueSchema) {
		return r, nil
	}
	env, ok := r.Value.(*connect.Struct)
	if !ok {
		return nil, fmt.Errorf("Unprocessable message %v: %w", r.Value, ErrUnexpectedType)
	}
	if op, _ := env.Get("op").(string); op == "t" || op == "m" {
		return r, nil
	}
	var sum int32
	found := false
	for _, path := range t.paths {
		v, ok, err := envelopePath(env, path)
		if err != nil {
			return nil, fmt.Errorf("Unprocessable message (partition.payload.fields %s): %w", strings.Join(path, "."), err)
		}
		if !ok {
			continue
		}
		var h int32
		if t.murmur {
			h, err = murmurHashObject(v)
		} else {
			h, err = javaHashCode(v)
		}
		if err != nil {
			return nil, fmt.Errorf("Unprocessable message (partition.payload.fields %s): %w", strings.Join(path, "."), err)
		}
		sum += h
		found = true
	}
	if !found {
		return r, nil
	}
	n := sum & math.MaxInt32
	if n == math.MaxInt32 {
		n = 0
	}
	part := n % int32(t.partitions)
	out := withRecord(r)
	out.Partition = &part
	return out, nil
}

// envelopePath resolves path in env as PartitionRouting.toValue: ok=false
// when a field is missing (DataException) or the value is null; an error
// when an intermediate struct is null.
func envelopePath(env *connect.Struct, path []string) (any, bool, error) {
	cur := env
	for i, name := range path {
		if i == 0 && name == "change" && len(path) > 1 {
			name = "after"
			if op, _ := env.Get("op").(string); op == "d" {
				name = "before"
			}
		}
		if cur == nil {
			return nil, false, fmt.Errorf("field %s read from a null struct", name)
		}
		f := cur.Schema.Field(name)
		if f == nil {
			return nil, false, nil
		}
		v := getOrDefault(cur, *f)
		if i == len(path)-1 {
			return v, v != nil, nil
		}
		if v == nil {
			cur = nil
			continue
		}
		st, ok := v.(*connect.Struct)
		if !ok {
			return nil, false, nil // Struct.getStruct on a non-struct field: DataException, skipped
		}
		cur = st
	}
	return nil, false, nil
}

// javaHashCode returns Java's hashCode of the object Kafka Connect holds
// for v, as defined by the JDK: String (s[0]*31^(n-1) + ... over UTF-16
// units), Byte/Short/Integer (the value), Long (v ^ v>>>32), Boolean
// (1231/1237), Float (floatToIntBits), Double (doubleToLongBits folded as
// Long), java.util.Date for the Date/Time/Timestamp logical types (the
// epoch milliseconds as a Long), BigDecimal for Decimal (31 *
// BigInteger.hashCode(unscaled) + scale), List (31*h + e, from 1), Map
// (sum of key ^ value). BYTES values are hashed as java.nio.ByteBuffer does
// (a byte[] has an identity hash that no other process can reproduce).
// STRUCT values are refused with ErrUnexpectedType: Struct.hashCode
// includes the schema's, which hashes Schema.Type enum constants by
// identity, so Debezium's own partition for them changes between JVMs.
func javaHashCode(v any) (int32, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case string:
		var h int32
		for _, c := range utf16Units(x) {
			h = 31*h + int32(c)
		}
		return h, nil
	case int8:
		return int32(x), nil
	case int16:
		return int32(x), nil
	case int32:
		return x, nil
	case int:
		return javaLongHash(int64(x)), nil
	case int64:
		return javaLongHash(x), nil
	case bool:
		if x {
			return 1231, nil
		}
		return 1237, nil
	case float32:
		if x != x {
			return 0x7fc00000, nil
		}
		return int32(math.Float32bits(x)), nil
	case float64:
		bits := int64(math.Float64bits(x))
		if x != x {
			bits = 0x7ff8000000000000
		}
		return javaLongHash(bits), nil
	case time.Time:
		return javaLongHash(x.UnixMilli()), nil
	case connect.Decimal:
		return 31*javaBigIntegerHash(x.Unscaled) + int32(x.Scale), nil
	case []byte:
		h := int32(1)
		for i := len(x) - 1; i >= 0; i-- {
			h = 31*h + int32(int8(x[i]))
		}
		return h, nil
	case []any:
		h := int32(1)
		for _, e := range x {
			eh, err := javaHashCode(e)
			if err != nil {
				return 0, err
			}
			h = 31*h + eh
		}
		return h, nil
	case map[string]any:
		var h int32
		for k, e := range x {
			kh, _ := javaHashCode(k)
			eh, err := javaHashCode(e)
			if err != nil {
				return 0, err
			}
			h += kh ^ eh
		}
		return h, nil
	}
	return 0, fmt.Errorf("hashing a %T value is not supported: %w", v, ErrUnexpectedType)
}

// javaLongHash is Long.hashCode: (int)(v ^ (v >>> 32)).
func javaLongHash(v int64) int32 { return int32(v ^ int64(uint64(v)>>32)) }

// javaBigIntegerHash is BigInteger.hashCode: over the magnitude's 32-bit
// words, most significant first, h = 31*h + word, times the signum.
func javaBigIntegerHash(n *big.Int) int32 {
	if n == nil {
		return 0
	}
	mag := new(big.Int).Abs(n).Bytes()
	for len(mag)%4 != 0 {
		mag = append([]byte{0}, mag...)
	}
	var h int32
	for i := 0; i < len(mag); i += 4 {
		w := int32(uint32(mag[i])<<24 | uint32(mag[i+1])<<16 | uint32(mag[i+2])<<8 | uint32(mag[i+3]))
		h = 31*h + w
	}
	return h * int32(n.Sign())
}

// murmurHashObject is Debezium's MurmurHash3.hash(Object) (taken from
// Infinispan): strings are hashed over their UTF-8 encoding (unpaired
// surrogates as '?'), every other value over its Java hashCode
// (MurmurHash3.hash(int)); BYTES as ByteBuffer, i.e. by its hashCode.
func murmurHashObject(v any) (int32, error) {
	if s, ok := v.(string); ok {
		return murmurString(s), nil
	}
	h, err := javaHashCode(v)
	if err != nil {
		return 0, err
	}
	return murmurInt(h), nil
}

type murmurState struct{ h1, h2, k1, k2, c1, c2 uint64 }

func newMurmurState(seed uint64) *murmurState {
	return &murmurState{h1: 0x9368e53c2f6af274 ^ seed, h2: 0x586dcd208f7cd3fd ^ seed, c1: 0x87c37b91114253d5, c2: 0x4cf5ad432745937f}
}

func rotl64(x uint64, r uint) uint64 { return x<<r | x>>(64-r) }

func (s *murmurState) bmix() {
	s.k1 *= s.c1
	s.k1 = rotl64(s.k1, 23)
	s.k1 *= s.c2
	s.h1 ^= s.k1
	s.h1 += s.h2
	s.h2 = rotl64(s.h2, 41)
	s.k2 *= s.c2
	s.k2 = rotl64(s.k2, 23)
	s.k2 *= s.c1
	s.h2 ^= s.k2
	s.h2 += s.h1
	s.h1 = s.h1*3 + 0x52dce729
	s.h2 = s.h2*3 + 0x38495ab5
	s.c1 = s.c1*5 + 0x7b7d159c
	s.c2 = s.c2*5 + 0x6bce6396
}

func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

func (s *murmurState) finish(length uint64) uint64 {
	s.h2 ^= length
	s.h1 += s.h2
	s.h2 += s.h1
	s.h1 = fmix64(s.h1)
	s.h2 = fmix64(s.h2)
	s.h1 += s.h2
	s.h2 += s.h1
	return s.h1
}

// sx sign-extends a byte as Java's (long) byteValue, which Debezium's tail
// handling does.
func sx(b byte) uint64 { return uint64(int64(int8(b))) }

// murmurInt is MurmurHash3.hash(int): the four little-endian bytes of the
// hashCode, each sign-extended before shifting, as Debezium's code does.
func murmurInt(h int32) int32 {
	s := newMurmurState(9001)
	u := uint32(h)
	s.k1 ^= sx(byte(u>>24)) << 24
	s.k1 ^= sx(byte(u>>16)) << 16
	s.k1 ^= sx(byte(u>>8)) << 8
	s.k1 ^= sx(byte(u))
	s.bmix()
	return int32(s.finish(4) >> 32)
}

// murmurString is MurmurHash3.hashString: MurmurHash3_x64_64 over the
// string's UTF-8 bytes, seed 9001, upper 32 bits.
func murmurString(str string) int32 {
	units := utf16Units(str)
	var buf []byte
	for i := 0; i < len(units); i++ {
		c := rune(units[i])
		cp := c
		switch {
		case c >= 0xD800 && c <= 0xDBFF:
			if i+1 < len(units) && units[i+1] >= 0xDC00 && units[i+1] <= 0xDFFF {
				cp = 0x10000 + (c-0xD800)<<10 + (rune(units[i+1]) - 0xDC00)
				i++
			} else {
				cp = '?'
			}
		case c >= 0xDC00 && c <= 0xDFFF:
			cp = '?'
		}
		switch {
		case cp <= 0x7f:
			buf = append(buf, byte(cp))
		case cp <= 0x7ff:
			buf = append(buf, byte(0xc0|(0x1f&(cp>>6))), byte(0x80|(0x3f&cp)))
		case cp <= 0xffff:
			buf = append(buf, byte(0xe0|(0x0f&(cp>>12))), byte(0x80|(0x3f&(cp>>6))), byte(0x80|(0x3f&cp)))
		default:
			buf = append(buf, byte(0xf0|(0x07&(cp>>18))), byte(0x80|(0x3f&(cp>>12))), byte(0x80|(0x3f&(cp>>6))), byte(0x80|(0x3f&cp)))
		}
	}
	s := newMurmurState(9001)
	// Full 16-byte blocks: addByte packs unsigned bytes.
	n := len(buf) / 16 * 16
	for i := 0; i < n; i += 16 {
		s.k1, s.k2 = 0, 0
		for j := 0; j < 8; j++ {
			s.k1 |= uint64(buf[i+j]) << (8 * j)
			s.k2 |= uint64(buf[i+8+j]) << (8 * j)
		}
		s.bmix()
	}
	// Tail: the saved partial words re-read byte by byte, sign-extended.
	tail := buf[n:]
	s.k1, s.k2 = 0, 0
	for j := len(tail) - 1; j >= 0; j-- {
		if j >= 8 {
			s.k2 ^= sx(tail[j]) << (8 * (j - 8))
		} else {
			s.k1 ^= sx(tail[j]) << (8 * j)
		}
	}
	if len(tail) > 0 {
		s.bmix()
	}
	return int32(s.finish(uint64(len(buf))) >> 32)
}

// Close does nothing.
func (t *PartitionRouting) Close() {}
