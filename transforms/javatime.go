package transforms

import (
	"strings"
	"time"
)

// javaLayout translates a java.text.SimpleDateFormat pattern into a Go time
// layout: y, M, d, H, h, m, s, S (milliseconds), a, E, z/Z/X and quoted
// literals. Letters Go cannot express are copied literally.
func javaLayout(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); {
		c := p[i]
		if c == '\'' {
			j := strings.IndexByte(p[i+1:], '\'')
			if j < 0 {
				b.WriteString(p[i+1:])
				break
			}
			if j == 0 {
				b.WriteByte('\'')
			} else {
				b.WriteString(p[i+1 : i+1+j])
			}
			i += j + 2
			continue
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b.WriteByte(c)
			i++
			continue
		}
		n := 1
		for i+n < len(p) && p[i+n] == c {
			n++
		}
		switch c {
		case 'y':
			if n == 2 {
				b.WriteString("06")
			} else {
				b.WriteString("2006")
			}
		case 'M':
			switch {
			case n >= 4:
				b.WriteString("January")
			case n == 3:
				b.WriteString("Jan")
			case n == 2:
				b.WriteString("01")
			default:
				b.WriteString("1")
			}
		case 'd':
			if n >= 2 {
				b.WriteString("02")
			} else {
				b.WriteString("2")
			}
		case 'H':
			b.WriteString("15")
		case 'h':
			if n >= 2 {
				b.WriteString("03")
			} else {
				b.WriteString("3")
			}
		case 'm':
			if n >= 2 {
				b.WriteString("04")
			} else {
				b.WriteString("4")
			}
		case 's':
			if n >= 2 {
				b.WriteString("05")
			} else {
				b.WriteString("5")
			}
		case 'S':
			b.WriteString(strings.Repeat("0", n))
		case 'a':
			b.WriteString("PM")
		case 'E':
			if n >= 4 {
				b.WriteString("Monday")
			} else {
				b.WriteString("Mon")
			}
		case 'Z':
			b.WriteString("-0700")
		case 'X':
			switch n {
			case 1:
				b.WriteString("Z07")
			case 2:
				b.WriteString("Z0700")
			default:
				b.WriteString("Z07:00")
			}
		case 'z':
			b.WriteString("MST")
		default:
			b.WriteString(p[i : i+n])
		}
		i += n
	}
	return b.String()
}

// formatJava formats t in UTC (Kafka's SMTs set the UTC time zone on
// their SimpleDateFormat) with a SimpleDateFormat pattern. Milliseconds
// ("SSS") need a '.' or ',' before them, as Go's layouts do.
func formatJava(t time.Time, pattern string) string {
	return t.UTC().Format(javaLayout(pattern))
}

// parseJava parses s with a SimpleDateFormat pattern, in UTC.
func parseJava(s, pattern string) (time.Time, error) {
	return time.ParseInLocation(javaLayout(pattern), s, time.UTC)
}
