package runtime

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/connectd/connectd/connect"
)

// Topic creation for source connectors (Kafka Connect KIP-158). With the
// worker's topic.creation.enable (default true) and any topic.creation.*
// key in a connector's config, a topic is created, before the connector's
// first record to it, with the settings of the first group in
// topic.creation.groups whose include list matches the topic's name and
// whose exclude list does not, or else of the "default" group:
//
//	topic.creation.groups=compacted
//	topic.creation.default.replication.factor=1     (required, -1 = broker default)
//	topic.creation.default.partitions=3             (required, -1 = broker default)
//	topic.creation.default.cleanup.policy=delete    (any topic config)
//	topic.creation.compacted.include=dbserver1\.inventory\..*
//	topic.creation.compacted.exclude=.*\.orders
//	topic.creation.compacted.partitions=1           (defaults to the default group's)
//	topic.creation.compacted.cleanup.policy=compact
//
// Include and exclude are lists of regular expressions matched against the
// whole topic name (Java's Matcher.matches on the '|'-joined list; Go's RE2
// syntax here). A topic that already exists is left as it is.
//
// Without topic.creation.* keys connectd still creates each topic before
// its first record, with the broker's default partitions and replication
// factor (what the broker's auto-creation would give: see topicCreator);
// with topic.creation.enable=false it creates none and relies on the
// broker's auto-creation, as Kafka Connect does.

const (
	topicCreationPrefix       = "topic.creation."
	defaultTopicCreationGroup = "default"
)

// topicCreationGroup is one group's topic settings (Kafka Connect's
// TopicCreationGroup).
type topicCreationGroup struct {
	name              string
	include, exclude  *regexp.Regexp
	partitions        int32 // -1 = broker default
	replicationFactor int16 // -1 = broker default
	configs           map[string]*string
}

func (g *topicCreationGroup) matches(topic string) bool {
	return g.include.MatchString(topic) && !g.exclude.MatchString(topic)
}

// topicCreation is a connector's topic creation rules; nil = the
// connector uses none (topics get the broker's defaults).
type topicCreation struct {
	// disabled: the worker's topic.creation.enable=false; no topic is
	// created.
	disabled bool
	groups   []*topicCreationGroup // in topic.creation.groups order
	def      *topicCreationGroup
}

// groupFor returns the group whose settings topic is created with
// (TopicCreation.findFirstGroup).
func (tc *topicCreation) groupFor(topic string) *topicCreationGroup {
	for _, g := range tc.groups {
		if g.matches(topic) {
			return g
		}
	}
	return tc.def
}

// usesTopicCreation reports whether cfg has any topic.creation.* key
// (SourceConnectorConfig.usesTopicCreation, given the worker enables it).
func usesTopicCreation(cfg map[string]string) bool {
	for k := range cfg {
		if strings.HasPrefix(k, topicCreationPrefix) {
			return true
		}
	}
	return false
}

func topicCreationEnabled(worker WorkerConfig) bool {
	return !strings.EqualFold(strings.TrimSpace(worker.Get("topic.creation.enable")), "false")
}

// anchoredList compiles a list of regular expressions as one that must
// match a whole name; an empty list matches only "" (as Java's
// Pattern.compile("").matcher(name).matches()).
func anchoredList(v string) (*regexp.Regexp, error) {
	return regexp.Compile("^(?:" + strings.Join(splitList(v), "|") + ")$")
}

// topicCreationOf returns cfg's topic creation rules (cfg validated and
// resolved): nil when it has no topic.creation.* key and the worker
// enables topic creation. Errors: a value that does not parse.
func topicCreationOf(worker WorkerConfig, cfg map[string]string) (*topicCreation, error) {
	if !topicCreationEnabled(worker) {
		return &topicCreation{disabled: true}, nil
	}
	if !usesTopicCreation(cfg) {
		return nil, nil
	}
	def, err := topicCreationGroupOf(cfg, defaultTopicCreationGroup, nil)
	if err != nil {
		return nil, err
	}
	tc := &topicCreation{def: def}
	seen := map[string]bool{defaultTopicCreationGroup: true}
	for _, name := range splitList(cfg["topic.creation.groups"]) {
		if seen[name] {
			continue // the default group is always last; aliases are distinct
		}
		seen[name] = true
		g, err := topicCreationGroupOf(cfg, name, def)
		if err != nil {
			return nil, err
		}
		tc.groups = append(tc.groups, g)
	}
	return tc, nil
}

// topicCreationGroupOf reads group name's keys; def (nil for the default
// group itself) gives the partitions and replication factor it lacks. The
// default group matches every topic (its include/exclude are ignored, as
// in SourceConnectorConfig).
func topicCreationGroupOf(cfg map[string]string, name string, def *topicCreationGroup) (*topicCreationGroup, error) {
	prefix := topicCreationPrefix + name + "."
	g := &topicCreationGroup{name: name, configs: map[string]*string{}}
	if def != nil {
		g.partitions, g.replicationFactor = def.partitions, def.replicationFactor
	}
	num := func(key string, bits int) (int64, bool, error) {
		v, ok := cfg[prefix+key]
		if !ok {
			if def == nil {
				return 0, false, fmt.Errorf("%s", connect.MissingMessage(prefix+key))
			}
			return 0, false, nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, bits)
		if err != nil || (n != -1 && n < 1) {
			return 0, false, fmt.Errorf("Invalid value %s for configuration %s%s: Value must be -1 or at least 1", v, prefix, key)
		}
		return n, true, nil
	}
	if n, ok, err := num("partitions", 32); err != nil {
		return nil, err
	} else if ok {
		g.partitions = int32(n)
	}
	if n, ok, err := num("replication.factor", 16); err != nil {
		return nil, err
	} else if ok {
		g.replicationFactor = int16(n)
	}
	var err error
	if def == nil {
		g.include, g.exclude = regexp.MustCompile(`^(?s:.*)$`), regexp.MustCompile(`^$`)
	} else {
		if g.include, err = anchoredList(cfg[prefix+"include"]); err != nil {
			return nil, fmt.Errorf("Invalid value %s for configuration %sinclude: %v", cfg[prefix+"include"], prefix, err)
		}
		if g.exclude, err = anchoredList(cfg[prefix+"exclude"]); err != nil {
			return nil, fmt.Errorf("Invalid value %s for configuration %sexclude: %v", cfg[prefix+"exclude"], prefix, err)
		}
	}
	for k, v := range cfg {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		switch rest := strings.TrimPrefix(k, prefix); rest {
		case "include", "exclude", "partitions", "replication.factor":
		default:
			v := v
			g.configs[rest] = &v
		}
	}
	return g, nil
}

// topicCreationKeys are the keys SourceConnectorConfig.enrich adds for
// validation when the worker enables topic creation and cfg uses it: the
// default group's (replication factor and partitions required; group
// "default: default"), then each alias's (group "Topic Creation: <alias>:
// Topic Creation: <alias>", as ConfigDef.embed names them).
func topicCreationKeys(worker WorkerConfig, cfg map[string]string) []connect.ConfigKey {
	if !topicCreationEnabled(worker) || !usesTopicCreation(cfg) {
		return nil
	}
	minusOneOrPositive := func(v string) string {
		n, err := strconv.ParseInt(v, 10, 32)
		if err == nil && n != -1 && n < 1 {
			return "Value must be -1 or at least 1"
		}
		return ""
	}
	regexList := func(v string) string {
		if _, err := anchoredList(v); err != nil {
			return err.Error()
		}
		return ""
	}
	const (
		rfDoc = "The replication factor for new topics created for this connector. This value must not be larger than the number of " +
			"brokers in the Kafka cluster, or otherwise an error will be thrown when the connector will attempt to create a topic. For the " +
			"default group this configuration is required. For any other group defined in topic.creation.groups this config is optional " +
			"and if it's missing it gets the value the default group"
		partDoc = "The number of partitions new topics created for this connector. For the default group this configuration is required. " +
			"For any other group defined in topic.creation.groups this config is optional and if it's missing it gets the value the default group"
		inclDoc = "A list of strings that represent regular expressions that may match topic names. This list is used to include topics " +
			"that match their values and apply this group's specific configuration to the topics that match this inclusion list. $alias " +
			"applies to any group defined in topic.creation.groups but not the default"
		exclDoc = "A list of strings that represent regular expressions that may match topic names. This list is used to exclude topics " +
			"that match their values and refrain from applying this group's specific configuration to the topics that match this " +
			"exclusion list. $alias applies to any group defined in topic.creation.groups but not the default. Note that exclusion rules " +
			"have precedent and override any inclusion rules for topics. "
	)
	// ConfigDef.embed(prefix, groupPrefix, 0, child): the embedded keys'
	// group is "<groupPrefix>: <child group>", their order from 0.
	group := func(name, cgroup string, rfDefault, partDefault, inclDefault *string) []connect.ConfigKey {
		p := topicCreationPrefix + name + "."
		keys := []connect.ConfigKey{
			{Name: p + "include", Type: connect.TypeList, Default: inclDefault, Importance: connect.Low, Doc: inclDoc, Group: cgroup, OrderInGroup: 1,
				Width: "LONG", DisplayName: "Inclusion Topic Pattern for " + cgroup, Validator: regexList},
			{Name: p + "exclude", Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Low, Doc: exclDoc, Group: cgroup, OrderInGroup: 2,
				Width: "LONG", DisplayName: "Exclusion Topic Pattern for " + cgroup, Validator: regexList},
			{Name: p + "replication.factor", Type: connect.TypeInt, Default: rfDefault, Importance: connect.Low, Doc: rfDoc, Group: cgroup, OrderInGroup: 3,
				Width: "LONG", DisplayName: "Replication Factor for Topics in " + cgroup, Validator: minusOneOrPositive},
			{Name: p + "partitions", Type: connect.TypeInt, Default: partDefault, Importance: connect.Low, Doc: partDoc, Group: cgroup, OrderInGroup: 4,
				Width: "LONG", DisplayName: "Partition Count for Topics in " + cgroup, Validator: minusOneOrPositive},
		}
		for i := range keys {
			keys[i].Group, keys[i].OrderInGroup = cgroup+": "+cgroup, i
		}
		return keys
	}
	keys := group(defaultTopicCreationGroup, defaultTopicCreationGroup, nil, nil, connect.Str(".*"))
	rf, part := cfg[topicCreationPrefix+"default.replication.factor"], cfg[topicCreationPrefix+"default.partitions"]
	aliases := splitList(cfg["topic.creation.groups"])
	seen := map[string]bool{}
	for _, a := range aliases {
		if seen[a] || a == defaultTopicCreationGroup {
			continue
		}
		seen[a] = true
		keys = append(keys, group(a, groupTopicCreate+": "+a, connect.Str(rf), connect.Str(part), connect.Str(""))...)
	}
	return keys
}
