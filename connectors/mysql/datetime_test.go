package mysql

import (
	"testing"
	"time"
)

// TestParseDateTimeMatchesTimeParse: parseDateTime is a fast path of
// time.Parse("2006-01-02 15:04:05.999999999", s); for every input, valid or
// not, it must give time.Parse's instant, or an error when time.Parse does.
func TestParseDateTimeMatchesTimeParse(t *testing.T) {
	inputs := []string{
		"2024-01-01 00:00:00", "2024-01-01 00:00:00.5", "2024-01-01 00:00:00.123456",
		"2024-12-31 23:59:59.999999999", "1970-01-01 00:00:00.000001", "0001-01-01 00:00:00",
		"9999-12-31 23:59:59.999999", "0000-01-01 00:00:00", "2000-02-29 12:00:00", "1900-02-29 12:00:00",
		"2023-02-29 12:00:00", "2024-02-29 01:02:03.04", "2024-04-31 00:00:00", "2024-06-30 10:20:30",
		"0000-00-00 00:00:00", "0000-00-00 00:00:00.000000", "2024-00-10 00:00:00", "2024-13-01 00:00:00",
		"2024-01-00 00:00:00", "2024-01-32 00:00:00", "2024-01-01 24:00:00", "2024-01-01 23:60:00",
		"2024-01-01 23:59:60", "2024-01-01 00:00:00.", "2024-01-01 00:00:00.1234567890", "2024-01-01 00:00:00x",
		"2024-01-01T00:00:00", "2024-1-01 00:00:00", "2024-01-01", "", "abcd-ef-gh ij:kl:mn", "+024-01-01 00:00:00",
		"2024-01-01 00:00:00.12a", "2024-01-01 00:00:00 ",
	}
	for _, s := range inputs {
		want, wantErr := time.Parse("2006-01-02 15:04:05.999999999", s)
		got, err := parseDateTime(s)
		if (err != nil) != (wantErr != nil) {
			t.Errorf("%q: error %v, time.Parse error %v", s, err, wantErr)
			continue
		}
		if err == nil && (!got.Equal(want) || got.Location() != want.Location()) {
			t.Errorf("%q: %v, time.Parse gives %v", s, got, want)
		}
	}
}

// BenchmarkParseDateTime compares the fast path with time.Parse on a
// DATETIME(6) as go-mysql renders it.
func BenchmarkParseDateTime(b *testing.B) {
	const s = "2024-05-17 13:45:12.123456"
	b.Run("parseDateTime", func(b *testing.B) {
		for b.Loop() {
			if _, err := parseDateTime(s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("time.Parse", func(b *testing.B) {
		for b.Loop() {
			if _, err := time.Parse("2006-01-02 15:04:05.999999999", s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
