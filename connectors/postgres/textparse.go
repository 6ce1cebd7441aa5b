package postgres

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Parsers of PostgreSQL's text output for composite values: arrays,
// int2vector, hstore and interval (IntervalStyle=postgres). Pure functions,
// shared by snapshot and streaming.

// parseArray parses a one-dimensional array literal ("{1,NULL,"a b"}",
// optionally prefixed by explicit bounds "[0:1]=") and converts each element
// with conv; NULL elements are nil.
func parseArray(s string, conv func(string) (any, error)) (any, error) {
	if strings.HasPrefix(s, "[") {
		if i := strings.IndexByte(s, '='); i > 0 {
			s = s[i+1:]
		}
	}
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, fmt.Errorf("invalid array %q", s)
	}
	body := s[1 : len(s)-1]
	out := make([]any, 0, strings.Count(body, ",")+1)
	if body == "" {
		return out, nil
	}
	var sb strings.Builder
	for i := 0; i <= len(body); {
		if i < len(body) && body[i] == '{' {
			return nil, fmt.Errorf("multi-dimensional arrays are not supported: %q", s)
		}
		var elem string
		quoted := false
		if i < len(body) && body[i] == '"' {
			quoted = true
			sb.Reset()
			i++
			for i < len(body) && body[i] != '"' {
				if body[i] == '\\' && i+1 < len(body) {
					i++
				}
				sb.WriteByte(body[i])
				i++
			}
			i++ // closing quote
			elem = sb.String()
		} else {
			j := i
			for j < len(body) && body[j] != ',' {
				j++
			}
			elem = strings.TrimSpace(body[i:j])
			i = j
		}
		if !quoted && strings.EqualFold(elem, "NULL") {
			out = append(out, nil)
		} else {
			v, err := conv(elem)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if i >= len(body) {
			break
		}
		if body[i] != ',' {
			return nil, fmt.Errorf("invalid array %q", s)
		}
		i++
	}
	return out, nil
}

// parseVector parses int2vector / oidvector text ("1 2 3").
func parseVector(s string, conv func(string) (any, error)) (any, error) {
	fields := strings.Fields(s)
	out := make([]any, len(fields))
	for i, f := range fields {
		v, err := conv(f)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

type hstorePair struct {
	key   string
	value *string
}

// parseHstore parses hstore output: "k"=>"v", "k2"=>NULL (quotes optional,
// backslash escapes inside quotes).
func parseHstore(s string) ([]hstorePair, error) {
	var out []hstorePair
	i := 0
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == ',') {
			i++
		}
	}
	token := func() (string, bool, error) {
		if i < len(s) && s[i] == '"' {
			var sb strings.Builder
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				sb.WriteByte(s[i])
				i++
			}
			if i >= len(s) {
				return "", false, fmt.Errorf("invalid hstore %q", s)
			}
			i++
			return sb.String(), true, nil
		}
		j := i
		for j < len(s) && s[j] != '=' && s[j] != ',' && s[j] != ' ' {
			j++
		}
		t := s[i:j]
		i = j
		return t, false, nil
	}
	for {
		skipSpace()
		if i >= len(s) {
			return out, nil
		}
		k, _, err := token()
		if err != nil {
			return nil, err
		}
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if !strings.HasPrefix(s[i:], "=>") {
			return nil, fmt.Errorf("invalid hstore %q", s)
		}
		i += 2
		for i < len(s) && s[i] == ' ' {
			i++
		}
		v, quoted, err := token()
		if err != nil {
			return nil, err
		}
		p := hstorePair{key: k}
		if quoted || !strings.EqualFold(v, "NULL") {
			vv := v
			p.value = &vv
		}
		out = append(out, p)
	}
}

// parseHstoreMap is hstore.handling.mode=map: map<string, optional string>.
func parseHstoreMap(s string) (any, error) {
	pairs, err := parseHstore(s)
	if err != nil {
		return nil, err
	}
	m := make(map[string]any, len(pairs))
	for _, p := range pairs {
		if p.value == nil {
			m[p.key] = nil
		} else {
			m[p.key] = *p.value
		}
	}
	return m, nil
}

// parseHstoreJSON is hstore.handling.mode=json: a JSON object text as
// Jackson writes a map (compact, keys sorted, null for NULL values).
func parseHstoreJSON(s string) (any, error) {
	pairs, err := parseHstore(s)
	if err != nil {
		return nil, err
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].key < pairs[j].key })
	b := make([]byte, 0, len(s)+2)
	b = append(b, '{')
	for i, p := range pairs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJacksonString(b, p.key)
		b = append(b, ':')
		if p.value == nil {
			b = append(b, "null"...)
		} else {
			b = appendJacksonString(b, *p.value)
		}
	}
	return string(append(b, '}')), nil
}

const hexUpper = "0123456789ABCDEF"

// appendJacksonString appends s as a JSON string the way Jackson writes it
// (control characters as \u00XX with upper-case hex, non-BMP characters as
// escaped surrogate pairs, other non-ASCII raw).
func appendJacksonString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				b = append(b, '\\', '"')
			case c == '\\':
				b = append(b, '\\', '\\')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexUpper[c>>4], hexUpper[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r > 0xFFFF {
			hi, lo := utf16.EncodeRune(r)
			for _, u := range []rune{hi, lo} {
				b = append(b, '\\', 'u', hexUpper[u>>12&0xf], hexUpper[u>>8&0xf], hexUpper[u>>4&0xf], hexUpper[u&0xf])
			}
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// interval is a PostgreSQL interval split as the JDBC driver's PGInterval
// splits it: years, months, days and a signed time part in microseconds.
type interval struct {
	years, months, days int64
	us                  int64
}

// parseInterval parses IntervalStyle=postgres output:
// "1 year 2 mons 3 days 04:05:06.789", "-1 days -02:00:00.5", "00:00:00".
func parseInterval(s string) (interval, error) {
	var iv interval
	f := strings.Fields(s)
	for i := 0; i < len(f); i++ {
		tok := f[i]
		if strings.Contains(tok, ":") {
			neg := strings.HasPrefix(tok, "-")
			tok = strings.TrimLeft(tok, "+-")
			parts := strings.Split(tok, ":")
			if len(parts) != 3 {
				return iv, fmt.Errorf("invalid interval %q", s)
			}
			h, err1 := strconv.ParseInt(parts[0], 10, 64)
			m, err2 := strconv.ParseInt(parts[1], 10, 64)
			sec, frac, _ := strings.Cut(parts[2], ".")
			sv, err3 := strconv.ParseInt(sec, 10, 64)
			if err1 != nil || err2 != nil || err3 != nil {
				return iv, fmt.Errorf("invalid interval %q", s)
			}
			for len(frac) < 6 {
				frac += "0"
			}
			fv, _ := strconv.ParseInt(frac[:6], 10, 64)
			iv.us = ((h*60+m)*60+sv)*usPerSec + fv
			if neg {
				iv.us = -iv.us
			}
			continue
		}
		if i+1 >= len(f) {
			return iv, fmt.Errorf("invalid interval %q", s)
		}
		n, err := strconv.ParseInt(tok, 10, 64)
		if err != nil {
			return iv, fmt.Errorf("invalid interval %q", s)
		}
		i++
		switch unit := f[i]; {
		case strings.HasPrefix(unit, "year"):
			iv.years = n
		case strings.HasPrefix(unit, "mon"):
			iv.months = n
		case strings.HasPrefix(unit, "day"):
			iv.days = n
		default:
			return iv, fmt.Errorf("invalid interval %q", s)
		}
	}
	return iv, nil
}

// usPerMonth is Debezium's average month (365.25 / 12 days) in microseconds.
const usPerMonth = 2_629_800 * usPerSec

// parseIntervalMicros is io.debezium.time.MicroDuration
// (interval.handling.mode=numeric).
func parseIntervalMicros(s string) (any, error) {
	iv, err := parseInterval(s)
	if err != nil {
		return nil, err
	}
	return (iv.years*12+iv.months)*usPerMonth + iv.days*usPerDay + iv.us, nil
}

// parseIntervalISO is io.debezium.time.Interval (interval.handling.mode=
// string): "P<y>Y<m>M<d>DT<h>H<m>M<s>S", each time component carrying the
// sign of the time part, seconds with as few fraction digits as needed.
func parseIntervalISO(s string) (any, error) {
	iv, err := parseInterval(s)
	if err != nil {
		return nil, err
	}
	us := iv.us
	sign := ""
	if us < 0 {
		sign = "-"
		us = -us
	}
	h, m := us/(3600*usPerSec), us/(60*usPerSec)%60
	sec, frac := us/usPerSec%60, us%usPerSec
	comp := func(v int64) string {
		if v == 0 {
			return "0"
		}
		return sign + strconv.FormatInt(v, 10)
	}
	secs := comp(sec)
	if frac != 0 {
		fs := strconv.FormatInt(frac+usPerSec, 10)[1:]
		fs = strings.TrimRight(fs, "0")
		secs = sign + strconv.FormatInt(sec, 10) + "." + fs
	}
	return "P" + strconv.FormatInt(iv.years, 10) + "Y" + strconv.FormatInt(iv.months, 10) + "M" +
		strconv.FormatInt(iv.days, 10) + "DT" + comp(h) + "H" + comp(m) + "M" + secs + "S", nil
}
