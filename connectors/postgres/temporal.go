package postgres

import (
	"fmt"
	"strconv"
	"strings"
)

// Date and time text as PostgreSQL writes it with DateStyle=ISO and
// TimeZone=UTC (the session settings of both connections, see connConfig),
// parsed without time.Parse: years may have more than four digits, BC dates
// carry a " BC" suffix, and the hot path must not allocate.

const (
	usPerSec = int64(1_000_000)
	usPerDay = 86_400 * usPerSec

	// Debezium's values for PostgreSQL's ±infinity, as captured from
	// Debezium 3.6.1 (testdata/debezium/pg_types_*.jsonl, table tm_inf).
	// Timestamps: PGStatement.DATE_POSITIVE_INFINITY / DATE_NEGATIVE_INFINITY
	// (milliseconds), scaled to the field's unit. Dates: the streaming value,
	// PostgreSQL's DATEVAL_NOEND / DATEVAL_NOBEGIN shifted from the 2000-01-01
	// epoch to 1970-01-01 in 32-bit arithmetic.
	infTimestampMs    = int64(9223372036825200000) / 1000
	negInfTimestampMs = int64(-9223372036832400000) / 1000
	infDateDays       = int32(-2147472692)
	negInfDateDays    = int32(-2147472691)
)

// daysFromCivil returns days since 1970-01-01 of a proleptic Gregorian date
// (astronomical year: 1 BC is year 0). Howard Hinnant's algorithm.
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := int64((153*mp+2)/5 + d - 1)
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y int64, m, d int) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	m = int(mp + 3)
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// digits parses s[i:] while it holds ASCII digits; it returns the value,
// the number of digits and the next index.
func digits(s string, i int) (v int64, n int, next int) {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		v = v*10 + int64(s[i]-'0')
		i++
		n++
	}
	return v, n, i
}

// parseDateText parses "YYYY-MM-DD" (more year digits allowed) at the start
// of s; it returns days since the epoch, the rest of s, and whether the
// value is BC-adjusted by the caller (the " BC" suffix is at the very end).
func parseDatePart(s string) (days int64, rest string, err error) {
	y, n, i := digits(s, 0)
	if n < 4 || i >= len(s) || s[i] != '-' {
		return 0, "", fmt.Errorf("invalid date %q", s)
	}
	mo, n2, j := digits(s, i+1)
	if n2 != 2 || j >= len(s) || s[j] != '-' {
		return 0, "", fmt.Errorf("invalid date %q", s)
	}
	d, n3, k := digits(s, j+1)
	if n3 != 2 {
		return 0, "", fmt.Errorf("invalid date %q", s)
	}
	bc := strings.HasSuffix(s, " BC")
	if bc {
		y = 1 - y // year N BC is astronomical year 1-N
	}
	return daysFromCivil(y, int(mo), int(d)), s[k:], nil
}

// parseTimePart parses "HH:MM:SS[.ffffff]" at the start of s and returns
// microseconds since midnight (24:00:00 gives a full day) and the rest.
func parseTimePart(s string) (us int64, rest string, err error) {
	h, n1, i := digits(s, 0)
	if n1 != 2 || i >= len(s) || s[i] != ':' {
		return 0, "", fmt.Errorf("invalid time %q", s)
	}
	m, n2, j := digits(s, i+1)
	if n2 != 2 || j >= len(s) || s[j] != ':' {
		return 0, "", fmt.Errorf("invalid time %q", s)
	}
	sec, n3, k := digits(s, j+1)
	if n3 != 2 {
		return 0, "", fmt.Errorf("invalid time %q", s)
	}
	us = ((h*60+m)*60 + sec) * usPerSec
	if k < len(s) && s[k] == '.' {
		f, nf, e := digits(s, k+1)
		for ; nf < 6; nf++ {
			f *= 10
		}
		for ; nf > 6; nf-- {
			f /= 10
		}
		us += f
		k = e
	}
	return us, s[k:], nil
}

// parseZone parses a UTC offset "+HH[:MM[:SS]]" at the start of s and
// returns it in seconds and the rest.
func parseZone(s string) (secs int64, rest string, err error) {
	if s == "" || (s[0] != '+' && s[0] != '-') {
		return 0, "", fmt.Errorf("missing UTC offset in %q", s)
	}
	neg := s[0] == '-'
	h, n, i := digits(s, 1)
	if n != 2 {
		return 0, "", fmt.Errorf("invalid UTC offset %q", s)
	}
	secs = h * 3600
	if i < len(s) && s[i] == ':' {
		m, _, j := digits(s, i+1)
		secs += m * 60
		i = j
		if i < len(s) && s[i] == ':' {
			sec, _, k := digits(s, i+1)
			secs += sec
			i = k
		}
	}
	if neg {
		secs = -secs
	}
	return secs, s[i:], nil
}

// specialTime reports PostgreSQL's 'infinity' (1) and '-infinity' (-1).
func specialTime(s string) int {
	switch s {
	case "infinity":
		return 1
	case "-infinity":
		return -1
	}
	return 0
}

// parseDateDays returns days since 1970-01-01 (io.debezium.time.Date).
func parseDateDays(s string) (int32, error) {
	switch specialTime(s) {
	case 1:
		return infDateDays, nil
	case -1:
		return negInfDateDays, nil
	}
	d, _, err := parseDatePart(s)
	return int32(d), err
}

// parseTimestampUs returns microseconds since the epoch of a timestamp
// without time zone read as UTC, or of a timestamptz (converted to UTC).
// special is ±1 for ±infinity (us is then 0).
func parseTimestampUs(s string, zoned bool) (us int64, special int, err error) {
	if sp := specialTime(s); sp != 0 {
		return 0, sp, nil
	}
	days, rest, err := parseDatePart(s)
	if err != nil {
		return 0, 0, err
	}
	if len(rest) == 0 || rest[0] != ' ' {
		return 0, 0, fmt.Errorf("invalid timestamp %q", s)
	}
	tod, rest, err := parseTimePart(rest[1:])
	if err != nil {
		return 0, 0, err
	}
	us = days*usPerDay + tod
	if zoned {
		off, _, err := parseZone(rest)
		if err != nil {
			return 0, 0, err
		}
		us -= off * usPerSec
	}
	return us, 0, nil
}

// parseTimetzUs returns the time of a timetz converted to UTC, in
// microseconds since midnight (wrapped into [0, 24h)).
func parseTimetzUs(s string) (int64, error) {
	tod, rest, err := parseTimePart(s)
	if err != nil {
		return 0, err
	}
	off, _, err := parseZone(rest)
	if err != nil {
		return 0, err
	}
	us := (tod - off*usPerSec) % usPerDay
	if us < 0 {
		us += usPerDay
	}
	return us, nil
}

// appendYear writes a year as java.time's ISO formatters do: four digits
// zero-padded, a leading '+' above 9999, '-' for negative years.
func appendYear(b []byte, y int64) []byte {
	if y < 0 {
		b = append(b, '-')
		y = -y
	} else if y > 9999 {
		b = append(b, '+')
	}
	s := strconv.FormatInt(y, 10)
	for i := len(s); i < 4; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

func append2(b []byte, v int) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }

func appendDate(b []byte, days int64) []byte {
	y, m, d := civilFromDays(days)
	b = appendYear(b, y)
	b = append(b, '-')
	b = append2(b, m)
	b = append(b, '-')
	return append2(b, d)
}

// appendClock writes HH:MM:SS and the fraction of micros (< 1 day): with
// fixed >= 0 exactly that many digits (ZonedTimestamp), with fixed < 0 as few
// as needed, none when zero (java.time's ISO_LOCAL_TIME), scaled to
// nanoseconds when nanos is set.
func appendClock(b []byte, us int64, fixed int) []byte {
	sec := us / usPerSec
	frac := us % usPerSec
	b = append2(b, int(sec/3600))
	b = append(b, ':')
	b = append2(b, int(sec/60%60))
	b = append(b, ':')
	b = append2(b, int(sec%60))
	var fd [6]byte
	for i := 5; i >= 0; i-- {
		fd[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := fixed
	if fixed < 0 {
		n = 6
		for n > 0 && fd[n-1] == '0' {
			n--
		}
	}
	if n > 0 {
		b = append(b, '.')
		b = append(b, fd[:n]...)
	}
	return b
}

// splitUs splits microseconds since the epoch into days and time of day.
func splitUs(us int64) (days, tod int64) {
	days = us / usPerDay
	tod = us % usPerDay
	if tod < 0 {
		tod += usPerDay
		days--
	}
	return days, tod
}

// formatZonedTimestamp formats io.debezium.time.ZonedTimestamp: UTC, 'Z',
// exactly digits fraction digits (the column precision).
func formatZonedTimestamp(us int64, digits int) string {
	days, tod := splitUs(us)
	b := make([]byte, 0, 32)
	b = appendDate(b, days)
	b = append(b, 'T')
	b = appendClock(b, tod, digits)
	return string(append(b, 'Z'))
}

// formatIsoTimestamp formats io.debezium.time.IsoTimestamp (and the instant
// of ±infinity): UTC, 'Z', as few fraction digits as needed.
func formatIsoTimestamp(us int64) string {
	days, tod := splitUs(us)
	b := make([]byte, 0, 32)
	b = appendDate(b, days)
	b = append(b, 'T')
	b = appendClock(b, tod, -1)
	return string(append(b, 'Z'))
}

// formatIsoTime formats io.debezium.time.IsoTime / ZonedTime: HH:MM:SS,
// minimal fraction, 'Z'; 24:00:00 wraps to 00:00:00 as java.time.LocalTime.
func formatIsoTime(us int64) string {
	us %= usPerDay
	b := make([]byte, 0, 20)
	b = appendClock(b, us, -1)
	return string(append(b, 'Z'))
}

// formatIsoDate formats io.debezium.time.IsoDate: yyyy-MM-dd + 'Z'.
func formatIsoDate(days int64) string {
	b := make([]byte, 0, 16)
	b = appendDate(b, days)
	return string(append(b, 'Z'))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
