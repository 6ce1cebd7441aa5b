package registry

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/registry golden files")

// Confluent Schema Registry API reference, the source of every expected
// body and error code below.
const apiDoc = "https://docs.confluent.io/platform/current/schema-registry/develop/api.html"

const (
	schemaV1 = `{"type":"record","name":"User","namespace":"t","fields":[{"name":"id","type":"int"}]}`
	// v2 adds an optional field: BACKWARD compatible.
	schemaV2 = `{"type":"record","name":"User","namespace":"t","fields":[{"name":"id","type":"int"},{"name":"email","type":["null","string"],"default":null}]}`
	// bad adds a required field without default: not BACKWARD compatible.
	schemaBad = `{"type":"record","name":"User","namespace":"t","fields":[{"name":"id","type":"int"},{"name":"age","type":"int"}]}`
)

// Schemas of the IMPORT steps: Imp, and Imp with its field's type changed
// (not BACKWARD compatible; IMPORT mode does not check).
const (
	schemaImp       = `{"type":"record","name":"Imp","fields":[{"name":"a","type":"int"}]}`
	schemaImpString = `{"type":"record","name":"Imp","fields":[{"name":"a","type":"string"}]}`
)

// importBody is a register request with Confluent's explicit "id" and
// "version" (version 0: left out).
func importBody(schema string, id, version int) string {
	if version == 0 {
		return fmt.Sprintf(`{"schema":%q,"id":%d}`, schema, id)
	}
	return fmt.Sprintf(`{"schema":%q,"id":%d,"version":%d}`, schema, id, version)
}

func body(schema string) string {
	return fmt.Sprintf(`{"schema":%q}`, schema)
}

type apiStep struct {
	doc    string // section of the Confluent API reference
	method string
	path   string
	body   string
	status int
	want   string // exact body; "" = not checked here (see the golden transcript)
}

// TestAPIGolden drives the API through one scenario and checks status
// codes, error codes and bodies against Confluent's API reference; the
// whole transcript is also locked in testdata/registry/api.golden.
func TestAPIGolden(t *testing.T) {
	srv := NewServer(NewInMemory())
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	steps := []apiStep{
		{"#get--subjects", "GET", "/subjects", "", 200, `[]`},
		{"#get--schemas-types", "GET", "/schemas/types", "", 200, `["AVRO"]`},
		{"#get--config: global default BACKWARD", "GET", "/config", "", 200, `{"compatibilityLevel":"BACKWARD"}`},
		{"#get--mode", "GET", "/mode", "", 200, `{"mode":"READWRITE"}`},
		{"#post--subjects-(string-%20subject)-versions", "POST", "/subjects/users-value/versions", body(schemaV1), 200, `{"id":1}`},
		{"#post--subjects-(string-%20subject)-versions: idempotent", "POST", "/subjects/users-value/versions", body(schemaV1), 200, `{"id":1}`},
		{"#post--subjects-(string-%20subject)-versions: same schema, other subject, same id", "POST", "/subjects/other-value/versions", body(schemaV1), 200, `{"id":1}`},
		{"#post--subjects-(string-%20subject)-versions: 42201 invalid schema", "POST", "/subjects/users-value/versions", body(`{"type":"record"}`), 422, ""},
		{"#post--subjects-(string-%20subject)-versions: 409 incompatible", "POST", "/subjects/users-value/versions", body(schemaBad), 409, ""},
		{"#post--compatibility-subjects-(string-%20subject)-versions-(versionId-%20version)", "POST", "/compatibility/subjects/users-value/versions/latest", body(schemaV2), 200, `{"is_compatible":true}`},
		{"#post--compatibility-subjects-(string-%20subject)-versions-(versionId-%20version): incompatible", "POST", "/compatibility/subjects/users-value/versions/latest", body(schemaBad), 200, `{"is_compatible":false}`},
		{"#post--compatibility-subjects-(string-%20subject)-versions-(versionId-%20version): verbose", "POST", "/compatibility/subjects/users-value/versions/1?verbose=true", body(schemaV2), 200, `{"is_compatible":true,"messages":[]}`},
		{"#post--compatibility-...: 40402", "POST", "/compatibility/subjects/users-value/versions/9", body(schemaV2), 404, `{"error_code":40402,"message":"Version 9 not found."}`},
		{"#post--subjects-(string-%20subject)-versions: new version", "POST", "/subjects/users-value/versions", body(schemaV2), 200, `{"id":2}`},
		{"#get--subjects", "GET", "/subjects", "", 200, `["other-value","users-value"]`},
		{"#get--subjects-(string-%20subject)-versions", "GET", "/subjects/users-value/versions", "", 200, `[1,2]`},
		{"#get--subjects-(string-%20subject)-versions: 40401", "GET", "/subjects/nope/versions", "", 404, `{"error_code":40401,"message":"Subject 'nope' not found."}`},
		{"#get--subjects-(string-%20subject)-versions-(versionId-%20version)", "GET", "/subjects/users-value/versions/1", "", 200,
			`{"subject":"users-value","version":1,"id":1,"schema":` + fmt.Sprintf("%q", schemaV1) + `}`},
		{"#get--subjects-(string-%20subject)-versions-(versionId-%20version): latest", "GET", "/subjects/users-value/versions/latest", "", 200,
			`{"subject":"users-value","version":2,"id":2,"schema":` + fmt.Sprintf("%q", schemaV2) + `}`},
		{"#get--subjects-(string-%20subject)-versions-(versionId-%20version): 40402", "GET", "/subjects/users-value/versions/7", "", 404, `{"error_code":40402,"message":"Version 7 not found."}`},
		{"#get--subjects-(string-%20subject)-versions-(versionId-%20version): 42202", "GET", "/subjects/users-value/versions/abc", "", 422,
			`{"error_code":42202,"message":"The specified version 'abc' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\""}`},
		{"#get--subjects-(string-%20subject)-versions-(versionId-%20version)-schema", "GET", "/subjects/users-value/versions/1/schema", "", 200, schemaV1},
		{"#get--schemas-ids-int-%20id", "GET", "/schemas/ids/2", "", 200, `{"schema":` + fmt.Sprintf("%q", schemaV2) + `}`},
		{"#get--schemas-ids-int-%20id: 40403", "GET", "/schemas/ids/99", "", 404, `{"error_code":40403,"message":"Schema 99 not found"}`},
		{"#get--schemas-ids-int-%20id-schema", "GET", "/schemas/ids/1/schema", "", 200, schemaV1},
		{"#get--schemas-ids-int-%20id-subjects", "GET", "/schemas/ids/1/subjects", "", 200, `["other-value","users-value"]`},
		{"#get--schemas-ids-int-%20id-versions", "GET", "/schemas/ids/1/versions", "", 200, `[{"subject":"other-value","version":1},{"subject":"users-value","version":1}]`},
		{"#post--subjects-(string-%20subject)", "POST", "/subjects/users-value", body(schemaV1), 200,
			`{"subject":"users-value","version":1,"id":1,"schema":` + fmt.Sprintf("%q", schemaV1) + `}`},
		{"#post--subjects-(string-%20subject): 40403", "POST", "/subjects/users-value", body(schemaBad), 404, `{"error_code":40403,"message":"Schema not found"}`},
		{"#post--subjects-(string-%20subject): 40401", "POST", "/subjects/nope", body(schemaV1), 404, `{"error_code":40401,"message":"Subject 'nope' not found."}`},
		{"#put--config-(string-%20subject)", "PUT", "/config/users-value", `{"compatibility":"full"}`, 200, `{"compatibility":"FULL"}`},
		{"#get--config-(string-%20subject)", "GET", "/config/users-value", "", 200, `{"compatibilityLevel":"FULL"}`},
		{"#get--config-(string-%20subject): 40408", "GET", "/config/other-value", "", 404, `{"error_code":40408,"message":"Subject 'other-value' does not have subject-level compatibility configured"}`},
		{"#get--config-(string-%20subject): defaultToGlobal", "GET", "/config/other-value?defaultToGlobal=true", "", 200, `{"compatibilityLevel":"BACKWARD"}`},
		{"#put--config: 42203", "PUT", "/config", `{"compatibility":"SIDEWAYS"}`, 422,
			`{"error_code":42203,"message":"Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive"}`},
		{"#delete--config-(string-%20subject)", "DELETE", "/config/users-value", "", 200, `{"compatibilityLevel":"FULL"}`},
		{"#put--config", "PUT", "/config", `{"compatibility":"NONE"}`, 200, `{"compatibility":"NONE"}`},
		{"#put--config: NONE lets the incompatible schema in", "POST", "/subjects/users-value/versions", body(schemaBad), 200, `{"id":3}`},
		{"#delete--config", "DELETE", "/config", "", 200, `{"compatibilityLevel":"NONE"}`},
		{"#put--mode: 42204", "PUT", "/mode", `{"mode":"SOMETIMES"}`, 422, `{"error_code":42204,"message":"Invalid mode. Valid values are READWRITE, READONLY, and IMPORT."}`},
		{"#put--mode", "PUT", "/mode", `{"mode":"READONLY"}`, 200, `{"mode":"READONLY"}`},
		{"#put--mode: READONLY refuses writes with 42205", "POST", "/subjects/x-value/versions", body(schemaV1), 422, `{"error_code":42205,"message":"Subject x-value is in read-only mode"}`},
		{"#put--mode", "PUT", "/mode", `{"mode":"READWRITE"}`, 200, `{"mode":"READWRITE"}`},
		{"#delete--subjects-(string-%20subject)-versions-(versionId-%20version): 40407", "DELETE", "/subjects/users-value/versions/3?permanent=true", "", 404,
			`{"error_code":40407,"message":"Subject 'users-value' Version 3 was not deleted first before being permanently deleted"}`},
		{"#delete--subjects-(string-%20subject)-versions-(versionId-%20version)", "DELETE", "/subjects/users-value/versions/3", "", 200, `3`},
		{"#delete--subjects-(string-%20subject)-versions-(versionId-%20version): 40406", "DELETE", "/subjects/users-value/versions/3", "", 404,
			`{"error_code":40406,"message":"Subject 'users-value' Version 3 was soft deleted.Set permanent=true to delete permanently"}`},
		{"#get--subjects-(string-%20subject)-versions: deleted hidden", "GET", "/subjects/users-value/versions", "", 200, `[1,2]`},
		{"#get--subjects-(string-%20subject)-versions: ?deleted=true", "GET", "/subjects/users-value/versions?deleted=true", "", 200, `[1,2,3]`},
		{"#delete--subjects-(string-%20subject)-versions-(versionId-%20version): permanent", "DELETE", "/subjects/users-value/versions/3?permanent=true", "", 200, `3`},
		{"#delete--subjects-(string-%20subject): 40405", "DELETE", "/subjects/users-value?permanent=true", "", 404,
			`{"error_code":40405,"message":"Subject 'users-value' was not deleted first before being permanently deleted"}`},
		{"#delete--subjects-(string-%20subject)", "DELETE", "/subjects/users-value", "", 200, `[1,2]`},
		{"#delete--subjects-(string-%20subject): 40404", "DELETE", "/subjects/users-value", "", 404,
			`{"error_code":40404,"message":"Subject 'users-value' was soft deleted.Set permanent=true to delete permanently"}`},
		{"#get--subjects: soft-deleted subject hidden", "GET", "/subjects", "", 200, `["other-value"]`},
		{"#get--schemas-ids-int-%20id: ids survive a soft delete", "GET", "/schemas/ids/2", "", 200, `{"schema":` + fmt.Sprintf("%q", schemaV2) + `}`},
		{"#delete--subjects-(string-%20subject): permanent", "DELETE", "/subjects/users-value?permanent=true", "", 200, `[1,2]`},
		{"#delete--subjects-(string-%20subject): 40401", "DELETE", "/subjects/users-value", "", 404, `{"error_code":40401,"message":"Subject 'users-value' not found."}`},
		{"#get--schemas-ids-int-%20id: id 1 still used by other-value", "GET", "/schemas/ids/1", "", 200, `{"schema":` + fmt.Sprintf("%q", schemaV1) + `}`},
		{"#get--schemas-ids-int-%20id: id 2 gone after the permanent delete", "GET", "/schemas/ids/2", "", 404, `{"error_code":40403,"message":"Schema 2 not found"}`},
		{"ids are never reused", "POST", "/subjects/new-value/versions", body(`"string"`), 200, `{"id":4}`},
		// IMPORT mode (Confluent's KafkaSchemaRegistry.setMode, register,
		// checkRegisterMode, checkIfSchemaWithIdExist; messages from there).
		{"#put--mode: IMPORT needs an empty registry (42205)", "PUT", "/mode", `{"mode":"IMPORT"}`, 422, `{"error_code":42205,"message":"Cannot import since found existing subjects"}`},
		{"#put--mode-(string-%20subject): IMPORT on an empty subject", "PUT", "/mode/imp-value", `{"mode":"IMPORT"}`, 200, `{"mode":"IMPORT"}`},
		{"#post--subjects-(string-%20subject)-versions: IMPORT keeps id and version", "POST", "/subjects/imp-value/versions", importBody(schemaImp, 100, 3), 200, `{"id":100}`},
		{"#get--subjects-(string-%20subject)-versions: the imported version", "GET", "/subjects/imp-value/versions", "", 200, `[3]`},
		{"#get--schemas-ids-int-%20id: the imported id", "GET", "/schemas/ids/100", "", 200, `{"schema":` + fmt.Sprintf("%q", schemaImp) + `}`},
		{"#post--subjects-(string-%20subject)-versions: IMPORT replay is idempotent", "POST", "/subjects/imp-value/versions", importBody(schemaImp, 100, 3), 200, `{"id":100}`},
		{"#post--subjects-(string-%20subject)-versions: IMPORT, id of another schema (42205)", "POST", "/subjects/imp-value/versions", importBody(schemaImpString, 100, 4), 422,
			`{"error_code":42205,"message":"Overwrite new schema with id 100 is not permitted."}`},
		{"#post--subjects-(string-%20subject)-versions: IMPORT without an id (42205)", "POST", "/subjects/imp-value/versions", body(schemaImpString), 422,
			`{"error_code":42205,"message":"Subject imp-value is not in read-write mode"}`},
		{"#post--subjects-(string-%20subject)-versions: IMPORT skips compatibility, id without version takes the next", "POST", "/subjects/imp-value/versions", `{"schema":` + fmt.Sprintf("%q", schemaImpString) + `,"id":101}`, 200, `{"id":101}`},
		{"#get--subjects-(string-%20subject)-versions-(versionId-%20version): latest import", "GET", "/subjects/imp-value/versions/latest", "", 200,
			`{"subject":"imp-value","version":4,"id":101,"schema":` + fmt.Sprintf("%q", schemaImpString) + `}`},
		{"#post--subjects-(string-%20subject)-versions: an id outside IMPORT mode (42205)", "POST", "/subjects/other-value/versions", importBody(schemaImp, 200, 0), 422,
			`{"error_code":42205,"message":"Subject other-value is not in import mode"}`},
		{"#put--mode: ?force=true imports over existing subjects", "PUT", "/mode?force=true", `{"mode":"IMPORT"}`, 200, `{"mode":"IMPORT"}`},
		{"#put--mode", "PUT", "/mode", `{"mode":"READWRITE"}`, 200, `{"mode":"READWRITE"}`},
		{"#put--mode-(string-%20subject)", "PUT", "/mode/imp-value", `{"mode":"READWRITE"}`, 200, `{"mode":"READWRITE"}`},
		{"new ids continue above the imported ones (max id + 1)", "POST", "/subjects/after-import-value/versions", body(`"long"`), 200, `{"id":102}`},
		{"#put--mode-(string-%20subject): READONLY", "PUT", "/mode/imp-value", `{"mode":"READONLY"}`, 200, `{"mode":"READONLY"}`},
		{"#delete--subjects-(string-%20subject): READONLY refuses deletes (42205)", "DELETE", "/subjects/imp-value", "", 422, `{"error_code":42205,"message":"Subject imp-value is in read-only mode"}`},
		{"#post--subjects-(string-%20subject)-versions: READONLY still answers a registered schema's id", "POST", "/subjects/imp-value/versions", body(schemaImpString), 200, `{"id":101}`},
		{"unknown path: Jersey's 404 body", "GET", "/nothing/here", "", 404, `{"error_code":404,"message":"HTTP 404 Not Found"}`},
	}
	var transcript bytes.Buffer
	fmt.Fprintf(&transcript, "# Confluent Schema Registry API transcript (connectd registry). Reference: %s\n", apiDoc)
	for i, s := range steps {
		req, _ := http.NewRequest(s.method, ts.URL+s.path, strings.NewReader(s.body))
		req.Header.Set("Content-Type", ContentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != s.status {
			t.Errorf("step %d %s %s (%s%s): status %d, want %d: %s", i, s.method, s.path, apiDoc, s.doc, resp.StatusCode, s.status, b)
		}
		if s.want != "" && string(b) != s.want {
			t.Errorf("step %d %s %s (%s%s):\n got %s\nwant %s", i, s.method, s.path, apiDoc, s.doc, b, s.want)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, ContentType) {
			t.Errorf("step %d: Content-Type %q", i, ct)
		}
		fmt.Fprintf(&transcript, "\n# %s\n%s %s %s\n%d %s\n", s.doc, s.method, s.path, s.body, resp.StatusCode, b)
	}
	golden(t, filepath.Join("..", "testdata", "registry", "api.golden"), transcript.Bytes())
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs; got:\n%s", path, got)
	}
}
