package offsets

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordBytesGolden: every offset Debezium 3.6.1 wrote in the captures
// of testdata/debezium (the offset files and each record's offset, written
// as Kafka Connect's OffsetStorageWriter serialises them, PostgreSQL and
// MariaDB) comes out of Record byte for byte: the keys in Java HashMap
// order.
func TestRecordBytesGolden(t *testing.T) {
	files, _ := filepath.Glob("../testdata/debezium/*offsets.jsonl")
	if len(files) == 0 {
		t.Fatal("no captures")
	}
	n, fails := 0, 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for line := 1; sc.Scan(); line++ {
			l := sc.Text()
			i := strings.Index(l, `,"value":`)
			if !strings.HasPrefix(l, `{"key":`) || i < 0 {
				continue
			}
			rawKey, rawVal := l[len(`{"key":`):i], l[i+len(`,"value":`):len(l)-1]
			var key []any
			var val map[string]any
			d := json.NewDecoder(strings.NewReader(rawKey))
			d.UseNumber()
			if d.Decode(&key) != nil || len(key) != 2 {
				continue
			}
			d = json.NewDecoder(strings.NewReader(rawVal))
			d.UseNumber()
			if err := d.Decode(&val); err != nil || val == nil {
				continue
			}
			name, _ := key[0].(string)
			part, _ := key[1].(map[string]any)
			k, v, err := Record(Entry{Connector: name, Partition: part, Offset: val})
			if err != nil {
				t.Fatal(err)
			}
			n++
			if !bytes.Equal(k, []byte(rawKey)) || !bytes.Equal(v, []byte(rawVal)) {
				if fails++; fails <= 5 {
					t.Errorf("%s:%d:\ngot:  %s %s\nwant: %s %s", filepath.Base(f), line, k, v, rawKey, rawVal)
				}
			}
		}
		fh.Close()
	}
	if fails > 0 {
		t.Errorf("%d of %d offsets differ", fails, n)
	}
	t.Logf("%d offsets compared", n)
}
