package runtime

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Config providers (Kafka Connect KIP-297, KIP-421): a connector config
// value may hold variables ${provider:path:key} or ${provider:key} that the
// worker resolves when the config is used (validated, given to the
// connector or to a task), while the config topic and
// GET /connectors/{c}/config keep the raw text, so that secrets need not
// sit in Kafka.
//
// Worker properties, as Kafka Connect's:
//
//	config.providers=file,env,dir
//	config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
//	config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
//	config.providers.env.param.allowlist.pattern=^DB_
//	config.providers.dir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider
//	config.providers.<name>.param.allowed.paths=/etc/secrets (file, dir; KIP-993)

// Class names of the providers connectd implements (Apache Kafka's).
const (
	FileConfigProviderClass      = "org.apache.kafka.common.config.provider.FileConfigProvider"
	EnvVarConfigProviderClass    = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
	DirectoryConfigProviderClass = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
)

// ConfigProvider returns the values of keys under path (Kafka's
// org.apache.kafka.common.config.provider.ConfigProvider.get(path, keys)).
// A key it has no value for is absent from the result; the variable that
// named it then stays unresolved, as in Kafka. An error fails the use of
// the config (Kafka's ConfigException).
type ConfigProvider interface {
	Get(path string, keys []string) (map[string]string, error)
}

// configVariable is Kafka's ConfigTransformer.DEFAULT_PATTERN:
// ${provider:[path:]key}, groups 1 (provider), 3 (path, may be absent) and
// 4 (key).
var configVariable = regexp.MustCompile(`\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`)

// ConfigTransformer resolves config variables with the worker's providers
// (Kafka's ConfigTransformer / WorkerConfigTransformer).
type ConfigTransformer struct {
	providers map[string]ConfigProvider
}

// NewConfigTransformer builds the providers named by the worker's
// config.providers. Errors: a provider without a class, or with a class
// connectd does not have ("Class X could not be found"), or an invalid
// allowlist.pattern.
func NewConfigTransformer(cfg WorkerConfig) (*ConfigTransformer, error) {
	t := &ConfigTransformer{providers: map[string]ConfigProvider{}}
	for _, name := range splitList(cfg.Get("config.providers")) {
		prefix := "config.providers." + name
		class := strings.TrimSpace(cfg.Get(prefix + ".class"))
		params := cfg.Prefixed(prefix + ".param.")
		var p ConfigProvider
		switch class {
		case "":
			return nil, fmt.Errorf("worker config %s.class: missing; config.providers names %q", prefix, name)
		case FileConfigProviderClass, "FileConfigProvider":
			p = fileConfigProvider{allowed: allowedPaths(params["allowed.paths"])}
		case DirectoryConfigProviderClass, "DirectoryConfigProvider":
			p = directoryConfigProvider{allowed: allowedPaths(params["allowed.paths"])}
		case EnvVarConfigProviderClass, "EnvVarConfigProvider":
			pat := ".*"
			if v, ok := params["allowlist.pattern"]; ok {
				pat = v
			}
			re, err := regexp.Compile(pat)
			if err != nil {
				return nil, fmt.Errorf("worker config %s.param.allowlist.pattern: %w", prefix, err)
			}
			p = envVarConfigProvider{allow: re, environ: os.Environ}
		default:
			return nil, fmt.Errorf("worker config %s.class: Class %s could not be found (connectd has %s, %s, %s)", prefix, class,
				FileConfigProviderClass, EnvVarConfigProviderClass, DirectoryConfigProviderClass)
		}
		t.providers[name] = p
	}
	return t, nil
}

// HasVariables reports whether any value of cfg holds a variable.
func HasVariables(cfg map[string]string) bool {
	for _, v := range cfg {
		if configVariable.MatchString(v) {
			return true
		}
	}
	return false
}

// Transform returns cfg with every variable of a configured provider
// replaced by its value (Kafka's ConfigTransformer.transform): one Get per
// provider and path with every key asked for it. A variable naming an
// unconfigured provider, or a key the provider has no value for, is left
// as written. cfg itself is not changed. Errors: the provider's, naming
// the provider and path.
func (t *ConfigTransformer) Transform(cfg map[string]string) (map[string]string, error) {
	if t == nil || len(t.providers) == 0 || !HasVariables(cfg) {
		return cfg, nil
	}
	// provider -> path -> keys
	wanted := map[string]map[string]map[string]bool{}
	for _, v := range cfg {
		for _, m := range configVariable.FindAllStringSubmatch(v, -1) {
			if _, ok := t.providers[m[1]]; !ok {
				continue
			}
			if wanted[m[1]] == nil {
				wanted[m[1]] = map[string]map[string]bool{}
			}
			if wanted[m[1]][m[3]] == nil {
				wanted[m[1]][m[3]] = map[string]bool{}
			}
			wanted[m[1]][m[3]][m[4]] = true
		}
	}
	values := map[string]map[string]map[string]string{}
	for prov, paths := range wanted {
		values[prov] = map[string]map[string]string{}
		for path, keys := range paths {
			ks := make([]string, 0, len(keys))
			for k := range keys {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			data, err := t.providers[prov].Get(path, ks)
			if err != nil {
				return nil, fmt.Errorf("config provider %s: %w", prov, err)
			}
			values[prov][path] = data
		}
	}
	out := make(map[string]string, len(cfg))
	for k, v := range cfg {
		out[k] = configVariable.ReplaceAllStringFunc(v, func(ref string) string {
			m := configVariable.FindStringSubmatch(ref)
			byPath, ok := values[m[1]]
			if !ok {
				return ref
			}
			if val, ok := byPath[m[3]][m[4]]; ok {
				return val
			}
			return ref
		})
	}
	return out, nil
}

// ReverseTransform puts back, in each task config, the raw value of every
// key whose value in the raw connector config holds a variable (Kafka's
// AbstractHerder.reverseTransform): task configs derived from a resolved
// connector config are written to the config topic without the secrets.
func ReverseTransform(raw map[string]string, taskCfgs []map[string]string) []map[string]string {
	var keys []string
	for k, v := range raw {
		if configVariable.MatchString(v) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return taskCfgs
	}
	out := make([]map[string]string, len(taskCfgs))
	for i, tc := range taskCfgs {
		c := make(map[string]string, len(tc))
		for k, v := range tc {
			c[k] = v
		}
		for _, k := range keys {
			if _, ok := c[k]; ok {
				c[k] = raw[k]
			}
		}
		out[i] = c
	}
	return out
}

// allowedPaths parses allowed.paths (KIP-993): comma-separated absolute
// paths; empty = every path is allowed.
func allowedPaths(v string) []string {
	var out []string
	for _, p := range splitList(v) {
		out = append(out, filepath.Clean(p))
	}
	return out
}

// pathAllowed reports whether path (cleaned) lies under one of allowed, as
// Kafka's AllowedPaths.parseUntrustedPath.
func pathAllowed(allowed []string, path string) bool {
	if len(allowed) == 0 {
		return true
	}
	p := filepath.Clean(path)
	for _, a := range allowed {
		if p == a || strings.HasPrefix(p, a+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// fileConfigProvider is Kafka's FileConfigProvider: path is a Java
// properties file, keys are its property names. A path outside
// allowed.paths yields no values (Kafka logs a warning and returns none).
type fileConfigProvider struct{ allowed []string }

func (p fileConfigProvider) Get(path string, keys []string) (map[string]string, error) {
	if path == "" || !pathAllowed(p.allowed, path) {
		return map[string]string{}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("Could not read properties from file %s", path)
	}
	defer f.Close()
	props, err := ParseProperties(bufio.NewScanner(f))
	if err != nil {
		return nil, fmt.Errorf("Could not read properties from file %s", path)
	}
	out := map[string]string{}
	for _, k := range keys {
		if v, ok := props[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}

// directoryConfigProvider is Kafka's DirectoryConfigProvider: path is a
// directory, each key names a regular file in it whose whole content
// (UTF-8, not trimmed) is the value. A path that is not a directory yields
// no values.
type directoryConfigProvider struct{ allowed []string }

func (p directoryConfigProvider) Get(path string, keys []string) (map[string]string, error) {
	out := map[string]string{}
	if path == "" || !pathAllowed(p.allowed, path) {
		return out, nil
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return out, nil
	}
	for _, k := range keys {
		if strings.ContainsRune(k, filepath.Separator) || k == ".." || k == "." {
			continue // a key names a file in the directory, never elsewhere
		}
		f := filepath.Join(path, k)
		st, err := os.Stat(f)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("Could not read file %s for property %s", f, k)
		}
		out[k] = string(b)
	}
	return out, nil
}

// envVarConfigProvider is Kafka's EnvVarConfigProvider: keys are
// environment variable names; only names in which allowlist.pattern finds
// a match (Pattern.asPredicate, not a full match) are visible. A path is
// an error.
type envVarConfigProvider struct {
	allow   *regexp.Regexp
	environ func() []string
}

func (p envVarConfigProvider) Get(path string, keys []string) (map[string]string, error) {
	if path != "" {
		return nil, fmt.Errorf("Path is not supported for EnvVarConfigProvider, invalid value '%s'", path)
	}
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	out := map[string]string{}
	for _, kv := range p.environ() {
		k, v, ok := strings.Cut(kv, "=")
		if ok && want[k] && p.allow.MatchString(k) {
			out[k] = v
		}
	}
	return out, nil
}

// resolveConfig returns cfg with its variables resolved. Errors: a
// *BadRequestError with the provider's message.
func (h *Herder) resolveConfig(cfg map[string]string) (map[string]string, error) {
	out, err := h.transformer.Transform(cfg)
	if err != nil {
		return nil, &BadRequestError{Msg: err.Error()}
	}
	return out, nil
}

// resolveTaskConfig resolves a task's config and its connector's config
// when the task starts (Kafka's ClusterConfigState.taskConfig and
// connectorConfig, which transform on read).
func (h *Herder) resolveTaskConfig(taskCfg, connCfg map[string]string) (task, conn map[string]string, err error) {
	if task, err = h.resolveConfig(taskCfg); err != nil {
		return nil, nil, err
	}
	if conn, err = h.resolveConfig(connCfg); err != nil {
		return nil, nil, err
	}
	return task, conn, nil
}
