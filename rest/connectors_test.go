package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/connectd/connectd/runtime"
)

func counterConfig(extra map[string]string) map[string]string {
	cfg := map[string]string{"connector.class": "test.CounterSourceConnector", "topic": "numbers", "count": "5"}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

// Connector lifecycle bodies and codes, as connect-runtime's
// ConnectorsResource (Kafka 3.9/4.x): POST /connectors 201 ConnectorInfo;
// PUT /{c}/config 201 on create, 200 on update; PATCH /{c}/config 200
// (KIP-477); GET /{c}/status ConnectorStateInfo; GET /{c}/tasks TaskInfo
// list; GET /{c}/tasks/{t}/status TaskState; 409 on a duplicate name
// (AlreadyExistsException); 404 messages of DistributedHerder.
func TestConnectorConfigEndpoints(t *testing.T) {
	e := startEnv(t)
	e.golden("connector_create", 201, "POST", "/connectors", map[string]any{"name": "counter", "config": counterConfig(nil)})
	e.golden("error_already_exists", 409, "POST", "/connectors", map[string]any{"name": "counter", "config": counterConfig(nil)})
	e.waitState("counter", "RUNNING", "RUNNING")
	e.golden("connector_status", 200, "GET", "/connectors/counter/status", nil)
	e.golden("connector_tasks", 200, "GET", "/connectors/counter/tasks", nil)
	e.golden("task_status", 200, "GET", "/connectors/counter/tasks/0/status", nil)
	e.golden("error_task_status_not_found", 404, "GET", "/connectors/counter/tasks/7/status", nil)
	e.golden("error_connector_not_found", 404, "GET", "/connectors/nope", nil)

	e.golden("config_put_create", 201, "PUT", "/connectors/other/config", counterConfig(map[string]string{"topic": "others"}))
	e.golden("config_put_update", 200, "PUT", "/connectors/other/config", counterConfig(map[string]string{"topic": "others", "count": "7"}))
	e.golden("error_config_name_mismatch", 400, "PUT", "/connectors/other/config", counterConfig(map[string]string{"name": "another"}))
	e.golden("config_patch", 200, "PATCH", "/connectors/other/config", `{"count":"9","mode":"fancy","topic":"others2"}`)
	e.golden("config_patch_remove", 200, "PATCH", "/connectors/other/config", `{"mode":null}`)
	e.golden("config_get", 200, "GET", "/connectors/other/config", nil)
	e.golden("error_patch_not_found", 404, "PATCH", "/connectors/nope/config", `{"a":"b"}`)
	tasks, _ := e.w.Herder.TaskConfigs("other")
	if len(tasks) != 1 || tasks[0]["topic"] != "others2" || tasks[0]["count"] != "9" {
		t.Fatalf("task configs after PATCH: %v", tasks)
	}
}

// Target states (KIP-875 for STOPPED): 202 without body; statuses PAUSED
// and STOPPED; a stopped connector has no tasks; 404 "Unknown connector X"
// (AbstractHerder.pauseConnector); target-state records as
// KafkaConfigBackingStore.putTargetState ({"state":"PAUSED","state.v2":"STOPPED"}).
func TestPauseResumeStop(t *testing.T) {
	e := startEnv(t)
	e.do("POST", "/connectors", map[string]any{"name": "counter", "config": counterConfig(nil)})
	e.waitState("counter", "RUNNING", "RUNNING")
	e.golden("pause", 202, "PUT", "/connectors/counter/pause", nil)
	e.waitState("counter", "PAUSED", "PAUSED")
	e.golden("status_paused", 200, "GET", "/connectors/counter/status", nil)
	e.golden("resume", 202, "PUT", "/connectors/counter/resume", nil)
	e.waitState("counter", "RUNNING", "RUNNING")
	// 204: ConnectorsResource.stopConnector returns void (integration
	// TestRESTCompatibility, recorded from Kafka Connect 4.3).
	e.golden("stop", 204, "PUT", "/connectors/counter/stop", nil)
	e.waitState("counter", "STOPPED", "")
	e.golden("status_stopped", 200, "GET", "/connectors/counter/status", nil)
	e.golden("connector_stopped", 200, "GET", "/connectors/counter", nil)
	e.golden("resume_after_stop", 202, "PUT", "/connectors/counter/resume", nil)
	e.waitState("counter", "RUNNING", "RUNNING")
	e.golden("error_pause_not_found", 404, "PUT", "/connectors/nope/pause", nil)
}

// POST /{c}/restart: 204 without parameters, 202 with the
// ConnectorStateInfo showing RESTARTING otherwise (KIP-745,
// ConnectorsResource.restartConnector); task restart 204; 404 messages of
// DistributedHerder.restartTask ("Unknown task: c-7"); a task id that is
// not an integer is no route (Jersey 404).
func TestRestart(t *testing.T) {
	e := startEnv(t)
	e.do("POST", "/connectors", map[string]any{"name": "counter", "config": counterConfig(nil)})
	e.waitState("counter", "RUNNING", "RUNNING")
	e.golden("restart_connector_only", 204, "POST", "/connectors/counter/restart", nil)
	e.golden("restart_include_tasks", 202, "POST", "/connectors/counter/restart?includeTasks=true", nil)
	e.waitState("counter", "RUNNING", "RUNNING")
	e.golden("restart_only_failed", 202, "POST", "/connectors/counter/restart?includeTasks=true&onlyFailed=true", nil)
	e.golden("restart_task", 204, "POST", "/connectors/counter/tasks/0/restart", nil)
	e.golden("error_restart_unknown_task", 404, "POST", "/connectors/counter/tasks/7/restart", nil)
	e.golden("error_restart_unknown_connector", 404, "POST", "/connectors/nope/restart?includeTasks=true", nil)
	e.golden("error_task_id_not_integer", 404, "POST", "/connectors/counter/tasks/x/restart", nil)
	e.waitState("counter", "RUNNING", "RUNNING")
}

// Active topics (KIP-558): {"<c>":{"topics":[...]}}; reset answers 202;
// an unknown connector has no topics (AbstractHerder.connectorActiveTopics).
func TestActiveTopics(t *testing.T) {
	e := startEnv(t)
	e.do("POST", "/connectors", map[string]any{"name": "counter", "config": counterConfig(nil)})
	e.waitFor("active topic", func() bool { return len(e.w.Herder.ActiveTopics("counter")) == 1 })
	e.golden("topics", 200, "GET", "/connectors/counter/topics", nil)
	e.golden("topics_reset", 202, "PUT", "/connectors/counter/topics/reset", nil)
	e.golden("topics_after_reset", 200, "GET", "/connectors/counter/topics", nil)
}

// Offsets (KIP-875): GET {"offsets":[{"partition":..,"offset":..}]};
// PATCH/DELETE 400 unless STOPPED with Kafka Connect's message
// (DistributedHerder.modifyConnectorOffsetsChecks); 200 with the Message
// of Worker for a connector that does not manage offsets itself; the task
// resumes from the altered offset.
func TestOffsets(t *testing.T) {
	e := startEnv(t)
	e.do("POST", "/connectors", map[string]any{"name": "counter", "config": counterConfig(nil)})
	e.waitFor("offset 4 stored", func() bool {
		_, b := e.do("GET", "/connectors/counter/offsets", nil)
		return strings.Contains(string(b), `"seq":4`)
	})
	e.golden("offsets", 200, "GET", "/connectors/counter/offsets", nil)
	alter := `{"offsets":[{"partition":{"source":"counter"},"offset":{"seq":99}}]}`
	e.golden("error_offsets_not_stopped", 400, "PATCH", "/connectors/counter/offsets", alter)
	e.golden("error_offsets_empty", 400, "PATCH", "/connectors/counter/offsets", `{"offsets":[]}`)
	e.do("PUT", "/connectors/counter/stop", nil)
	e.waitState("counter", "STOPPED", "")
	e.golden("offsets_altered", 200, "PATCH", "/connectors/counter/offsets", alter)
	e.golden("offsets_after_alter", 200, "GET", "/connectors/counter/offsets", nil)
	e.do("PUT", "/connectors/counter/resume", nil)
	// The task starts from seq 100 and emits 5 more.
	e.waitFor("offset 104 stored", func() bool {
		_, b := e.do("GET", "/connectors/counter/offsets", nil)
		return strings.Contains(string(b), `"seq":104`)
	})
	e.do("PUT", "/connectors/counter/stop", nil)
	e.waitState("counter", "STOPPED", "")
	e.golden("offsets_reset", 200, "DELETE", "/connectors/counter/offsets", nil)
	e.golden("offsets_after_reset", 200, "GET", "/connectors/counter/offsets", nil)
	e.golden("error_offsets_not_found", 404, "GET", "/connectors/nope/offsets", nil)
}

// Plugins: GET /connector-plugins (connectors only) and
// ?connectorsOnly=false (KIP-769: converters, transformations, predicates
// with their PluginType names); GET /connector-plugins/{p}/config is the
// plugin's ConfigKeyInfo list followed by the framework's connector keys
// (AbstractHerder.connectorPluginConfig); 404 "Unknown plugin X.".
func TestPlugins(t *testing.T) {
	e := startEnv(t)
	e.golden("plugins", 200, "GET", "/connector-plugins", nil)
	e.golden("plugins_all", 200, "GET", "/connector-plugins?connectorsOnly=false", nil)
	e.golden("plugin_config", 200, "GET", "/connector-plugins/CounterSource/config", nil)
	e.golden("plugin_config_transformation", 200, "GET", "/connector-plugins/test.InsertField/config", nil)
	e.golden("error_plugin_not_found", 404, "GET", "/connector-plugins/nope/config", nil)
}

// PUT /connector-plugins/{p}/config/validate answers 200 with ConfigInfos
// (name, error_count, groups, configs[{definition, value}]) as
// AbstractHerder.validateConnectorConfig; POST /connectors with the same
// config is a 400 listing the same messages in the same order
// (AbstractHerder.maybeAddConfigErrors).
func TestValidate(t *testing.T) {
	e := startEnv(t)
	bad := map[string]string{"connector.class": "test.CounterSourceConnector", "name": "v", "count": "many", "mode": "odd",
		"tasks.max": "0", "errors.tolerance": "some", "transforms": "ins", "transforms.ins.type": "test.Nope"}
	body := e.golden("validate_bad", 200, "PUT", "/connector-plugins/CounterSource/config/validate", bad)
	e.golden("validate_good", 200, "PUT", "/connector-plugins/test.CounterSourceConnector/config/validate",
		map[string]string{"connector.class": "test.CounterSourceConnector", "name": "v", "topic": "t"})
	e.golden("error_validate_type_mismatch", 400, "PUT", "/connector-plugins/Other/config/validate", bad)
	e.golden("error_validate_no_class", 400, "PUT", "/connector-plugins/CounterSource/config/validate", map[string]string{"name": "v"})
	_, create := e.do("POST", "/connectors", map[string]any{"name": "v", "config": bad})
	e.golden("error_create_invalid", 400, "POST", "/connectors", map[string]any{"name": "v", "config": bad})

	var infos struct {
		ErrorCount int `json:"error_count"`
		Configs    []struct {
			Value struct{ Errors []string } `json:"value"`
		} `json:"configs"`
	}
	json.Unmarshal(body, &infos)
	var msgs []string
	for _, c := range infos.Configs {
		msgs = append(msgs, c.Value.Errors...)
	}
	var eb ErrorBody
	json.Unmarshal(create, &eb)
	want := "Connector configuration is invalid and contains the following " + itoa(len(msgs)) + " error(s):\n" + strings.Join(msgs, "\n") +
		"\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"
	if infos.ErrorCount != len(msgs) || eb.Message != want {
		t.Fatalf("POST /connectors message and validate body disagree:\n%s\nvs\n%s", eb.Message, want)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// Loggers (KIP-495, Kafka 3.9 LoggingResource): GET /admin/loggers lists
// the loggers with a level of their own and root as LoggerLevel
// {"level","last_modified"}; PUT sets a namespace and answers the affected
// logger names; 404 for an unknown logger ("Logger X not found.") and for
// an invalid level ("invalid log level 'X'."); 400 without "level".
func TestLoggers(t *testing.T) {
	e := startEnv(t)
	e.golden("loggers", 200, "GET", "/admin/loggers", nil)
	e.golden("logger_set", 200, "PUT", "/admin/loggers/org.apache.kafka.connect.runtime", `{"level":"debug"}`)
	e.golden("logger_get", 200, "GET", "/admin/loggers/org.apache.kafka.connect.runtime.WorkerSourceTask", nil)
	e.golden("loggers_after_set", 200, "GET", "/admin/loggers", nil)
	e.golden("error_logger_not_found", 404, "GET", "/admin/loggers/com.example.Nope", nil)
	e.golden("error_logger_bad_level", 404, "PUT", "/admin/loggers/root", `{"level":"LOUD"}`)
	e.golden("error_logger_no_level", 400, "PUT", "/admin/loggers/root", `{}`)
	if !e.w.Herder.Loggers().Logger(runtime.LoggerSourceTask).Enabled(context.Background(), -4) {
		t.Fatal("DEBUG not enabled for WorkerSourceTask after PUT")
	}
}

// Unknown paths and wrong methods answer as Jersey does through Kafka
// Connect's ConnectExceptionMapper: {"error_code":404,"message":"HTTP 404
// Not Found"} and 405 "HTTP 405 Method Not Allowed".
func TestUnknownRoutes(t *testing.T) {
	e := startEnv(t)
	e.golden("error_unknown_path", 404, "GET", "/nope", nil)
	e.golden("error_method_not_allowed", 405, "DELETE", "/connectors", nil)
}

// A creation answers as Kafka Connect 4.3's Response.created (checked live
// against a Kafka Connect 4.3 worker): an absolute Location built from the
// URL the client used (its Host header), for POST /connectors and for a
// PUT /{c}/config that creates; the name path-escaped.
func TestCreatedLocationIsAbsolute(t *testing.T) {
	e := startEnv(t)
	send := func(method, path, host string, body any) *http.Response {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, e.url+path, bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := send("POST", "/connectors", "", map[string]any{"name": "counter", "config": counterConfig(nil)}); resp.StatusCode != 201 || resp.Header.Get("Location") != e.url+"/connectors/counter" {
		t.Errorf("POST /connectors: %d, Location %q, want 201 and %q", resp.StatusCode, resp.Header.Get("Location"), e.url+"/connectors/counter")
	}
	if resp := send("PUT", "/connectors/a%20b/config", "connect.example:8083", counterConfig(map[string]string{"topic": "ab"})); resp.StatusCode != 201 || resp.Header.Get("Location") != "http://connect.example:8083/connectors/a%20b" {
		t.Errorf("PUT /connectors/a%%20b/config: %d, Location %q, want 201 and http://connect.example:8083/connectors/a%%20b", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp := send("PUT", "/connectors/counter/config", "", counterConfig(map[string]string{"count": "7"})); resp.StatusCode != 200 || resp.Header.Get("Location") != "" {
		t.Errorf("PUT of an existing connector's config: %d, Location %q, want 200 without", resp.StatusCode, resp.Header.Get("Location"))
	}
}
