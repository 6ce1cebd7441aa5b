package rest

import (
	"bufio"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"unicode"

	"github.com/connectd/connectd/runtime"
	"github.com/labstack/echo/v4"
)

// HTTP basic authentication as Kafka Connect's BasicAuthSecurityRestExtension
// (KIP-208). The worker enables it with
//
//	rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension
//
// and reads the same JAAS file a Java worker is given with
// -Djava.security.auth.login.config=…: connectd takes its path from the
// worker property java.security.auth.login.config, else from that -D
// option in the KAFKA_OPTS environment variable. Its KafkaConnect entry
// lists PropertyFileLoginModule modules, whose file option names a
// properties file of user=password lines:
//
//	KafkaConnect {
//	  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
//	  file="/etc/connectd/credentials.properties";
//	};
//
// Control flags (required, requisite, sufficient, optional) combine as in
// JAAS. A request without valid credentials gets 401 with the body
// "User cannot access the resource." (JaasBasicAuthFilter). Files are read
// once, at start (Kafka caches them per path too).

// Class names of the REST extension and of its login module.
const (
	BasicAuthExtensionClass = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
	propertyFileLoginModule = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
	jaasLoginContext        = "KafkaConnect"
	msgUnauthorized         = "User cannot access the resource."
)

// jaasModule is one login module line of a JAAS entry.
type jaasModule struct {
	class   string
	flag    string
	options map[string]string
}

// loginModule checks one user's password.
type loginModule struct {
	flag        string
	credentials map[string]string
}

func (m loginModule) login(user, password string) bool {
	stored, ok := m.credentials[user]
	return ok && user != "" && subtle.ConstantTimeCompare([]byte(stored), []byte(password)) == 1
}

// basicAuthenticator is the KafkaConnect JAAS login context.
type basicAuthenticator struct{ modules []loginModule }

// authenticate combines the modules' results as javax.security.auth.login
// does: every required and requisite module must succeed (a requisite
// failure ends at once), a sufficient success ends at once when no
// required module failed before it; without required or requisite modules
// one sufficient or optional module must succeed.
func (a *basicAuthenticator) authenticate(user, password string) bool {
	failed, hasRequired, anyOK := false, false, false
	for _, m := range a.modules {
		ok := m.login(user, password)
		switch m.flag {
		case "required":
			hasRequired = true
			failed = failed || !ok
		case "requisite":
			hasRequired = true
			if !ok {
				return false
			}
		case "sufficient":
			if ok && !failed {
				return true
			}
		case "optional":
		}
		anyOK = anyOK || ok
	}
	if hasRequired {
		return !failed
	}
	return anyOK
}

var jaasOptionRE = regexp.MustCompile(`-Djava\.security\.auth\.login\.config=("[^"]*"|\S+)`)

// basicAuthFromConfig returns the authenticator the worker's
// rest.extension.classes asks for, or nil. Errors: an unknown extension
// class, a JAAS file that is missing, malformed, has no KafkaConnect entry
// or another login module, an unreadable credentials file.
func basicAuthFromConfig(cfg runtime.WorkerConfig, environ []string) (*basicAuthenticator, error) {
	enabled := false
	for _, c := range strings.Split(cfg.Get("rest.extension.classes"), ",") {
		switch c = strings.TrimSpace(c); c {
		case "":
		case BasicAuthExtensionClass, "BasicAuthSecurityRestExtension":
			enabled = true
		default:
			return nil, fmt.Errorf("worker config rest.extension.classes: Class %s could not be found (connectd has %s)", c, BasicAuthExtensionClass)
		}
	}
	if !enabled {
		return nil, nil
	}
	path := strings.TrimSpace(cfg.Get("java.security.auth.login.config"))
	if path == "" {
		for _, kv := range environ {
			if v, ok := strings.CutPrefix(kv, "KAFKA_OPTS="); ok {
				if m := jaasOptionRE.FindStringSubmatch(v); m != nil {
					path = strings.Trim(m[1], `"`)
				}
			}
		}
	}
	if path == "" {
		return nil, fmt.Errorf("worker config: %s needs a JAAS file: set java.security.auth.login.config (or -Djava.security.auth.login.config=… in KAFKA_OPTS)", BasicAuthExtensionClass)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("worker config java.security.auth.login.config: %w", err)
	}
	entries, err := parseJAAS(string(text))
	if err != nil {
		return nil, fmt.Errorf("JAAS file %s: %w", path, err)
	}
	mods, ok := entries[jaasLoginContext]
	if !ok || len(mods) == 0 {
		return nil, fmt.Errorf("JAAS file %s: No LoginModules configured for %s", path, jaasLoginContext)
	}
	a := &basicAuthenticator{}
	for _, m := range mods {
		if m.class != propertyFileLoginModule {
			return nil, fmt.Errorf("JAAS file %s: login module %s is not supported (connectd has %s)", path, m.class, propertyFileLoginModule)
		}
		file, ok := m.options["file"]
		if !ok || file == "" {
			return nil, fmt.Errorf("JAAS file %s: Property Credentials file must be specified (option file of %s)", path, propertyFileLoginModule)
		}
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("JAAS file %s: credentials file: %w", path, err)
		}
		creds, err := runtime.ParseProperties(bufio.NewScanner(f))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("JAAS file %s: credentials file %s: %w", path, file, err)
		}
		a.modules = append(a.modules, loginModule{flag: m.flag, credentials: creds})
	}
	return a, nil
}

// parseJAAS parses a JAAS login configuration file (the syntax of Java's
// ConfigFile): entries `Name { class flag key="value" ...; ... };` with
// // and /* */ comments. It returns the modules of each entry.
func parseJAAS(text string) (map[string][]jaasModule, error) {
	toks, err := jaasTokens(text)
	if err != nil {
		return nil, err
	}
	out := map[string][]jaasModule{}
	i := 0
	next := func() string {
		if i >= len(toks) {
			return ""
		}
		i++
		return toks[i-1]
	}
	expect := func(want string) error {
		if got := next(); got != want {
			return fmt.Errorf("expected %q, found %q", want, got)
		}
		return nil
	}
	for i < len(toks) {
		name := next()
		if err := expect("{"); err != nil {
			return nil, fmt.Errorf("entry %s: %w", name, err)
		}
		var mods []jaasModule
		for i < len(toks) && toks[i] != "}" {
			m := jaasModule{class: next(), flag: strings.ToLower(next()), options: map[string]string{}}
			switch m.flag {
			case "required", "requisite", "sufficient", "optional":
			default:
				return nil, fmt.Errorf("entry %s: login module %s: control flag %q is not one of required, requisite, sufficient, optional", name, m.class, m.flag)
			}
			for i < len(toks) && toks[i] != ";" {
				k := next()
				if err := expect("="); err != nil {
					return nil, fmt.Errorf("entry %s: option %s: %w", name, k, err)
				}
				m.options[k] = strings.Trim(next(), `"`)
			}
			if err := expect(";"); err != nil {
				return nil, fmt.Errorf("entry %s: %w", name, err)
			}
			mods = append(mods, m)
		}
		if err := expect("}"); err != nil {
			return nil, fmt.Errorf("entry %s: %w", name, err)
		}
		if err := expect(";"); err != nil {
			return nil, fmt.Errorf("entry %s: %w", name, err)
		}
		out[name] = append(out[name], mods...)
	}
	return out, nil
}

func jaasTokens(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case unicode.IsSpace(rune(c)):
			i++
		case strings.HasPrefix(s[i:], "//"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("unterminated comment")
			}
			i += end + 4
		case c == '{' || c == '}' || c == ';' || c == '=':
			toks = append(toks, string(c))
			i++
		case c == '"':
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("unterminated quoted string")
			}
			toks = append(toks, s[i:i+end+2])
			i += end + 2
		default:
			j := i
			for j < len(s) && !unicode.IsSpace(rune(s[j])) && !strings.ContainsRune("{};=\"", rune(s[j])) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks, nil
}

// middleware rejects requests without valid basic credentials
// (JaasBasicAuthFilter, BasicAuthCallBackHandler's header parsing).
func (a *basicAuthenticator) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if user, pw, ok := basicCredentials(c.Request().Header.Get("Authorization")); ok && a.authenticate(user, pw) {
			return next(c)
		}
		return c.String(http.StatusUnauthorized, msgUnauthorized)
	}
}

// basicCredentials decodes "Basic base64(user:password)"; the scheme is
// case-insensitive and the user must be non-empty.
func basicCredentials(h string) (user, password string, ok bool) {
	scheme, rest, found := strings.Cut(h, " ")
	if !found || scheme == "" || !strings.EqualFold(scheme, "basic") {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
	if err != nil {
		return "", "", false
	}
	user, password, found = strings.Cut(string(raw), ":")
	if !found || user == "" {
		return "", "", false
	}
	return user, password, true
}
