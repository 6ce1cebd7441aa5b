package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// readTopic returns every record of topic up to its end offsets.
func readTopic(t *testing.T, broker, topic string) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	want := int64(0)
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset })
	var out []*kgo.Record
	for int64(len(out)) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records of %s", len(out), want, topic)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

// ${file:…}, ${dir:…} and ${env:…} are resolved for the task (Kafka
// Connect's FileConfigProvider, DirectoryConfigProvider and
// EnvVarConfigProvider, KIP-297/KIP-421/KIP-887) while the config topic,
// the task configs written there and GET …/config keep the variables.
func TestConfigProvidersResolveForTaskOnly(t *testing.T) {
	dir := t.TempDir()
	props := filepath.Join(dir, "secrets.properties")
	if err := os.WriteFile(props, []byte("topic=numbers-from-file\npassword = pw-FILE-s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secretDir := filepath.Join(dir, "secret-dir")
	if err := os.Mkdir(secretDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secretDir, "api-key"), []byte("DIR-s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TESTCP_DB_USER", "ENV-s3cret-user")
	t.Setenv("OTHER_DB_USER", "not-allowlisted")

	kafka := freeAddr(t)
	shared := &counterShared{}
	w := startTestWorker(t, dir, kafka, shared,
		"config.providers", "file,env,dir",
		"config.providers.file.class", FileConfigProviderClass,
		"config.providers.env.class", EnvVarConfigProviderClass,
		"config.providers.env.param.allowlist.pattern", "^TESTCP_",
		"config.providers.dir.class", DirectoryConfigProviderClass,
	)
	defer w.Close()
	raw := map[string]string{
		"connector.class":   "test.CounterSource",
		"topic":             "${file:" + props + ":topic}",
		"count":             "5",
		"database.password": "${file:" + props + ":password}",
		"database.user":     "${env:TESTCP_DB_USER}",
		"api.key":           "key=${dir:" + secretDir + ":api-key}",
		"not.allowlisted":   "${env:OTHER_DB_USER}",
		"missing.key":       "${file:" + props + ":nope}",
		"unknown.provider":  "${vault:secret/db:password}",
	}
	ctx := context.Background()
	if _, err := w.Herder.CreateConnector(ctx, "secretive", raw); err != nil {
		t.Fatal(err)
	}
	// The records go to the resolved topic name.
	consumeAll(t, kafka, "numbers-from-file", 5)

	shared.mu.Lock()
	got := shared.lastCfg
	shared.mu.Unlock()
	want := map[string]string{
		"topic":             "numbers-from-file",
		"database.password": "pw-FILE-s3cret",
		"database.user":     "ENV-s3cret-user",
		"api.key":           "key=DIR-s3cret\n", // the file's whole content, as DirectoryConfigProvider reads it
		// Unresolvable variables stay as written (ConfigTransformer.replace).
		"not.allowlisted":  "${env:OTHER_DB_USER}",
		"missing.key":      "${file:" + props + ":nope}",
		"unknown.provider": "${vault:secret/db:password}",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("task config %s = %q, want %q", k, got[k], v)
		}
	}

	info, err := w.Herder.ConnectorInfo("secretive")
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range raw {
		if info.Config[k] != v {
			t.Errorf("GET config %s = %q, want the raw %q", k, info.Config[k], v)
		}
	}
	tcs, err := w.Herder.TaskConfigs("secretive")
	if err != nil || len(tcs) != 1 || tcs[0]["database.password"] != raw["database.password"] {
		t.Errorf("stored task config: %v %v", tcs, err)
	}

	recs := readTopic(t, kafka, "connect-configs")
	if len(recs) < 3 {
		t.Fatalf("config topic has %d records", len(recs))
	}
	for _, r := range recs {
		for _, secret := range []string{"s3cret", "numbers-from-file"} {
			if strings.Contains(string(r.Value), secret) {
				t.Errorf("config topic record %s holds %q: %s", r.Key, secret, r.Value)
			}
		}
	}

	// EnvVarConfigProvider refuses a path: the config is rejected (400).
	_, err = w.Herder.CreateConnector(ctx, "env-path", map[string]string{"connector.class": "test.CounterSource", "topic": "${env:some/path:TESTCP_DB_USER}"})
	var br *BadRequestError
	if !errors.As(err, &br) || br.Msg != "config provider env: Path is not supported for EnvVarConfigProvider, invalid value 'some/path'" {
		t.Fatalf("env path: %v", err)
	}
}

func TestConfigProvidersWorkerConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  WorkerConfig
		want string
	}{
		{WorkerConfig{"config.providers": "vault"}, "worker config config.providers.vault.class: missing"},
		{WorkerConfig{"config.providers": "x", "config.providers.x.class": "com.example.Vault"}, "Class com.example.Vault could not be found"},
		{WorkerConfig{"config.providers": "env", "config.providers.env.class": EnvVarConfigProviderClass, "config.providers.env.param.allowlist.pattern": "("}, "allowlist.pattern"},
	} {
		_, err := NewConfigTransformer(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.cfg, err, tc.want)
		}
	}
	// allowed.paths (KIP-993): a file outside them yields no value.
	dir := t.TempDir()
	f := filepath.Join(dir, "p.properties")
	os.WriteFile(f, []byte("k=v\n"), 0o600)
	tr, err := NewConfigTransformer(WorkerConfig{"config.providers": "file", "config.providers.file.class": "FileConfigProvider", "config.providers.file.param.allowed.paths": "/nonexistent/allowed"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := tr.Transform(map[string]string{"a": "${file:" + f + ":k}"})
	if err != nil || out["a"] != "${file:"+f+":k}" {
		t.Fatalf("outside allowed.paths: %v %v", out, err)
	}
	tr, _ = NewConfigTransformer(WorkerConfig{"config.providers": "file", "config.providers.file.class": "FileConfigProvider", "config.providers.file.param.allowed.paths": dir})
	if out, _ := tr.Transform(map[string]string{"a": "${file:" + f + ":k}"}); out["a"] != "v" {
		t.Fatalf("inside allowed.paths: %v", out)
	}
	// A file that cannot be read is an error (Kafka's ConfigException).
	if _, err := tr.Transform(map[string]string{"a": "${file:" + dir + "/absent:k}"}); err == nil || !strings.Contains(err.Error(), "Could not read properties from file") {
		t.Fatalf("absent file: %v", err)
	}
}
