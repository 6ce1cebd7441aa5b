package mysql

import "time"

// parseDateTime parses "YYYY-MM-DD hh:mm:ss[.f…]" (1 to 9 fraction digits)
// in UTC, as time.Parse("2006-01-02 15:04:05.999999999", s) does, without
// its layout walk: go-mysql renders every DATETIME and TIMESTAMP of a row
// event in this form (bench/mysql: time.Parse was 2.5% of the worker's CPU
// for one DATETIME(6) column). Anything else, out-of-range fields and zero
// dates included, goes to time.Parse, so results and errors stay its own.
func parseDateTime(s string) (time.Time, error) {
	const layout = "2006-01-02 15:04:05.999999999"
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':' {
		return time.Parse(layout, s)
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	min, ok5 := digits(s[14:16])
	sec, ok6 := digits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 ||
		day > daysIn(time.Month(month), year) || hour > 23 || min > 59 || sec > 59 {
		return time.Parse(layout, s)
	}
	nsec := 0
	if len(s) > 19 {
		frac := s[20:]
		if s[19] != '.' || len(frac) == 0 || len(frac) > 9 {
			return time.Parse(layout, s)
		}
		n, ok := digits(frac)
		if !ok {
			return time.Parse(layout, s)
		}
		for i := len(frac); i < 9; i++ {
			n *= 10
		}
		nsec = n
	}
	return time.Date(year, time.Month(month), day, hour, min, sec, nsec, time.UTC), nil
}

// digits returns the decimal value of s, which must be ASCII digits only.
func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// daysIn is the number of days of month m in year y (proleptic Gregorian).
func daysIn(m time.Month, y int) int {
	switch m {
	case time.February:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}
