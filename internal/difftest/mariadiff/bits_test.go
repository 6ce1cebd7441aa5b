package mariadiff

import "testing"

// TestBitsAgainstDebezium runs a written workload of BIT columns with
// defaults (BIT(1), BIT(7), BIT(12), BIT(64); NULLs, which JsonConverter
// writes as the schema default) in the snapshot, in a streamed CREATE
// TABLE and after ALTER … SET DEFAULT, through Debezium's MariaDbConnector
// and connectd: no difference at all, listed or not.
func TestBitsAgainstDebezium(t *testing.T) {
	def := "(id INT PRIMARY KEY, a BIT(1) DEFAULT b'1', b BIT(7) DEFAULT b'1010001', c BIT(12) DEFAULT b'101000000011', d BIT(64) DEFAULT b'1', e BIT(3) DEFAULT b'000')"
	w := &Workload{Seed: -2, DB: "bits", Server: Server{Charset: "utf8mb4", TimeZone: "+00:00"},
		Setup: []string{"CREATE TABLE s " + def + ";",
			"INSERT INTO s VALUES (1, NULL, NULL, NULL, NULL, NULL), (2, b'0', b'1111111', b'1', b'1111111111111111111111111111111111111111111111111111111111111111', b'101');",
			"INSERT INTO s (id) VALUES (3);"},
		Changes: []string{"CREATE TABLE c " + def + ";",
			"INSERT INTO c VALUES (1, NULL, NULL, NULL, NULL, NULL), (2, b'0', b'1111111', b'1', b'1', b'101');",
			"INSERT INTO c (id) VALUES (3);",
			"ALTER TABLE c ALTER COLUMN b SET DEFAULT b'0000001';",
			"INSERT INTO c (id, b) VALUES (4, NULL);"},
		Config:  map[string]string{"topic.prefix": "dbserver1", "database.include.list": "bits"},
		Columns: map[string]string{},
	}
	diffs, n := runWritten(t, w, 7)
	for _, d := range diffs {
		t.Errorf("%s", d)
	}
	t.Logf("%d Debezium records compared, %d differences", n, len(diffs))
}
