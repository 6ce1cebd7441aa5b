package postgres

import (
	"testing"
)

// FuzzTextParse: the text forms pgoutput sends for arrays, hstore and
// interval values never panic their parsers, whatever the bytes.
func FuzzTextParse(f *testing.F) {
	for _, s := range []string{
		`{1,2,NULL,"a\"b",{3,4}}`, `{}`, `[1:2]={1,2}`, `"a"=>"b", "c"=>NULL`, `1 year 2 mons 3 days 04:05:06.789`,
		`-178956970 years -8 mons -2147483648 days -2562047788:00:54.775808`, `P1Y2M3DT4H5M6.789S`, `{"{\"x\"}",NULL}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parseArray(s, func(e string) (any, error) { return e, nil })
		parseVector(s, func(e string) (any, error) { return e, nil })
		parseHstore(s)
		parseHstoreMap(s)
		parseHstoreJSON(s)
		parseInterval(s)
		parseIntervalMicros(s)
		parseIntervalISO(s)
	})
}
