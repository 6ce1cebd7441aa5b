package columns

import (
	"regexp"
	"strings"
)

// CompileCI compiles a Java regular expression that Debezium compiles with
// Pattern.CASE_INSENSITIVE, anchored (whole identifier) when anchor is set.
// Java folds only US-ASCII letters under CASE_INSENSITIVE (without
// UNICODE_CASE): "ünïcode" does not match "Ünïcode". Go's (?i) folds every
// letter, so the pattern is rewritten instead: each ASCII letter outside a
// class becomes [xX], inside a class it gets its other case added (a range
// of letters its other-case range).
func CompileCI(pat string, anchor bool) (*regexp.Regexp, error) {
	p := FoldASCII(pat)
	if anchor {
		p = `^(?:` + p + `)$`
	}
	return regexp.Compile(p)
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func other(c byte) byte {
	if isUpper(c) {
		return c + 32
	}
	return c - 32
}

// FoldASCII rewrites pat so that it matches ASCII letters in either case
// (see CompileCI). Escapes are copied as they are (\p{…}, \x{…} whole).
func FoldASCII(pat string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch {
		case c == '\\' && i+1 < len(pat):
			j := i + 2
			if pat[i+1] == 'Q' { // literal up to \E, copied unfolded
				if k := strings.Index(pat[j:], `\E`); k >= 0 {
					j += k + 2
				} else {
					j = len(pat)
				}
			} else if n := pat[i+1]; (n == 'p' || n == 'P' || n == 'x') && j < len(pat) && pat[j] == '{' {
				if k := strings.IndexByte(pat[j:], '}'); k >= 0 {
					j += k + 1
				}
			}
			b.WriteString(pat[i:j])
			i = j - 1
		case inClass && c == '[' && i+1 < len(pat) && pat[i+1] == ':':
			k := strings.Index(pat[i:], ":]")
			if k < 0 {
				b.WriteByte(c)
				continue
			}
			b.WriteString(pat[i : i+k+2])
			i += k + 1
		case !inClass && c == '[':
			inClass = true
			b.WriteByte(c)
			if i+1 < len(pat) && pat[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(pat) && pat[i+1] == ']' {
				b.WriteByte(']')
				i++
			}
		case inClass && c == ']':
			inClass = false
			b.WriteByte(c)
		case inClass && (isUpper(c) || isLower(c)):
			if i+2 < len(pat) && pat[i+1] == '-' && (isUpper(pat[i+2]) && isUpper(c) || isLower(pat[i+2]) && isLower(c)) {
				b.WriteString(pat[i : i+3])
				b.WriteByte(other(c))
				b.WriteByte('-')
				b.WriteByte(other(pat[i+2]))
				i += 2
				continue
			}
			b.WriteByte(c)
			b.WriteByte(other(c))
		case !inClass && (isUpper(c) || isLower(c)):
			if i > 0 && pat[i-1] == '?' && i >= 2 && pat[i-2] == '(' {
				// a group flag "(?i)" / "(?:" / "(?P<": copy the group head
				k := strings.IndexAny(pat[i:], ":)>")
				if k >= 0 {
					b.WriteString(pat[i : i+k+1])
					i += k
					continue
				}
			}
			b.WriteByte('[')
			b.WriteByte(c)
			b.WriteByte(other(c))
			b.WriteByte(']')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
