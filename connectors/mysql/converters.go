package mysql

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/columns"
)

// KeyConverters is Debezium's converters key: comma-separated names of
// custom converters, each configured by <name>.type (the class) and
// <name>.<option> keys.
const KeyConverters = "converters"

// TinyIntOneToBooleanClass is Debezium's shipped converter of TINYINT(1)
// columns to booleans, the only converter class connectd implements.
const TinyIntOneToBooleanClass = "io.debezium.connector.binlog.converters.TinyIntOneToBooleanConverter"

// tinyIntBool is a configured TinyIntOneToBooleanConverter, as Debezium's
// (debezium-connector-binlog 3.5): a column whose type name is TINYINT or
// TINYINT UNSIGNED, whose length (display width) is 1 unless
// length.checker=false, and whose <db>.<table>.<column> one of the selector
// regexes matches (whole, case-insensitive; no selector = every column)
// becomes a Connect boolean; a value is true when it is > 0.
type tinyIntBool struct {
	selectors     []*regexp.Regexp
	lengthChecker bool
}

// applies says whether the converter takes column c of table db.table.
func (b *tinyIntBool) applies(tableID string, c *column) bool {
	if b == nil || c.dataType != "tinyint" {
		return false
	}
	if b.lengthChecker && c.dbzLength() != 1 {
		return false
	}
	if len(b.selectors) == 0 {
		return true
	}
	id := tableID + "." + c.Name
	for _, re := range b.selectors {
		if re.MatchString(id) {
			return true
		}
	}
	return false
}

// parseConverters reads converters and its <name>.* keys. Every converter
// must name a class connectd implements: an unknown class is an error on
// <name>.type naming it (Debezium would load it; connectd cannot).
func parseConverters(cfg map[string]string) (*tinyIntBool, []connect.ConfigError) {
	var out *tinyIntBool
	var errs []connect.ConfigError
	for _, name := range strings.Split(cfg[KeyConverters], ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		typ := strings.TrimSpace(cfg[name+".type"])
		switch typ {
		case TinyIntOneToBooleanClass:
			b := &tinyIntBool{lengthChecker: true}
			if v := strings.TrimSpace(cfg[name+".length.checker"]); v != "" {
				b.lengthChecker = strings.EqualFold(v, "true") // Boolean.parseBoolean
			}
			for _, p := range strings.Split(cfg[name+".selector"], ",") {
				if p = strings.TrimSpace(p); p == "" {
					continue
				}
				re, err := columns.CompileCI(p, true)
				if err != nil {
					errs = append(errs, connect.ConfigError{Key: name + ".selector", Message: fmt.Sprintf("%s: invalid regular expression %q: %v", name+".selector", p, err)})
					continue
				}
				b.selectors = append(b.selectors, re)
			}
			if out != nil {
				errs = append(errs, connect.ConfigError{Key: KeyConverters, Message: "converters: connectd supports one " + TinyIntOneToBooleanClass + " converter, got more"})
			}
			out = b
		case "":
			errs = append(errs, connect.ConfigError{Key: name + ".type", Message: fmt.Sprintf("converter %s: %s.type (its class) is required", name, name)})
		default:
			errs = append(errs, connect.ConfigError{Key: name + ".type", Message: fmt.Sprintf("converter %s: connectd does not implement converter class %s (only %s)", name, typ, TinyIntOneToBooleanClass)})
		}
	}
	return out, errs
}

// asTinyIntBool makes ct a TinyIntOneToBooleanConverter column: schema
// boolean (optional as the column, its default converted), values > 0 true.
func (ct colType) asTinyIntBool() colType {
	c := ct.col
	sb := connect.NewSchema(connect.Boolean)
	if c.Optional {
		sb.Optional()
	}
	if c.comment != "" {
		sb.Doc(c.comment)
	}
	nt := colType{kind: kTinyBool, col: c, modes: ct.modes, fallback: false}
	nt.schema = sb.Build() // Default below sets it on the same schema
	if c.defaultSQL != nil {
		if v, ok := ct.defaultValue(*c.defaultSQL); ok {
			if n, err := strconv.ParseInt(fmt.Sprint(v), 10, 64); err == nil {
				sb.Default(n > 0)
			}
		}
	}
	return nt
}
