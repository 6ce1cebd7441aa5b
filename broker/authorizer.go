package broker

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Kafka ACLs on the embedded broker, as Apache Kafka's StandardAuthorizer
// (KRaft) checks them, from worker keys under "embedded.kafka." named as
// Kafka's broker configs:
//
//	embedded.kafka.authorizer.class.name             empty (default): no authorization; or
//	                                                 org.apache.kafka.metadata.authorizer.StandardAuthorizer
//	embedded.kafka.super.users                       User:<name>[;User:<name>...]: principals every
//	                                                 check allows (User:ANONYMOUS: unauthenticated clients)
//	embedded.kafka.allow.everyone.if.no.acl.found    false (default) | true: an operation on a resource
//	                                                 that no ACL matches is allowed
//
// A client's principal is User:<SASL user name>; on an SSL listener with
// ssl.client.auth, User:<the client certificate's subject, mapped by
// embedded.kafka.ssl.principal.mapping.rules> (tls_principal.go); else
// User:ANONYMOUS. The checks, their error codes
// (TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED,
// CLUSTER_AUTHORIZATION_FAILED, TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and
// the CreateAcls/DescribeAcls/DeleteAcls requests are kfake's
// (third_party/kfake acl.go and each request's handler); ACLs are
// persisted in <data.dir>/kafka/acls.json when they change and are
// loaded at start.
const StandardAuthorizer = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

// authorizer is the parsed authorizer configuration.
type authorizer struct {
	enabled       bool
	superUsers    []string // principals, "User:<name>"
	allowEveryone bool
}

// parseAuthorizer reads the authorizer keys of cfg. Errors name the key.
func parseAuthorizer(cfg map[string]string) (authorizer, error) {
	key := func(k string) string { return strings.TrimSpace(cfg[embeddedPrefix+k]) }
	var a authorizer
	switch v := key("authorizer.class.name"); v {
	case "":
	case StandardAuthorizer:
		a.enabled = true
	default:
		return a, fmt.Errorf("worker config %sauthorizer.class.name: %q is not %s (the embedded broker's only authorizer) or empty (none)", embeddedPrefix, v, StandardAuthorizer)
	}
	for _, p := range strings.Split(key("super.users"), ";") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if name, ok := strings.CutPrefix(p, "User:"); !ok || name == "" {
			return a, fmt.Errorf("worker config %ssuper.users: %q is not a principal User:<name> (principals are separated by ';')", embeddedPrefix, p)
		}
		a.superUsers = append(a.superUsers, p)
	}
	switch v := strings.ToLower(key("allow.everyone.if.no.acl.found")); v {
	case "", "false":
	case "true":
		a.allowEveryone = true
	default:
		return a, fmt.Errorf("worker config %sallow.everyone.if.no.acl.found: %q is not true or false", embeddedPrefix, key("allow.everyone.if.no.acl.found"))
	}
	if !a.enabled && (len(a.superUsers) > 0 || a.allowEveryone) {
		return a, fmt.Errorf("worker config %ssuper.users and %sallow.everyone.if.no.acl.found need %sauthorizer.class.name=%s", embeddedPrefix, embeddedPrefix, embeddedPrefix, StandardAuthorizer)
	}
	return a, nil
}

// opts returns the kfake options that enable the authorizer (none when
// it is off).
func (a authorizer) opts() []kfake.Opt {
	if !a.enabled {
		return nil
	}
	opts := []kfake.Opt{kfake.EnableACLs(), kfake.SuperUsers(a.superUsers...)}
	if a.allowEveryone {
		opts = append(opts, kfake.AllowEveryoneIfNoACLFound())
	}
	return opts
}
