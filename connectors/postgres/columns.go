package postgres

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
	"github.com/connectd/connectd/connectors/internal/relational"
)

// Column-level configuration, as Debezium's RelationalDatabaseConnectorConfig
// and ColumnMappers: column.include.list / column.exclude.list,
// message.key.columns, column.mask.with.N.chars, column.truncate.to.N.chars,
// column.mask.hash.<algorithm>.with.salt.<salt>, column.propagate.source.type.
// Column patterns are anchored regular expressions matched against
// "<schema>.<table>.<column>". Everything here is resolved once per table
// schema (newTableSchema), never per row.
type columnRules struct {
	include, exclude []*regexp.Regexp
	mask             []columnRule // value → N '*'
	truncate         []columnRule // strings cut to N characters
	hash             []columnRule // value → hex digest
	propagate        []*regexp.Regexp
	keys             []keyRule
}

type columnRule struct {
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

// Column configuration keys with a fixed name.
const (
	KeyColumnIncludeList       = "column.include.list"
	KeyColumnExcludeList       = "column.exclude.list"
	KeyMessageKeyColumns       = "message.key.columns"
	KeyColumnPropagateType     = "column.propagate.source.type"
	KeySchemaIncludeList       = "schema.include.list"
	KeySchemaExcludeList       = "schema.exclude.list"
	KeyTableExcludeList        = "table.exclude.list"
	KeyMessagePrefixIncludeLst = "message.prefix.include.list"
	KeyMessagePrefixExcludeLst = "message.prefix.exclude.list"
)

func anchored(pat string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + pat + `)$`)
}

func compileList(v string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range splitList(v) {
		re, err := anchored(p)
		if err != nil {
			return nil, fmt.Errorf("invalid regular expression %q: %v", p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// parseColumnRules reads the column keys of a raw configuration; errors name
// the key.
func parseColumnRules(cfg map[string]string) (*columnRules, error) {
	r := &columnRules{}
	var err error
	if r.include, err = compileList(cfg[KeyColumnIncludeList]); err != nil {
		return nil, fmt.Errorf("%s: %w", KeyColumnIncludeList, err)
	}
	if r.exclude, err = compileList(cfg[KeyColumnExcludeList]); err != nil {
		return nil, fmt.Errorf("%s: %w", KeyColumnExcludeList, err)
	}
	if r.propagate, err = compileList(cfg[KeyColumnPropagateType]); err != nil {
		return nil, fmt.Errorf("%s: %w", KeyColumnPropagateType, err)
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
		r.keys = append(r.keys, keyRule{table: re, cols: splitList(part[i+1:])})
	}
	for k, v := range cfg {
		var rule columnRule
		var into *[]columnRule
		if m := maskKeyRE.FindStringSubmatch(k); m != nil {
			rule.n, _ = strconv.Atoi(m[1])
			into = &r.mask
		} else if m := truncateKeyRE.FindStringSubmatch(k); m != nil {
			rule.n, _ = strconv.Atoi(m[1])
			into = &r.truncate
		} else if m := hashKeyRE.FindStringSubmatch(k); m != nil {
			rule.alg, rule.salt = m[1], m[2]
			if newHash(rule.alg) == nil {
				return nil, fmt.Errorf("%s: unsupported hash algorithm %q", k, rule.alg)
			}
			into = &r.hash
		} else {
			continue
		}
		res, err := compileList(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		for _, re := range res {
			rule.re = re
			*into = append(*into, rule)
		}
	}
	return r, nil
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

// excluded reports whether a column is left out (column.include.list /
// column.exclude.list on "<schema>.<table>.<column>").
func (r *columnRules) excluded(id string) bool {
	if r == nil {
		return false
	}
	if len(r.include) > 0 {
		for _, re := range r.include {
			if re.MatchString(id) {
				return false
			}
		}
		return true
	}
	for _, re := range r.exclude {
		if re.MatchString(id) {
			return true
		}
	}
	return false
}

// keyColumns returns the message.key.columns of a table, or nil.
func (r *columnRules) keyColumns(tableID string) []string {
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

// apply sets a column's value mapper and schema parameters from the first
// rule that matches it, in Debezium's ColumnMappers order: truncate, mask
// with N chars, mask hash, propagate source type. Mask and hash apply to
// string columns only.
func (r *columnRules) apply(id string, c relational.Column, ct *colType) {
	if r == nil || ct.schema.Type != connect.String && !r.propagates(id) {
		return
	}
	for _, m := range r.truncate {
		if m.re.MatchString(id) && ct.schema.Type == connect.String {
			n := m.n
			ct.post = func(v any) any {
				if s, ok := v.(string); ok {
					return truncateUTF16(s, n)
				}
				return v
			}
			ct.schema = withParams(ct.schema, "truncateLength", strconv.Itoa(n))
			return
		}
	}
	for _, m := range r.mask {
		if m.re.MatchString(id) && ct.schema.Type == connect.String {
			// Debezium masks NULLs too.
			ct.mask = strings.Repeat("*", m.n)
			ct.schema = withParams(ct.schema, "masked", "true")
			return
		}
	}
	for _, m := range r.hash {
		if m.re.MatchString(id) && ct.schema.Type == connect.String {
			alg, salt := m.alg, []byte(m.salt)
			ct.post = func(v any) any {
				s, ok := v.(string)
				if !ok {
					return v
				}
				h := newHash(alg)
				h.Write(salt)
				h.Write(javaSerializedString(s))
				return hex.EncodeToString(h.Sum(nil))
			}
			ct.schema = withParams(ct.schema, "masked", "true")
			return
		}
	}
	if r.propagates(id) && ct.schema.Type != connect.StructT && ct.schema.Type != connect.Array && ct.schema.Type != connect.Map {
		kv := []string{"__debezium.source.column.type", strings.ToUpper(c.TypeName)}
		if l, sc, ok := sourceLengthScale(c); ok {
			kv = append(kv, "__debezium.source.column.length", strconv.Itoa(l), "__debezium.source.column.scale", strconv.Itoa(sc))
		}
		kv = append(kv, "__debezium.source.column.name", c.Name)
		ct.schema = withParams(ct.schema, kv...)
	}
}

// sourceLengthScale is a column's length and scale as Debezium reads them
// (pgjdbc metadata / typmod) for varchar(n), char(n) and numeric(p,s).
func sourceLengthScale(c relational.Column) (length, scale int, ok bool) {
	switch c.TypeOID {
	case oidVarchar, oidBPChar:
		if c.TypeMod >= 4 {
			return int(c.TypeMod - 4), 0, true
		}
	case oidNumeric:
		if p, s, ok := numericPrecisionScale(c.TypeMod); ok {
			return p, s, true
		}
	}
	return 0, 0, false
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

// propagates reports whether column.propagate.source.type matches.
func (r *columnRules) propagates(id string) bool {
	if r == nil {
		return false
	}
	for _, re := range r.propagate {
		if re.MatchString(id) {
			return true
		}
	}
	return false
}
