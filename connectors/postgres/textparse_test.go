package postgres

import (
	"reflect"
	"testing"
	"time"
)

func TestCivilDaysMatchGoCalendar(t *testing.T) {
	for d := int64(-800_000); d <= 3_000_000; d += 97 {
		y, m, dd := civilFromDays(d)
		if got := daysFromCivil(y, m, dd); got != d {
			t.Fatalf("round trip of day %d: %d-%d-%d → %d", d, y, m, dd, got)
		}
		want := time.Unix(d*86400, 0).UTC()
		if int(y) != want.Year() || m != int(want.Month()) || dd != want.Day() {
			t.Fatalf("day %d = %d-%d-%d, Go says %s", d, y, m, dd, want)
		}
	}
}

func TestTemporalText(t *testing.T) {
	us, sp, err := parseTimestampUs("0100-06-15 12:00:00+00 BC", true)
	if err != nil || sp != 0 || formatZonedTimestamp(us, 6) != "-0099-06-15T12:00:00.000000Z" {
		t.Errorf("BC timestamptz: %d %v %s", us, err, formatZonedTimestamp(us, 6))
	}
	us, _, _ = parseTimestampUs("99999-12-31 23:59:59.999999+00", true)
	if got := formatZonedTimestamp(us, 6); got != "+99999-12-31T23:59:59.999999Z" {
		t.Errorf("year 99999: %s", got)
	}
	if got, _ := parseZonedTime("23:59:59.999-12:45"); got != "12:44:59.999Z" {
		t.Errorf("timetz: %v", got)
	}
	if got := formatIsoTime(usPerDay); got != "00:00:00Z" {
		t.Errorf("24:00 = %s", got)
	}
	if _, sp, _ := parseTimestampUs("-infinity", false); sp != -1 {
		t.Errorf("-infinity: %d", sp)
	}
}

func TestCompositeText(t *testing.T) {
	a, err := parseArray(`{"a","b c","d,e","\"q\"",NULL,"NULL"}`, textValue)
	if want := []any{"a", "b c", "d,e", `"q"`, nil, "NULL"}; err != nil || !reflect.DeepEqual(a, want) {
		t.Errorf("array = %#v %v", a, err)
	}
	if a, err := parseArray(`[0:1]={1,2}`, parseInt32); err != nil || !reflect.DeepEqual(a, []any{int32(1), int32(2)}) {
		t.Errorf("bounded array = %#v %v", a, err)
	}
	if _, err := parseArray(`{{1,2},{3,4}}`, parseInt32); err == nil {
		t.Error("multi-dimensional array accepted")
	}
	h, err := parseHstoreJSON(`"a"=>"1", "b"=>NULL, "z"=>"", "c d"=>"x\"y"`)
	if err != nil || h != `{"a":"1","b":null,"c d":"x\"y","z":""}` {
		t.Errorf("hstore = %v %v", h, err)
	}
	for in, want := range map[string]string{
		"1 year 2 mons 3 days 04:05:06.789": "P1Y2M3DT4H5M6.789S",
		"-1 days -02:00:00.5":               "P0Y0M-1DT-2H0M-0.5S",
		"00:00:00":                          "P0Y0M0DT0H0M0S",
		"100:30:00":                         "P0Y0M0DT100H30M0S",
	} {
		if got, err := parseIntervalISO(in); err != nil || got != want {
			t.Errorf("interval %q = %v %v, want %s", in, got, err, want)
		}
	}
	if got, _ := parseIntervalMicros("1 mon"); got != int64(2_629_800_000_000) {
		t.Errorf("1 mon = %v µs", got)
	}
	if b, _ := parseBits("101000110001"); !reflect.DeepEqual(b, []byte{0x31, 0x0a}) {
		t.Errorf("bits = %x", b)
	}
	if got := moneyPlain("-$92,233,720,368,547,758.08"); got != "-92233720368547758.08" {
		t.Errorf("money = %s", got)
	}
}
