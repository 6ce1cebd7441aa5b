package mysql

import (
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
)

// serverCharsets are the single-byte character sets a column's text may be
// stored in, by MySQL/MariaDB name. MySQL's latin1 is Windows-1252.
// UTF-8 sets (utf8, utf8mb3, utf8mb4), ascii and binary need no decoding.
var serverCharsets = map[string]encoding.Encoding{
	"latin1": charmap.Windows1252, "latin2": charmap.ISO8859_2, "latin5": charmap.ISO8859_9, "latin7": charmap.ISO8859_13,
	"cp1250": charmap.Windows1250, "cp1251": charmap.Windows1251, "cp1256": charmap.Windows1256, "cp1257": charmap.Windows1257,
	"cp850": charmap.CodePage850, "cp852": charmap.CodePage852, "cp866": charmap.CodePage866,
	"greek": charmap.ISO8859_7, "hebrew": charmap.ISO8859_8, "koi8r": charmap.KOI8R, "koi8u": charmap.KOI8U,
	"macroman": charmap.Macintosh,
}

// decodeCharset returns the text of a row event's string value stored in
// charset cs: the binlog carries the column's bytes as stored, while the
// snapshot's connection (utf8mb4) has the server convert them; Debezium
// decodes binlog strings with the column's character set the same way.
func decodeCharset(cs string, b []byte) (string, error) {
	enc := serverCharsets[strings.ToLower(cs)]
	if enc == nil || isASCII(b) {
		return string(b), nil
	}
	out, err := enc.NewDecoder().Bytes(b)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
