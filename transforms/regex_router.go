package transforms

import (
	"regexp"
	"strings"

	"github.com/connectd/connectd/connect"
)

// RegexRouter is org.apache.kafka.connect.transforms.RegexRouter: when the
// whole topic name matches regex (Java Matcher.matches), the topic becomes
// replacement with $n / ${name} group references expanded
// (Matcher.replaceFirst); otherwise the record is unchanged. Tombstones are
// routed like any record.
type RegexRouter struct {
	re          *regexp.Regexp
	replacement string
}

var _ connect.Transformation = (*RegexRouter)(nil)

// Config: regex and replacement, both required.
func (t *RegexRouter) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "regex", Type: connect.TypeString, Importance: connect.High,
			Doc: "Regular expression to use for matching.", Validator: regexValidator}).
		Define(connect.ConfigKey{Name: "replacement", Type: connect.TypeString, Importance: connect.High,
			Doc: "Replacement string."})
}

// regexValidator is Kafka's RegexValidator.
func regexValidator(v string) string {
	if _, err := compileJavaRegex(v); err != nil {
		return "Invalid regex: " + err.Error()
	}
	return ""
}

// compileJavaRegex compiles a java.util.regex pattern for a whole-string
// match. Go's RE2 syntax covers the patterns used for topic names; lookaround
// and backreferences are rejected with an error.
func compileJavaRegex(p string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + p + `)$`)
}

// Configure reads regex and replacement.
func (t *RegexRouter) Configure(props map[string]string) error {
	p, err := parse(t.Config(), props)
	if err != nil {
		return err
	}
	t.re, _ = compileJavaRegex(props["regex"])
	t.replacement = javaReplacement(p.String("replacement"))
	return nil
}

// javaReplacement turns a Java Matcher replacement string ($1, ${name}, \$)
// into a Go regexp template.
func javaReplacement(r string) string {
	var b strings.Builder
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == '\\' && i+1 < len(r):
			i++
			if r[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(r[i])
			}
		case c == '$' && i+1 < len(r) && r[i+1] == '{':
			end := strings.IndexByte(r[i:], '}')
			if end < 0 {
				b.WriteString("$$")
				continue
			}
			b.WriteString(r[i : i+end+1])
			i += end
		case c == '$':
			j := i + 1
			for j < len(r) && r[j] >= '0' && r[j] <= '9' {
				j++
			}
			if j == i+1 {
				b.WriteString("$$")
				continue
			}
			b.WriteString("${" + r[i+1:j] + "}")
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Apply reroutes r when its topic matches.
func (t *RegexRouter) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	m := t.re.FindStringSubmatchIndex(r.Topic)
	if m == nil {
		return r, nil
	}
	out := withRecord(r)
	out.Topic = string(t.re.ExpandString(nil, t.replacement, r.Topic, m))
	return out, nil
}

// Close does nothing.
func (t *RegexRouter) Close() {}
