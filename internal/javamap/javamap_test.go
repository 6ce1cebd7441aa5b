package javamap

import (
	"reflect"
	"testing"
)

// TestOrder: orders read from Debezium 3.6.1's captures (offset maps and a
// transaction END's data_collections, testdata/debezium/pg_rename_midstream*).
func TestOrder(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"ts_usec", "txId", "lsn", "lsn_proc", "lsn_commit", "messageType", "transaction_id",
			"transaction_data_collection_order_public.a_new", "transaction_data_collection_order_other.renamed"},
			[]string{"transaction_id", "lsn_proc", "messageType", "lsn_commit", "lsn",
				"transaction_data_collection_order_public.a_new", "txId", "ts_usec", "transaction_data_collection_order_other.renamed"}},
		{[]string{"public.renamed", "public.a"}, []string{"public.a", "public.renamed"}},
		{[]string{"public.a_new", "other.renamed"}, []string{"other.renamed", "public.a_new"}},
	} {
		if got := Order(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Order(%q) = %q, Java %q", c.in, got, c.want)
		}
	}
	if StringHash("Größe😀") != javaHash {
		t.Errorf("hash %d", StringHash("Größe😀"))
	}
}

// "Größe😀".hashCode() in Java.
const javaHash = int32(2087674644)
