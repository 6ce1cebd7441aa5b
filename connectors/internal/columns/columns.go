// Package columns is the column-level configuration shared by the relational
// connectors, as Debezium's RelationalDatabaseConnectorConfig and
// ColumnMappers define it: column.include.list / column.exclude.list,
// message.key.columns, column.mask.with.N.chars, column.truncate.to.N.chars,
// column.mask.hash.<algorithm>.with.salt.<salt> (hashing strategy V1),
// column.propagate.source.type and datatype.propagate.source.type.
//
// Column patterns are anchored regular expressions matched against
// "<schema or database>.<table>.<column>"; datatype patterns against
// "<schema or database>.<table>.<TYPE NAME>". A connector resolves the rules
// once per table schema (Rules.Map), never per row.
package columns

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/connectd/connectd/connect"
)

// Configuration keys with a fixed name (the mask, truncate and hash keys
// carry their parameters in the name).
const (
	KeyColumnIncludeList     = "column.include.list"
	KeyColumnExcludeList     = "column.exclude.list"
	KeyMessageKeyColumns     = "message.key.columns"
	KeyColumnPropagateType   = "column.propagate.source.type"
	KeyDatatypePropagateType = "datatype.propagate.source.type"
)

// Schema parameters Debezium's PropagateSourceTypeToSchemaParameter sets.
const (
	ParamTypeName   = "__debezium.source.column.type"
	ParamLength     = "__debezium.source.column.length"
	ParamScale      = "__debezium.source.column.scale"
	ParamColumnName = "__debezium.source.column.name"
	ParamComment    = "__debezium.source.column.comment"
)

// Rules are the parsed column keys of one connector configuration. A nil
// *Rules is valid and maps nothing.
type Rules struct {
	include, exclude []*regexp.Regexp
	mask             []rule // value → N '*'
	truncate         []rule // strings cut to N characters
	hash             []rule // value → hex digest
	propagate        []*regexp.Regexp
	propagateType    []*regexp.Regexp
	keys             []keyRule
}

type rule struct {
	re   *regexp.Regexp
	n    int
	alg  string
	salt string
}

// keyRule is one "<table regex>:<column>[,<column>…]" of message.key.columns.
type keyRule struct {
	table *regexp.Regexp
	cols  []string
}

var (
	maskKeyRE     = regexp.MustCompile(`^column\.mask\.with\.(\d+)\.chars$`)
	truncateKeyRE = regexp.MustCompile(`^column\.truncate\.to\.(\d+)\.chars$`)
	hashKeyRE     = regexp.MustCompile(`^column\.mask\.hash\.([^.]+(?:-[^.]+)?)\.with\.salt\.(.*)$`)
)

// SplitList splits a comma-separated list, trimming blanks and dropping
// empty items.
func SplitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// CompileList compiles a comma-separated list of regular expressions, each
// anchored at both ends (Debezium matches with Pattern.matches); the error
// names the invalid expression.
func CompileList(v string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range SplitList(v) {
		re, err := anchored(p)
		if err != nil {
			return nil, fmt.Errorf("invalid regular expression %q: %v", p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// anchored compiles pat to match a whole identifier, case-insensitively:
// Debezium's Predicates.includes/excludes and Selectors compile every list
// with Pattern.CASE_INSENSITIVE (ASCII letters only: CompileCI).
func anchored(pat string) (*regexp.Regexp, error) { return CompileCI(pat, true) }

// Parse reads the column keys of a raw configuration. Errors name the key:
// an invalid regular expression, a message.key.columns entry that is not
// "<table>:<column>[,<column>…]", a hash algorithm Java's MessageDigest
// would not know.
func Parse(cfg map[string]string) (*Rules, error) {
	r := &Rules{}
	var err error
	for _, l := range []struct {
		key  string
		into *[]*regexp.Regexp
	}{{KeyColumnIncludeList, &r.include}, {KeyColumnExcludeList, &r.exclude},
		{KeyColumnPropagateType, &r.propagate}, {KeyDatatypePropagateType, &r.propagateType}} {
		if *l.into, err = CompileList(cfg[l.key]); err != nil {
			return nil, fmt.Errorf("%s: %w", l.key, err)
		}
	}
	for _, part := range strings.Split(cfg[KeyMessageKeyColumns], ";") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		i := strings.LastIndexByte(part, ':')
		if i <= 0 {
			return nil, fmt.Errorf("%s: %q is not <table>:<column>[,<column>…]", KeyMessageKeyColumns, part)
		}
		re, err := anchored(part[:i])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", KeyMessageKeyColumns, err)
		}
		r.keys = append(r.keys, keyRule{table: re, cols: SplitList(part[i+1:])})
	}
	for k, v := range cfg {
		var ru rule
		var into *[]rule
		if m := maskKeyRE.FindStringSubmatch(k); m != nil {
			ru.n, _ = strconv.Atoi(m[1])
			into = &r.mask
		} else if m := truncateKeyRE.FindStringSubmatch(k); m != nil {
			ru.n, _ = strconv.Atoi(m[1])
			into = &r.truncate
		} else if m := hashKeyRE.FindStringSubmatch(k); m != nil {
			ru.alg, ru.salt = m[1], m[2]
			if newHash(ru.alg) == nil {
				return nil, fmt.Errorf("%s: unsupported hash algorithm %q", k, ru.alg)
			}
			into = &r.hash
		} else {
			continue
		}
		res, err := CompileList(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		for _, re := range res {
			ru.re = re
			*into = append(*into, ru)
		}
	}
	return r, nil
}

// Empty reports whether no column key is set (nothing to map or filter).
func (r *Rules) Empty() bool {
	return r == nil || len(r.include)+len(r.exclude)+len(r.mask)+len(r.truncate)+len(r.hash)+
		len(r.propagate)+len(r.propagateType)+len(r.keys) == 0
}

func newHash(alg string) hash.Hash {
	switch strings.ToUpper(alg) {
	case "MD5":
		return md5.New()
	case "SHA-1", "SHA1":
		return sha1.New()
	case "SHA-256", "SHA256":
		return sha256.New()
	case "SHA-384", "SHA384":
		return sha512.New384()
	case "SHA-512", "SHA512":
		return sha512.New()
	}
	return nil
}

// Excluded reports whether a column ("<schema>.<table>.<column>") is left
// out of change events: not matched by a non-empty column.include.list, or
// matched by column.exclude.list.
func (r *Rules) Excluded(id string) bool {
	if r == nil {
		return false
	}
	if len(r.include) > 0 {
		return !matchAny(r.include, id)
	}
	return matchAny(r.exclude, id)
}

// KeyColumns returns the message.key.columns of a table ("<schema>.<table>")
// in configuration order, or nil when no entry matches.
func (r *Rules) KeyColumns(tableID string) []string {
	if r == nil {
		return nil
	}
	for _, k := range r.keys {
		if k.table.MatchString(tableID) {
			return k.cols
		}
	}
	return nil
}

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// Source is a column as Debezium's table model describes it, for the
// propagate-source-type parameters.
type Source struct {
	Name     string
	TypeName string // io.debezium.relational.Column#typeName; upper-cased in the parameter
	// Length is the column's declared length; -1 = unset (no
	// __debezium.source.column.length). A hashed value longer than a
	// positive Length is cut to it.
	Length int
	Scale  *int // nil = unset
	// Comment is the column's comment as the table model has it ("" =
	// none: no __debezium.source.column.comment).
	Comment string
	// NotChar: the column's JDBC type is not a character type although
	// its field may be a string (PostgreSQL uuid, json, numeric under
	// decimal.handling.mode=string…). Debezium's MaskStrings masks or
	// hashes only CHAR/VARCHAR/CLOB-like columns and passes any other value
	// through, its field still marked masked=true.
	NotChar bool
}

// Mapping is what the rules do to one column: its (possibly re-parameterised)
// field schema, a mapper of non-null values, or a constant mask.
type Mapping struct {
	Schema *connect.Schema
	// Post maps a non-null converted value (truncate, hash); nil = none.
	Post func(any) any
	// Mask is the value of every row, NULL included
	// (column.mask.with.N.chars); nil = none.
	Mask any
}

// Map applies the first rule that matches a column of table tableID
// ("<schema>.<table>") whose field schema is s, in Debezium's ColumnMappers
// order: truncate, mask with N chars, mask hash (these three to string
// fields only; a hash is cut to src.Length, as in Debezium's capture of a
// VARCHAR(10): testdata/debezium/mariadb_types_columns.jsonl), then
// column.propagate.source.type and
// datatype.propagate.source.type (not to struct, array or map fields).
// The returned Schema is s when nothing applies.
func (r *Rules) Map(tableID string, s *connect.Schema, src Source) Mapping {
	out := Mapping{Schema: s}
	if r == nil {
		return out
	}
	id := tableID + "." + src.Name
	if s.Type != connect.String && s.Type != connect.StructT && s.Type != connect.Array && s.Type != connect.Map {
		// column.mask.* on a column of another type: the value as it is,
		// the schema marked (MaskStrings.create's passthrough and its
		// alterFieldSchema; difftest seed 249, a numeric column)
		for _, m := range r.mask {
			if m.re.MatchString(id) {
				out.Schema = withParams(s, "masked", "true")
				return out
			}
		}
		for _, m := range r.hash {
			if m.re.MatchString(id) {
				out.Schema = withParams(s, "masked", "true")
				return out
			}
		}
	}
	if s.Type == connect.String {
		for _, m := range r.truncate {
			if m.re.MatchString(id) {
				n := m.n
				if src.Length >= 0 && src.Length <= n {
					// Debezium's TruncateStrings: truncation is possible
					// only when the length is unknown or greater than n;
					// otherwise the column passes as it is, without the
					// parameter (mariadiff seed 61: CHAR(5) with 6 chars)
					return out
				}
				out.Post = func(v any) any {
					if str, ok := v.(string); ok {
						return truncateUTF16(str, n)
					}
					return v
				}
				out.Schema = withParams(s, "truncateLength", strconv.Itoa(n))
				return out
			}
		}
		for _, m := range r.mask {
			if m.re.MatchString(id) {
				// Debezium masks NULLs too.
				if !src.NotChar {
					out.Mask = strings.Repeat("*", m.n)
				}
				out.Schema = withParams(s, "masked", "true")
				return out
			}
		}
		for _, m := range r.hash {
			if m.re.MatchString(id) && src.NotChar {
				out.Schema = withParams(s, "masked", "true")
				return out
			}
			if m.re.MatchString(id) {
				alg, salt, limit := m.alg, []byte(m.salt), src.Length
				out.Post = func(v any) any {
					str, ok := v.(string)
					if !ok {
						return v
					}
					h := newHash(alg)
					h.Write(salt)
					h.Write(javaSerializedString(str))
					d := hex.EncodeToString(h.Sum(nil))
					if limit > 0 && len(d) > limit {
						// cut to the column's length, as Debezium's MaskStrings
						d = d[:limit]
					}
					return d
				}
				out.Schema = withParams(s, "masked", "true")
				return out
			}
		}
	}
	if s.Type == connect.StructT || s.Type == connect.Array || s.Type == connect.Map {
		return out
	}
	if matchAny(r.propagate, id) || matchAny(r.propagateType, tableID+"."+strings.ToUpper(src.TypeName)) {
		kv := []string{ParamTypeName, strings.ToUpper(src.TypeName)}
		if src.Length >= 0 {
			kv = append(kv, ParamLength, strconv.Itoa(src.Length))
		}
		if src.Scale != nil {
			kv = append(kv, ParamScale, strconv.Itoa(*src.Scale))
		}
		if src.Comment != "" {
			// Debezium's PropagateSourceTypeToSchemaParameter adds it after
			// the scale (mariadiff seed 14)
			kv = append(kv, ParamComment, src.Comment)
		}
		kv = append(kv, ParamColumnName, src.Name)
		out.Schema = withParams(s, kv...)
	}
	return out
}

// withParams returns a copy of a non-struct schema with extra parameters.
func withParams(s *connect.Schema, kv ...string) *connect.Schema {
	b := connect.NewSchema(s.Type)
	if s.Name != "" {
		b.Name(s.Name)
	}
	if s.Version != 0 {
		b.Version(s.Version)
	}
	if s.Doc != "" {
		b.Doc(s.Doc)
	}
	for _, k := range s.ParamKeys() {
		v, _ := s.Param(k)
		b.Param(k, v)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		b.Param(kv[i], kv[i+1])
	}
	if s.Optional {
		b.Optional()
	}
	if s.Default != nil {
		b.Default(s.Default)
	}
	out := b.Build()
	out.ValueSchema, out.KeySchema = s.ValueSchema, s.KeySchema
	return out
}

// truncateUTF16 cuts s to n Java chars (UTF-16 code units), as
// String.substring does.
func truncateUTF16(s string, n int) string {
	units := 0
	for i, r := range s {
		w := 1
		if utf16.IsSurrogate(r) || r > 0xFFFF {
			w = 2
		}
		if units+w > n {
			return s[:i]
		}
		units += w
	}
	return s
}

// javaSerializedString is ObjectOutputStream.writeObject(s) for a String
// (Debezium's default hashing strategy V1 hashes these bytes).
func javaSerializedString(s string) []byte {
	b := []byte{0xAC, 0xED, 0x00, 0x05}
	mu := modifiedUTF8(s)
	if len(mu) <= 0xFFFF {
		b = append(b, 0x74, byte(len(mu)>>8), byte(len(mu)))
	} else {
		b = append(b, 0x7C)
		for i := 7; i >= 0; i-- {
			b = append(b, byte(uint64(len(mu))>>(8*i)))
		}
	}
	return append(b, mu...)
}

func modifiedUTF8(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, u := range utf16.Encode([]rune(s)) {
		switch {
		case u != 0 && u < 0x80:
			out = append(out, byte(u))
		case u < 0x800:
			out = append(out, byte(0xC0|u>>6), byte(0x80|u&0x3F))
		default:
			out = append(out, byte(0xE0|u>>12), byte(0x80|(u>>6)&0x3F), byte(0x80|u&0x3F))
		}
	}
	return out
}
