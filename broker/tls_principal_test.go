package broker

import (
	"bytes"
	"encoding/asn1"
	"encoding/hex"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

// principalRef runs testdata/PrincipalRef.java (Java's X500Principal and
// Kafka 4.3's SslPrincipalMapper, from scripts/kafka.sh's jars) on the
// request lines and returns its answer lines.
func principalRef(t *testing.T, requests []string) []string {
	t.Helper()
	out, err := exec.Command("bash", "../scripts/kafka.sh").Output()
	if err != nil {
		t.Fatalf("scripts/kafka.sh (run `make setup`): %v", err)
	}
	cp := filepath.Join(strings.TrimSpace(string(out)), "*")
	cmd := exec.Command("java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", cp, "testdata/PrincipalRef.java")
	cmd.Stdin = strings.NewReader(strings.Join(requests, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("PrincipalRef.java: %v\n%s", err, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("PrincipalRef.java: no exit in 2 minutes")
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != len(requests) {
		t.Fatalf("PrincipalRef.java answered %d lines to %d requests:\n%s", len(lines), len(requests), stdout.String())
	}
	return lines
}

// genAttr is an attribute type of the generated names, with the string
// types it is written in.
type genAttr struct {
	oid  asn1.ObjectIdentifier
	tags []int
}

var genAttrs = []genAttr{
	{asn1.ObjectIdentifier{2, 5, 4, 3}, []int{12, 19, 20, 30}},           // CN
	{asn1.ObjectIdentifier{2, 5, 4, 6}, []int{19}},                       // C
	{asn1.ObjectIdentifier{2, 5, 4, 7}, []int{12, 19}},                   // L
	{asn1.ObjectIdentifier{2, 5, 4, 8}, []int{12}},                       // ST
	{asn1.ObjectIdentifier{2, 5, 4, 10}, []int{12, 19, 22}},              // O
	{asn1.ObjectIdentifier{2, 5, 4, 11}, []int{12, 19}},                  // OU
	{asn1.ObjectIdentifier{2, 5, 4, 9}, []int{12}},                       // STREET
	{asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}, []int{22}}, // DC
	{asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}, []int{12}},  // UID
	{asn1.ObjectIdentifier{2, 5, 4, 5}, []int{19}},                       // serialNumber
	{asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}, []int{22}},       // emailAddress
	{asn1.ObjectIdentifier{2, 5, 4, 12}, []int{12}},                      // title
	{asn1.ObjectIdentifier{2, 5, 4, 17}, []int{12}},                      // postalCode
	{asn1.ObjectIdentifier{2, 5, 4, 42}, []int{12}},                      // givenName
}

// genValue is a random attribute value for tag: specials RFC 2253
// escapes, spaces at either end, non-ASCII and 4-byte characters, NUL.
func genValue(r *rand.Rand, tag int) []byte {
	printable := []rune("abcXYZ019 '()+,-./:=?")
	wide := []rune("abcXYZ019 ,=+<>#;\"\\_@!&*é日\U0001F600\x00\r")
	ascii := []rune("abcXYZ019 ,=+<>#;\"\\_@!&*\x00")
	var alphabet []rune
	switch tag {
	case 19:
		alphabet = printable
	case 22, 20:
		alphabet = ascii
	default:
		alphabet = wide
	}
	var rs []rune
	if r.Intn(4) == 0 {
		rs = append(rs, []rune{' ', '#', ' '}[r.Intn(3)])
	}
	for n := 1 + r.Intn(8); n > 0; n-- {
		c := alphabet[r.Intn(len(alphabet))]
		if tag == 30 && c > 0xFFFF {
			c = 'z'
		}
		rs = append(rs, c)
	}
	if r.Intn(4) == 0 {
		rs = append(rs, ' ')
	}
	if tag == 30 {
		var b []byte
		for _, u := range utf16.Encode(rs) {
			b = append(b, byte(u>>8), byte(u))
		}
		return b
	}
	return []byte(string(rs))
}

// genName is a random DER Name: 1-5 RDNs, some multi-valued.
func genName(t *testing.T, r *rand.Rand) []byte {
	var rdns []rawRDNSET
	for n := 1 + r.Intn(5); n > 0; n-- {
		var set rawRDNSET
		for m := 1 + r.Intn(3)/2; m > 0; m-- {
			a := genAttrs[r.Intn(len(genAttrs))]
			tag := a.tags[r.Intn(len(a.tags))]
			v := genValue(r, tag)
			full, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassUniversal, Tag: tag, Bytes: v})
			if err != nil {
				t.Fatal(err)
			}
			set = append(set, rawATV{Type: a.oid, Value: asn1.RawValue{FullBytes: full}})
		}
		rdns = append(rdns, set)
	}
	der, err := asn1.Marshal(rdns)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// Certificate subjects are named as Java's X500Principal.getName() names
// them (Kafka's principal on an SSL listener), on 400 generated names
// (every RFC 2253 keyword and others, the string types, escapes, spaces
// at either end, non-ASCII, NUL, multi-valued RDNs), compared with Java.
// Then ssl.principal.mapping.rules: the rule list parsed and applied as
// Kafka 4.3's SslPrincipalMapper does (first whole match, $n references,
// L/U, DEFAULT, no rule matching, invalid rules), compared with it.
func TestTLSPrincipalNamesSameAsJava(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("PRINCIPAL_SEED"); s != "" { // reproduce a failure
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	r := rand.New(rand.NewSource(seed))
	var ders [][]byte
	var requests []string
	for i := 0; i < 400; i++ {
		der := genName(t, r)
		ders = append(ders, der)
		requests = append(requests, "dn "+hex.EncodeToString(der))
	}
	type mapCase struct{ rules, name string }
	dns := []string{"CN=alice,OU=eng,O=Acme\\, Inc.,C=US", "CN=Bob Smith,O=acme", "UID=svc-1,DC=example,DC=com", "CN=x", "O=no-cn", "CN=a$b,OU=$1"}
	ruleSets := []string{
		"DEFAULT",
		"RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/L, DEFAULT",
		"RULE:^CN=(.*?),.*$/$1/U",
		"RULE:^CN=([^,]*).*$/$1/,RULE:^UID=([^,]*),.*$/uid-$1/",
		"RULE:^.*[Cc][Nn]=([a-zA-Z ]*).*$/$1/L,DEFAULT",
		"RULE:^CN=(.*?),OU=(.*?)$/$2-$1-$3/",
		"RULE:^CN=(.*)$/\\$1-$1/",
		"RULE:^(CN=[^,]*).*$/$11/",
		"RULE:^O=(.*)$/org:$1/ , RULE:^CN=(.*?),.*$/$1/L",
		"RULE:^CN=(.*?),O=(.*)$/${x}/",
		"RULE:CN=a/b/,DEFAULT",
		"RULE:^CN=(.*?)\\/x$/$1/,DEFAULT",
		"RULE:^CN=(.*)/$1/X",
		"NOTARULE",
		"DEFAULT,,DEFAULT",
	}
	var cases []mapCase
	for _, rs := range ruleSets {
		for _, dn := range dns {
			cases = append(cases, mapCase{rs, dn})
			requests = append(requests, "map "+rs+"\t"+dn)
		}
	}
	answers := principalRef(t, requests)

	var named, differ int
	for i, der := range ders {
		got, err := rfc2253(der)
		want := answers[i]
		if err != nil {
			got = "error " + err.Error()
		} else {
			got = "ok " + got
		}
		if got != want {
			differ++
			if differ <= 10 {
				t.Errorf("seed %d (PRINCIPAL_SEED) name %d (DER %x):\n  connectd %q\n  java     %q", seed, i, der, got, want)
			}
			continue
		}
		named++
	}
	if differ > 0 {
		t.Errorf("seed %d: %d of %d names differ from Java's", seed, differ, len(ders))
	}
	// The comparison must have covered what RFC 2253 escapes and the
	// OID form, not only plain names.
	joined := strings.Join(answers[:len(ders)], "\n")
	for _, want := range []string{`\,`, `\+`, `\\`, `\#`, `\ `, "=#", "+", "DC=", "UID=", "1.2.840.113549.1.9.1=#16"} {
		if !strings.Contains(joined, want) {
			t.Errorf("seed %d: no generated name has %q in Java's form", seed, want)
		}
	}

	// Rules connectd refuses at start must be rules Java fails on (for
	// some name: Java checks a replacement's named groups at a match).
	javaRefuses := map[string]bool{}
	for j, c := range cases {
		if answers[len(ders)+j] == "error IllegalArgumentException" {
			javaRefuses[c.rules] = true
		}
	}
	mapped := 0
	for j, c := range cases {
		want := answers[len(ders)+j]
		var got string
		m, err := parsePrincipalRules(c.rules)
		if err != nil && javaRefuses[c.rules] {
			continue
		}
		if err != nil {
			got = "error IllegalArgumentException"
		} else if name, err := m.name(c.name); err != nil {
			got = "error NoMatchingRule"
		} else {
			got = "ok " + name
			mapped++
		}
		if got != want {
			t.Errorf("rules %q on %q:\n  connectd %q (%v)\n  kafka    %q", c.rules, c.name, got, err, want)
		}
	}
	if mapped < len(cases)/2 {
		t.Errorf("only %d of %d rule cases mapped a name", mapped, len(cases))
	}
	t.Logf("seed %d: %d names and %d rule cases the same as Java's and Kafka's", seed, named, len(cases))
}

// Patterns Go's regexp cannot run are refused at start with the key.
func TestTLSPrincipalRulesRefusedWithTheKey(t *testing.T) {
	for _, rules := range []string{`RULE:^CN=(.*),(?=OU).*$/$1/`, `RULE:^CN=(a)\1$/$1/`, `RULE:^CN=(.*)$`} {
		_, err := SecurityOptions(map[string]string{"embedded.kafka.ssl.principal.mapping.rules": rules})
		if err == nil || !strings.Contains(err.Error(), "embedded.kafka.ssl.principal.mapping.rules") {
			t.Errorf("rules %q: %v", rules, err)
		}
	}
}
