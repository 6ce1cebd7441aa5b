package incsnap

import (
	"reflect"
	"testing"
)

// The expected hex strings were produced by OpenJDK 17's ObjectOutputStream
// writing the same Object[] (new ObjectOutputStream(bos).writeObject(array),
// hex as Debezium's HexConverter), i.e. exactly what Debezium 3.6's
// AbstractIncrementalSnapshotContext.arrayToSerializedString stores in
// incremental_snapshot_primary_key / incremental_snapshot_maximum_key.
var javaGolden = []struct {
	java string
	key  []any
	hex  string
}{
	{"{Integer.valueOf(10)}", []any{int32(10)},
		"aced0005757200135b4c6a6176612e6c616e672e4f626a6563743b90ce589f1073296c020000787000000001737200116a6176612e6c616e672e496e746567657212e2a0a4f781873802000149000576616c7565787200106a6176612e6c616e672e4e756d62657286ac951d0b94e08b02000078700000000a"},
	{"{Long.valueOf(20000L)}", []any{int64(20000)},
		"aced0005757200135b4c6a6176612e6c616e672e4f626a6563743b90ce589f1073296c0200007870000000017372000e6a6176612e6c616e672e4c6f6e673b8be490cc8f23df0200014a000576616c7565787200106a6176612e6c616e672e4e756d62657286ac951d0b94e08b02000078700000000000004e20"},
	{`{7, -3L, "héllo", (short)5, 8, null, Boolean.TRUE, (short)-1}`, []any{int32(7), int64(-3), "héllo", int16(5), int32(8), nil, true, int16(-1)},
		"aced0005757200135b4c6a6176612e6c616e672e4f626a6563743b90ce589f1073296c020000787000000008737200116a6176612e6c616e672e496e746567657212e2a0a4f781873802000149000576616c7565787200106a6176612e6c616e672e4e756d62657286ac951d0b94e08b0200007870000000077372000e6a6176612e6c616e672e4c6f6e673b8be490cc8f23df0200014a000576616c75657871007e0003fffffffffffffffd74000668c3a96c6c6f7372000f6a6176612e6c616e672e53686f7274684d37133460da5202000153000576616c75657871007e000300057371007e00020000000870737200116a6176612e6c616e672e426f6f6c65616ecd207280d59cfaee0200015a000576616c75657870017371007e0008ffff"},
	{`{"a\u0000b\uD83D\uDE00"} (modified UTF-8)`, []any{"a\x00b😀"},
		"aced0005757200135b4c6a6176612e6c616e672e4f626a6563743b90ce589f1073296c02000078700000000174000a61c08062eda0bdedb880"},
	{"{7, 7, 1000L, 1000L, TRUE, TRUE} (valueOf caches shared instances)", []any{int32(7), int32(7), int64(1000), int64(1000), true, true},
		"aced0005757200135b4c6a6176612e6c616e672e4f626a6563743b90ce589f1073296c020000787000000006737200116a6176612e6c616e672e496e746567657212e2a0a4f781873802000149000576616c7565787200106a6176612e6c616e672e4e756d62657286ac951d0b94e08b02000078700000000771007e00047372000e6a6176612e6c616e672e4c6f6e673b8be490cc8f23df0200014a000576616c75657871007e000300000000000003e87371007e000500000000000003e8737200116a6176612e6c616e672e426f6f6c65616ecd207280d59cfaee0200015a000576616c756578700171007e0009"},
}

func TestEncodeKeyMatchesJava(t *testing.T) {
	for _, g := range javaGolden {
		got, err := EncodeKey(g.key)
		if err != nil {
			t.Fatalf("%s: %v", g.java, err)
		}
		if got != g.hex {
			t.Errorf("%s:\n got %s\nwant %s", g.java, got, g.hex)
		}
		back, err := DecodeKey(g.hex)
		if err != nil {
			t.Fatalf("%s: decode: %v", g.java, err)
		}
		if !reflect.DeepEqual(back, g.key) {
			t.Errorf("%s: decoded %#v, want %#v", g.java, back, g.key)
		}
	}
}

func TestDecodeKeyUUID(t *testing.T) {
	// new Object[]{UUID.fromString("123e4567-e89b-12d3-a456-426614174000")} from OpenJDK 17
	const h = "aced0005757200135b4c6a6176612e6c616e672e4f626a6563743b90ce589f1073296c0200007870000000017372000e6a6176612e7574696c2e55554944bc9903f7986d852f0200024a000c6c65617374536967426974734a000b6d6f7374536967426974737870a456426614174000123e4567e89b12d3"
	got, err := DecodeKey(h)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []any{"123e4567-e89b-12d3-a456-426614174000"}) {
		t.Fatalf("got %#v", got)
	}
}

func TestDecodeKeyRejectsGarbage(t *testing.T) {
	for _, s := range []string{"", "zz", "aced0005", "aced000575", javaGolden[0].hex[:len(javaGolden[0].hex)-4]} {
		if _, err := DecodeKey(s); err == nil {
			t.Errorf("DecodeKey(%q) succeeded", s)
		}
	}
	if _, err := EncodeKey([]any{3.5}); err == nil {
		t.Error("EncodeKey(float64) succeeded")
	}
}
