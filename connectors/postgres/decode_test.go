package postgres

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/relational"
	"github.com/jackc/pglogrepl"
)

// pgoutput v1 message builders (test only).
func msgRelation(id uint32, ns, name string, cols ...string) []byte {
	b := []byte{'R'}
	b = binary.BigEndian.AppendUint32(b, id)
	b = append(append(b, ns...), 0)
	b = append(append(b, name...), 0)
	b = append(b, 'd')
	b = binary.BigEndian.AppendUint16(b, uint16(len(cols)))
	for i, c := range cols {
		flag := byte(0)
		if i == 0 {
			flag = 1
		}
		b = append(b, flag)
		b = append(append(b, c...), 0)
		b = binary.BigEndian.AppendUint32(b, oidInt4)
		b = binary.BigEndian.AppendUint32(b, 0xffffffff)
	}
	return b
}

func msgBegin(final uint64, xid uint32) []byte {
	b := []byte{'B'}
	b = binary.BigEndian.AppendUint64(b, final)
	b = binary.BigEndian.AppendUint64(b, 0)
	return binary.BigEndian.AppendUint32(b, xid)
}

func tuple(vals ...*string) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(len(vals)))
	for _, v := range vals {
		if v == nil {
			b = append(b, 'n')
			continue
		}
		b = append(b, 't')
		b = binary.BigEndian.AppendUint32(b, uint32(len(*v)))
		b = append(b, *v...)
	}
	return b
}

func sp(s string) *string { return &s }

func TestWALDecoderInsertDeleteCommit(t *testing.T) {
	d := newWALDecoder()
	if _, err := d.decode(1, msgRelation(7, "public", "item", "id", "qty")); err != nil {
		t.Fatal(err)
	}
	if it, err := d.decode(90, msgBegin(200, 42)); err != nil || it.kind != itemBegin || it.xid != 42 || it.finalLSN != 200 {
		t.Fatalf("begin = %+v, %v", it, err)
	}
	ins := append(binary.BigEndian.AppendUint32([]byte{'I'}, 7), 'N')
	ins = append(ins, tuple(sp("1"), nil)...)
	it, err := d.decode(100, ins)
	if err != nil || it.kind != itemChange || it.op != "c" || it.messageType != msgInsert || it.lsn != 100 || it.xid != 42 {
		t.Fatalf("insert = %+v, %v", it, err)
	}
	if it.after[0].text != "1" || !it.after[1].null || it.before != nil {
		t.Fatalf("insert cells = %+v", it.after)
	}
	del := append(binary.BigEndian.AppendUint32([]byte{'D'}, 7), 'K')
	del = append(del, tuple(sp("1"), nil)...)
	if it, err = d.decode(110, del); err != nil || it.op != "d" || it.before[0].text != "1" || it.after != nil {
		t.Fatalf("delete = %+v, %v", it, err)
	}
	// unknown relation and truncated input are errors, not panics
	if _, err := d.decode(120, binary.BigEndian.AppendUint32([]byte{'I'}, 8)); err == nil {
		t.Fatal("unknown relation accepted")
	}
	if _, err := d.decode(120, []byte{'I', 0}); err == nil {
		t.Fatal("truncated insert accepted")
	}
}

func TestResumeFilter(t *testing.T) {
	f := newResumeFilter(&offset{lsnCommit: i64(100), txID: i64(9), lsnProc: i64(150), lsn: i64(150)})
	if !f.skipTx(90) || f.skipTx(100) || f.skipTx(300) {
		t.Fatal("skipTx")
	}
	if !f.skipChange(9, 150) || f.skipChange(9, 151) || f.skipChange(10, 120) {
		t.Fatal("skipChange")
	}
	if (newResumeFilter(&offset{lsn: i64(5), snapshot: "INITIAL"}) != resumeFilter{}) {
		t.Fatal("snapshot offset must not filter")
	}
}

func TestTextConversions(t *testing.T) {
	col := func(oid uint32, mod int32) colType {
		return mapColumn(relational.Column{Name: "c", TypeOID: oid, TypeMod: mod, Optional: true})
	}
	cases := []struct {
		ct   colType
		in   string
		want any
	}{
		{col(oidInt2, -1), "-32768", int16(-32768)},
		{col(oidDate, -1), "1969-12-31", int32(-1)},
		{col(oidTimestamp, -1), "1969-12-31 23:59:59.999999", int64(-1)},
		{col(oidTimestamp, 3), "1970-01-01 00:00:01.5", int64(1500)},
		{col(oidTimestamptz, -1), "2024-02-29 13:14:15.654321+05:30", "2024-02-29T07:44:15.654321Z"},
		{col(oidTimestamptz, -1), "2000-01-01 00:00:00-08", "2000-01-01T08:00:00.000000Z"},
		{col(oidTimestamptz, 0), "2000-01-01 00:00:00+00", "2000-01-01T00:00:00Z"},
		{col(oidBool, -1), "t", true},
		{col(oidFloat4, -1), "-0.25", float32(-0.25)},
	}
	for _, c := range cases {
		got, err := c.ct.fromText(c.in)
		if err != nil || got != c.want {
			t.Errorf("%q: got %#v, %v; want %#v", c.in, got, err, c.want)
		}
	}
	d, err := col(oidNumeric, (10<<16|3)+4).fromText("-0.001")
	if err != nil || string(d.(connect.Decimal).TwosComplement()) != "\xff" {
		t.Errorf("numeric -0.001 = %v %v", d, err)
	}
	if got := sequence(nil, i64(5)); got != `[null,"5"]` {
		t.Errorf("sequence = %s", got)
	}
	if got := formatZonedTimestamp(0, 6); got != "1970-01-01T00:00:00.000000Z" {
		t.Errorf("zoned = %s", got)
	}
}

func FuzzWALDecoder(f *testing.F) {
	f.Add(msgRelation(7, "public", "item", "id", "qty"))
	f.Add(msgBegin(1, 2))
	f.Add(append(append(binary.BigEndian.AppendUint32([]byte{'I'}, 7), 'N'), tuple(sp("1"), nil)...))
	f.Add([]byte{'C', 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		d := newWALDecoder()
		d.decode(1, msgRelation(7, "public", "item", "id", "qty"))
		d.decode(2, msgBegin(10, 3))
		d.decode(3, data) // must not panic
	})
}

// TestInsertCellsMatchPglogrepl: the Insert fast path (rawTupleCells, which
// reads the message bytes itself) gives the cells and errors that
// pglogrepl.Parse + tupleCells give for the same message — text, null,
// unchanged TOAST ('u'), empty text, binary ('b', rejected) and a column
// count that does not match the relation.
func TestInsertCellsMatchPglogrepl(t *testing.T) {
	col := func(kind byte, v string) []byte {
		b := []byte{kind}
		if kind == 't' || kind == 'b' {
			b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
			b = append(b, v...)
		}
		return b
	}
	tup := func(cols ...[]byte) []byte {
		b := binary.BigEndian.AppendUint16(nil, uint16(len(cols)))
		for _, c := range cols {
			b = append(b, c...)
		}
		return b
	}
	cases := map[string][]byte{
		"text":      tup(col('t', "17"), col('t', "héllo, \"x\"")),
		"null":      tup(col('t', "1"), col('n', "")),
		"unchanged": tup(col('u', ""), col('t', "")),
		"binary":    tup(col('t', "1"), col('b', "\x00\x01")),
		"count":     tup(col('t', "1")),
	}
	for name, tb := range cases {
		d := newWALDecoder()
		rel := msgRelation(7, "public", "item", "id", "qty")
		if _, err := d.decode(1, rel); err != nil {
			t.Fatal(err)
		}
		if _, err := d.decode(2, msgBegin(10, 3)); err != nil {
			t.Fatal(err)
		}
		ins := append(append(binary.BigEndian.AppendUint32([]byte{'I'}, 7), 'N'), tb...)
		it, gotErr := d.decode(3, ins)
		msg, err := pglogrepl.Parse(ins)
		if err != nil {
			t.Fatalf("%s: pglogrepl: %v", name, err)
		}
		want, wantErr := tupleCells(d.relations[7], msg.(*pglogrepl.InsertMessage).Tuple)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("%s: error %v, pglogrepl path %v", name, gotErr, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(it.after, want) {
			t.Fatalf("%s: cells %+v, pglogrepl path %+v", name, it.after, want)
		}
		if name == "text" && (it.after[1].text != "héllo, \"x\"" || it.op != "c" || it.xid != 3) {
			t.Fatalf("text: %+v", it)
		}
	}
}
