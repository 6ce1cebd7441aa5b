package rest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// bodyEndpoints are the REST endpoints that read a request body.
var bodyEndpoints = []struct{ method, path string }{
	{"POST", "/connectors"},
	{"PUT", "/connectors/fz/config"},
	{"PATCH", "/connectors/fz/config"},
	{"PUT", "/connector-plugins/test.CounterSourceConnector/config/validate"},
	{"PUT", "/admin/loggers/io.debezium"},
	{"PATCH", "/connectors/fz/offsets"},
	{"POST", "/connectors/fz/verify"},
	{"POST", "/jobs"},
	{"POST", "/jobs/nojob/savepoints"},
}

// FuzzRESTBodies sends arbitrary bodies to every endpoint that reads one:
// each answer is a client error or a success (never a 5xx: a body the
// worker cannot use is the caller's error, as in Kafka Connect), with a
// JSON body, and the worker still serves afterwards.
func FuzzRESTBodies(f *testing.F) {
	seeds := []string{
		`{"name":"n1","config":{"connector.class":"test.CounterSourceConnector","topic":"t","count":"2"}}`,
		`{"connector.class":"test.CounterSourceConnector","topic":"t","count":"3"}`,
		`{"count":"x"}`,
		`{"level":"DEBUG"}`,
		`{"offsets":[{"partition":{"p":1},"offset":{"o":2}}]}`,
		`{"tables":["a"]}`,
		`{"id":"j","source":{"topic":"t"},"window":{"type":"tumbling","size":"1s"}}`,
		`{}`, `[]`, `null`, `"s"`, `1e400`, `{"config":null}`, `{"name":"","config":{}}`, ``, `{`, "\x00",
	}
	for i := range bodyEndpoints {
		for _, s := range seeds {
			f.Add(uint8(i), []byte(s))
		}
	}
	e := startEnv(f)
	if code, body := e.do("PUT", "/connectors/fz/config", map[string]string{"connector.class": "test.CounterSourceConnector", "topic": "fz", "count": "1"}); code != 201 && code != 200 {
		f.Fatalf("create fz: %d %s", code, body)
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		e := &env{t: t, url: e.url, w: e.w} // do's Helper on the fuzz target's t
		ep := bodyEndpoints[int(which)%len(bodyEndpoints)]
		code, out := e.do(ep.method, ep.path, string(body))
		if code >= 500 {
			t.Fatalf("%s %s with body %q: status %d: %s", ep.method, ep.path, body, code, out)
		}
		if len(strings.TrimSpace(string(out))) > 0 && !json.Valid(out) {
			t.Fatalf("%s %s with body %q: status %d, body is not JSON: %s", ep.method, ep.path, body, code, out)
		}
		if ep.path == "/connectors" && code == http.StatusCreated {
			var c struct{ Name string }
			if json.Unmarshal(out, &c) == nil && c.Name != "" && c.Name != "fz" {
				e.do("DELETE", "/connectors/"+url.PathEscape(c.Name), nil)
			}
		}
		if code, out := e.do("GET", "/", nil); code != 200 {
			t.Fatalf("after %s %s with body %q the worker answers GET / with %d: %s", ep.method, ep.path, body, code, out)
		}
	})
}
