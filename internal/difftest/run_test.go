package difftest

import "testing"

// TestReferenceFailure: the root cause of a failed Debezium engine comes
// with the two frames where it was thrown (mariadiff seed 69: MariaDB
// Connector/J's YEAR decoding), "" when the engine did not fail.
func TestReferenceFailure(t *testing.T) {
	log := "[x] ERROR io.debezium.relational.RelationalSnapshotChangeEventSource - Error during snapshot\n" +
		"java.util.concurrent.ExecutionException: java.lang.IllegalArgumentException\n" +
		"\tat java.base/java.util.concurrent.FutureTask.report(FutureTask.java:122)\n" +
		"[capture] engine stopped with error: org.apache.kafka.connect.errors.ConnectException: An exception occurred\n" +
		"Caused by: io.debezium.DebeziumException: java.util.concurrent.ExecutionException: java.lang.IllegalArgumentException\n" +
		"\tat io.debezium.pipeline.source.AbstractSnapshotChangeEventSource.execute(AbstractSnapshotChangeEventSource.java:116)\n" +
		"\t... 5 more\n" +
		"Caused by: java.lang.IllegalArgumentException\n" +
		"\tat java.sql/java.sql.Date.valueOf(Date.java:141)\n" +
		"\tat org.mariadb.jdbc.client.column.YearColumn.getDefaultText(YearColumn.java:83)\n" +
		"\tat org.mariadb.jdbc.client.result.rowdecoder.TextRowDecoder.defaultDecode(TextRowDecoder.java:43)\n" +
		"\t... 1 more\n"
	want := "java.lang.IllegalArgumentException at java.sql/java.sql.Date.valueOf(Date.java:141) at org.mariadb.jdbc.client.column.YearColumn.getDefaultText(YearColumn.java:83)"
	if got := ReferenceFailure(log); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := ReferenceFailure("Caused by: java.lang.IllegalArgumentException\n"); got != "" {
		t.Errorf("a log without an engine failure: got %q", got)
	}
	if got := ReferenceFailure("[capture] engine stopped with error: x\nCaused by: java.lang.IllegalStateException: y\n\t... 3 more\n"); got != "java.lang.IllegalStateException: y" {
		t.Errorf("a cause without frames: got %q", got)
	}
}
