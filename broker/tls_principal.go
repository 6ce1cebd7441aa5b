package broker

import (
	"crypto/tls"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Principals from TLS client certificates, as Kafka's
// DefaultKafkaPrincipalBuilder names them on an SSL listener with
// ssl.client.auth=required or requested:
//
//   - the client certificate's subject as Java's X500Principal.getName()
//     (RFC 2253: the RDNs most specific first, the attribute keywords CN,
//     C, L, ST, O, OU, STREET, DC and UID, every other attribute as its
//     OID with the value's DER in hex, `,=+<>#;"\` and leading and
//     trailing spaces escaped with a backslash, NUL as \00), for example
//     "CN=alice,OU=eng,O=Acme\, Inc.,C=US";
//   - mapped by embedded.kafka.ssl.principal.mapping.rules (Kafka's
//     ssl.principal.mapping.rules, default DEFAULT): a comma-separated list
//     of DEFAULT (the name as it is) and RULE:pattern/replacement/ with an
//     optional L or U (lower or upper case the result); the first rule
//     whose pattern matches the whole name gives the principal's name, and
//     a name no rule matches fails the connection's authentication;
//   - User:ANONYMOUS for a client without a certificate (requested).
//
// On SASL_SSL the principal is the SASL user, as in Kafka. The patterns
// are Go regular expressions (RE2): Java's syntax without backreferences
// and lookaround, which are refused at start with the key named;
// replacements use Java's $n group references and \ escapes.

// tlsPrincipalMapper maps a certificate subject's RFC 2253 name to a
// principal name.
type tlsPrincipalMapper struct {
	rules []principalRule
}

// principalRule is one ssl.principal.mapping.rules entry.
type principalRule struct {
	isDefault bool
	match     *regexp.Regexp // the pattern anchored: matches the whole name
	re        *regexp.Regexp // the pattern as written, for the replacement
	repl      string         // Go template (regexp.Expand syntax)
	lower     bool
	upper     bool
	text      string
}

// ruleSplitter is Kafka's SslPrincipalMapper rule syntax: DEFAULT or
// RULE:pattern/replacement/[LU], a slash or backslash inside pattern and
// replacement escaped with a backslash.
var ruleSplitter = regexp.MustCompile(`^\s*(DEFAULT|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?)|)\s*(,\s*|$)`)

// parsePrincipalRules parses ssl.principal.mapping.rules (empty: not set,
// Kafka's default DEFAULT). A replacement naming a group the pattern does
// not have is refused here (Java refuses it at the first match).
func parsePrincipalRules(rules string) (*tlsPrincipalMapper, error) {
	rules = strings.TrimSpace(rules)
	if rules == "" {
		rules = "DEFAULT"
	}
	m := &tlsPrincipalMapper{}
	for rest := rules; rest != ""; {
		sm := ruleSplitter.FindStringSubmatch(rest)
		if sm == nil {
			return nil, fmt.Errorf("invalid rule: %q is not DEFAULT or RULE:pattern/replacement/[LU]", rest)
		}
		rest = rest[len(sm[0]):]
		switch {
		case sm[1] == "":
			// An empty rule (",,") is ignored, as in Kafka.
			continue
		case sm[1] == "DEFAULT":
			m.rules = append(m.rules, principalRule{isDefault: true, text: "DEFAULT"})
			continue
		}
		re, err := regexp.Compile(sm[2])
		if err != nil {
			return nil, fmt.Errorf("rule %q: pattern: %v (patterns are RE2 regular expressions: no backreferences or lookaround)", sm[1], err)
		}
		repl, err := javaReplacement(sm[3], re)
		if err != nil {
			return nil, fmt.Errorf("rule %q: replacement: %v", sm[1], err)
		}
		m.rules = append(m.rules, principalRule{
			match: regexp.MustCompile(`^(?:` + sm[2] + `)$`), re: re, repl: repl,
			lower: sm[4] == "L", upper: sm[4] == "U", text: sm[1],
		})
	}
	return m, nil
}

// javaReplacement turns a java.util.regex replacement into a Go template:
// $n refers to group n (the longest number that names a group, as Java
// reads it; a reference to a group the pattern does not have is literal,
// as Kafka's mapper makes it), ${name} to a named group, \c is c.
func javaReplacement(s string, re *regexp.Regexp) (string, error) {
	groups := re.NumSubexp()
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			i++
			if i == len(s) {
				return "", errors.New("character to be escaped is missing")
			}
			if s[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(s[i])
			}
		case '$':
			if i+1 < len(s) && s[i+1] == '{' {
				end := strings.IndexByte(s[i:], '}')
				if end < 0 {
					return "", errors.New("named capturing group is missing trailing '}'")
				}
				if name := s[i+2 : i+end]; re.SubexpIndex(name) < 0 {
					return "", fmt.Errorf("no group with name {%s}", name)
				}
				b.WriteString(s[i : i+end+1])
				i += end
				continue
			}
			if i+1 == len(s) || s[i+1] < '0' || s[i+1] > '9' {
				return "", errors.New("illegal group reference")
			}
			n := int(s[i+1] - '0')
			if n > groups {
				b.WriteString("$$")
				continue
			}
			j := i + 2
			for ; j < len(s) && s[j] >= '0' && s[j] <= '9'; j++ {
				next := n*10 + int(s[j]-'0')
				if next > groups {
					break
				}
				n = next
			}
			fmt.Fprintf(&b, "${%d}", n)
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// name maps dn by the first rule that applies.
func (m *tlsPrincipalMapper) name(dn string) (string, error) {
	for _, r := range m.rules {
		if r.isDefault {
			return dn, nil
		}
		if !r.match.MatchString(dn) {
			continue
		}
		out := r.re.ReplaceAllString(dn, r.repl)
		switch {
		case r.lower:
			out = strings.ToLower(out)
		case r.upper:
			out = strings.ToUpper(out)
		}
		return out, nil
	}
	texts := make([]string, len(m.rules))
	for i, r := range m.rules {
		texts[i] = r.text
	}
	return "", fmt.Errorf("no rules apply to %s, rules [%s]", dn, strings.Join(texts, ", "))
}

// principal is the kfake TLSPrincipal function: the mapped name of the
// verified client certificate's subject, "" (ANONYMOUS) without one.
func (m *tlsPrincipalMapper) principal(cs tls.ConnectionState) (string, error) {
	if len(cs.PeerCertificates) == 0 {
		return "", nil
	}
	dn, err := rfc2253(cs.PeerCertificates[0].RawSubject)
	if err != nil {
		return "", fmt.Errorf("client certificate subject: %w", err)
	}
	return m.name(dn)
}

// rawATV and rawRDN decode a Name keeping each value's DER, as Java does.
type rawATV struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

type rawRDNSET []rawATV

// rfc2253Keywords are the attribute keywords Java's X500Principal writes in
// RFC 2253 form (AVAKeyword's rfc2253 compliant ones); others are OIDs.
var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

// rfc2253 formats a DER Name as X500Principal.getName() (RFC2253).
func rfc2253(raw []byte) (string, error) {
	var rdns []rawRDNSET
	rest, err := asn1.Unmarshal(raw, &rdns)
	if err != nil {
		return "", err
	}
	if len(rest) > 0 {
		return "", errors.New("trailing data after the name")
	}
	parts := make([]string, 0, len(rdns))
	for i := len(rdns) - 1; i >= 0; i-- {
		avas := make([]string, len(rdns[i]))
		for j, a := range rdns[i] {
			avas[j] = rfc2253AVA(a)
		}
		parts = append(parts, strings.Join(avas, "+"))
	}
	return strings.Join(parts, ","), nil
}

// derStringTags are the string types Java writes as text (DerValue
// isDerString: UTF8String, PrintableString, T61String, IA5String,
// GeneralString, BMPString).
var derStringTags = map[int]bool{12: true, 19: true, 20: true, 22: true, 27: true, 30: true}

func rfc2253AVA(a rawATV) string {
	kw, ok := rfc2253Keywords[a.Type.String()]
	if !ok || a.Value.Class != asn1.ClassUniversal || !derStringTags[a.Value.Tag] {
		if !ok {
			kw = a.Type.String()
		}
		return kw + "=#" + hex.EncodeToString(a.Value.FullBytes)
	}
	val := decodeDERString(a.Value)
	var b strings.Builder
	for _, c := range val {
		switch {
		case strings.ContainsRune(",=+<>#;\"\\", c):
			b.WriteByte('\\')
			b.WriteRune(c)
		case c == 0:
			b.WriteString(`\00`)
		default:
			b.WriteRune(c)
		}
	}
	// Leading and trailing spaces (and carriage returns) are escaped.
	s := []rune(b.String())
	lead, trail := 0, len(s)-1
	for lead < len(s) && (s[lead] == ' ' || s[lead] == '\r') {
		lead++
	}
	for trail >= 0 && (s[trail] == ' ' || s[trail] == '\r') {
		trail--
	}
	var out strings.Builder
	out.WriteString(kw)
	out.WriteByte('=')
	for i, c := range s {
		if i < lead || i > trail {
			out.WriteByte('\\')
		}
		out.WriteRune(c)
	}
	return out.String()
}

// decodeDERString is Java's new String(value.getDataBytes(), UTF_8) for
// every text type (a BMPString too: its UTF-16 bytes read as UTF-8, as
// Java's AVA does): each maximal ill-formed subpart becomes one U+FFFD.
func decodeDERString(v asn1.RawValue) string {
	b := v.Bytes
	if utf8.Valid(b) {
		return string(b)
	}
	var out strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r != utf8.RuneError || n > 1 {
			out.WriteRune(r)
			b = b[n:]
			continue
		}
		out.WriteRune(utf8.RuneError)
		b = b[illFormedSubpart(b):]
	}
	return out.String()
}

// illFormedSubpart is the length of the maximal subpart of an ill-formed
// UTF-8 sequence at the start of b (Unicode's recommended replacement, as
// Java's decoder does): a lead byte and the continuation bytes that could
// still begin a valid sequence, at least 1.
func illFormedSubpart(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 2
	case c >= 0xE0 && c <= 0xEF:
		need = 3
		if c == 0xE0 {
			lo = 0xA0
		} else if c == 0xED {
			hi = 0x9F
		}
	case c >= 0xF0 && c <= 0xF4:
		need = 4
		if c == 0xF0 {
			lo = 0x90
		} else if c == 0xF4 {
			hi = 0x8F
		}
	default:
		return 1
	}
	n := 1
	for n < need && n < len(b) && b[n] >= lo && b[n] <= hi {
		n++
		lo, hi = 0x80, 0xBF
	}
	return n
}
