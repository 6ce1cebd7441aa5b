package jdbc

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// ClassName is the connector class this package implements.
const ClassName = "io.debezium.connector.jdbc.JdbcSinkConnector"

// Aliases are the other names Kafka Connect accepts for ClassName.
var Aliases = []string{"JdbcSinkConnector", "JdbcSink"}

// DebeziumVersion is the Debezium release whose JDBC sink behaviour this
// package follows.
const DebeziumVersion = "3.6.1.Final"

// Insert modes (insert.mode).
const (
	InsertModeInsert = "insert"
	InsertModeUpsert = "upsert"
	InsertModeUpdate = "update"
)

// Primary key modes (primary.key.mode).
const (
	PKModeNone        = "none"
	PKModeKafka       = "kafka"
	PKModeRecordKey   = "record_key"
	PKModeRecordValue = "record_value"
)

// unavailableValue is Debezium's unavailable.value.placeholder default:
// the value of a TOASTed (PostgreSQL) column that an update did not carry.
const unavailableValue = "__debezium_unavailable_value"

// The columns of primary.key.mode=kafka (Debezium's JDBC sink).
const (
	kafkaTopicColumn     = "__connect_topic"
	kafkaPartitionColumn = "__connect_partition"
	kafkaOffsetColumn    = "__connect_offset"
)

// Debezium's default naming strategies, the only ones connectd has.
const (
	defaultCollectionNamingStrategy = "io.debezium.sink.naming.DefaultCollectionNamingStrategy"
	defaultColumnNamingStrategy     = "io.debezium.connector.jdbc.naming.DefaultColumnNamingStrategy"
)

// namingStrategyValidator accepts an empty value and the known classes,
// with Kafka Connect's message for any other class.
func namingStrategyValidator(known ...string) func(string) string {
	return func(v string) string {
		v = strings.TrimSpace(v)
		for _, k := range known {
			if v == "" || v == k {
				return ""
			}
		}
		return "Class " + v + " could not be found."
	}
}

func boolValidator(v string) string {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "false":
		return ""
	}
	return "Expected value to be either true or false"
}

func urlValidator(v string) string {
	if _, _, err := parseJDBCURL(v); err != nil {
		return err.Error()
	}
	return ""
}

var configDef = func() *connect.ConfigDef {
	d := connect.NewConfigDef()
	g := "Connection"
	d.Define(connect.ConfigKey{Name: "connection.url", Type: connect.TypeString, Importance: connect.High, Group: g,
		Doc: "Valid JDBC URL: jdbc:postgresql://host:port/db, jdbc:mysql://host:port/db or jdbc:mariadb://host:port/db.", Validator: urlValidator})
	d.Define(connect.ConfigKey{Name: "connection.username", Type: connect.TypeString, Default: connect.Str(""), Importance: connect.High, Group: g,
		Doc: "Name of the database user to be used when connecting to the connection."})
	d.Define(connect.ConfigKey{Name: "connection.password", Type: connect.TypePassword, Default: connect.Str(""), Importance: connect.High, Group: g,
		Doc: "Password to be used when connecting to the connection."})
	// Debezium's JDBC sink hands these to its c3p0 pool; a connectd task
	// writes through one connection of its own, so they are accepted
	// (type-checked, shown by the validate endpoint) and otherwise unused.
	for _, k := range []struct {
		name, def, doc string
		typ            connect.ConfigType
	}{
		{"connection.pool.min_size", "5", "Minimum number of connection in the connection pool (accepted for Debezium compatibility; a connectd task uses one connection).", connect.TypeInt},
		{"connection.pool.max_size", "32", "Maximum number of connection in the connection pool (accepted for Debezium compatibility; a connectd task uses one connection).", connect.TypeInt},
		{"connection.pool.acquire_increment", "32", "Connection pool acquire increment (accepted for Debezium compatibility; a connectd task uses one connection).", connect.TypeInt},
		{"connection.pool.timeout", "1800", "Connection pool timeout in seconds (accepted for Debezium compatibility; a connectd task uses one connection).", connect.TypeLong},
	} {
		d.Define(connect.ConfigKey{Name: k.name, Type: k.typ, Default: connect.Str(k.def), Importance: connect.Low, Group: g, Doc: k.doc,
			Validator: func(v string) string {
				if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n < 0 {
					return "Value must be at least 0"
				}
				return ""
			}})
	}
	g = "Writes"
	d.Define(connect.ConfigKey{Name: "insert.mode", Type: connect.TypeString, Default: connect.Str(InsertModeInsert), Importance: connect.High, Group: g,
		Allowed: []string{InsertModeInsert, InsertModeUpsert, InsertModeUpdate},
		Doc:     "insert: INSERT every event; upsert: INSERT, or UPDATE when the primary key exists (idempotent); update: UPDATE only."})
	d.Define(connect.ConfigKey{Name: "delete.enabled", Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Medium, Group: g,
		Validator: boolValidator, Doc: "Whether to treat tombstones and op=d events as deletes. Requires primary.key.mode=record_key."})
	d.Define(connect.ConfigKey{Name: "truncate.enabled", Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Medium, Group: g,
		Validator: boolValidator, Doc: "Whether op=t (truncate) events truncate the table."})
	d.Define(connect.ConfigKey{Name: "primary.key.mode", Type: connect.TypeString, Default: connect.Str(PKModeNone), Importance: connect.Medium, Group: g,
		Allowed: []string{PKModeNone, PKModeKafka, PKModeRecordKey, PKModeRecordValue},
		Doc:     "Where the primary key columns come from: none, kafka (__connect_topic, __connect_partition, __connect_offset), record_key, record_value."})
	d.Define(connect.ConfigKey{Name: "primary.key.fields", Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Medium, Group: g,
		Doc: "Comma-separated primary key field names; empty = all key fields (record_key). Required for a primitive key."})
	d.Define(connect.ConfigKey{Name: "schema.evolution", Type: connect.TypeString, Default: connect.Str("none"), Importance: connect.Medium, Group: g,
		Allowed: []string{"none", "basic"}, Doc: "none: tables must exist; basic: create missing tables and add missing columns."})
	d.Define(connect.ConfigKey{Name: "collection.name.format", Type: connect.TypeString, Default: connect.Str("${topic}"), Importance: connect.Medium, Group: g,
		Doc: "Destination table name; placeholders ${topic}, ${source.db}, ${source.schema}, ${source.table}. Dots of the result become underscores."})
	d.Define(connect.ConfigKey{Name: "table.name.format", Type: connect.TypeString, Default: connect.Str(""), Importance: connect.Low, Group: g,
		Doc: "Name of collection.name.format before Debezium 3.0; used when collection.name.format is not set."})
	d.Define(connect.ConfigKey{Name: "batch.size", Type: connect.TypeInt, Default: connect.Str("500"), Importance: connect.Medium, Group: g,
		Validator: func(v string) string {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err != nil || n < 1 {
				return "Value must be at least 1"
			}
			return ""
		}, Doc: "Most rows written by one statement."})
	d.Define(connect.ConfigKey{Name: "use.time.zone", Type: connect.TypeString, Default: connect.Str("UTC"), Importance: connect.Medium, Group: g,
		Validator: func(v string) string {
			if _, err := time.LoadLocation(strings.TrimSpace(v)); err != nil {
				return "Unknown time zone " + v
			}
			return ""
		}, Doc: "Time zone that zoned temporal values (io.debezium.time.ZonedTimestamp) are converted to for columns without a zone (MySQL DATETIME)."})
	d.Define(connect.ConfigKey{Name: "field.include.list", Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Medium, Group: "Filters",
		Doc: "Comma-separated non-key fields to write: <field> (any topic) or <topic>:<field>; the others are left out. Not with field.exclude.list."})
	d.Define(connect.ConfigKey{Name: "field.exclude.list", Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Medium, Group: "Filters",
		Doc: "Comma-separated non-key fields not to write: <field> (any topic) or <topic>:<field>. Not with field.include.list."})
	d.Define(connect.ConfigKey{Name: "collection.naming.strategy", Type: connect.TypeClass, Default: connect.Str(defaultCollectionNamingStrategy), Importance: connect.Low, Group: g,
		Validator: namingStrategyValidator(defaultCollectionNamingStrategy, "io.debezium.connector.jdbc.naming.DefaultTableNamingStrategy"),
		Doc:       "Class that names the destination table: only Debezium's DefaultCollectionNamingStrategy (collection.name.format with dots replaced by underscores)."})
	d.Define(connect.ConfigKey{Name: "table.naming.strategy", Type: connect.TypeClass, Default: connect.Str(""), Importance: connect.Low, Group: g,
		Validator: namingStrategyValidator(defaultCollectionNamingStrategy, "io.debezium.connector.jdbc.naming.DefaultTableNamingStrategy"),
		Doc:       "Name of collection.naming.strategy before Debezium 3.0."})
	d.Define(connect.ConfigKey{Name: "column.naming.strategy", Type: connect.TypeClass, Default: connect.Str(defaultColumnNamingStrategy), Importance: connect.Low, Group: g,
		Validator: namingStrategyValidator(defaultColumnNamingStrategy),
		Doc:       "Class that names the destination columns: only Debezium's DefaultColumnNamingStrategy (the field name)."})
	d.Define(connect.ConfigKey{Name: "quote.identifiers", Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low, Group: g,
		Validator: boolValidator, Doc: "false: names are folded as the database folds unquoted names (PostgreSQL: lower case); true: names keep their case."})
	return d
}()

// config is a parsed, validated connector config.
type config struct {
	dialect         string // "postgresql" or "mysql"
	dsn             string
	user, password  string
	insertMode      string
	deleteEnabled   bool
	truncateEnabled bool
	pkMode          string
	pkFields        []string
	evolve          bool
	nameFormat      string
	batchSize       int
	zone            *time.Location
	quote           bool
	// fieldList and fieldInclude: field.include.list (fieldInclude) or
	// field.exclude.list entries, as <field> or <topic>:<field>.
	fieldList    []string
	fieldInclude bool
	// nameBySource: nameFormat has ${source.*} placeholders, so the table
	// is resolved per record rather than per topic.
	nameBySource bool
}

// writesField says whether non-key field name of a record of topic is
// written, as Debezium's FieldFilterFactory: an entry <field> matches the
// field in every topic, <topic>:<field> in that topic only (exact names);
// with field.include.list only matching fields are written, with
// field.exclude.list matching fields are left out, with neither all are.
func (c *config) writesField(topic, name string) bool {
	if len(c.fieldList) == 0 {
		return true
	}
	for _, e := range c.fieldList {
		t, f, qualified := strings.Cut(e, ":")
		if !qualified && strings.TrimSpace(e) == name || qualified && strings.TrimSpace(t) == topic && strings.TrimSpace(f) == name {
			return c.fieldInclude
		}
	}
	return !c.fieldInclude
}

func validate(cfg map[string]string) []connect.ConfigError {
	var errs []connect.ConfigError
	p := configDef.Parse(cfg)
	mode := strings.ToLower(p.String("insert.mode"))
	pk := strings.ToLower(p.String("primary.key.mode"))
	if p.Bool("delete.enabled") && pk != PKModeRecordKey {
		errs = append(errs, connect.ConfigError{Key: "delete.enabled", Message: "Invalid value true for configuration delete.enabled: Deletes require primary.key.mode=record_key"})
	}
	if (mode == InsertModeUpsert || mode == InsertModeUpdate) && pk == PKModeNone {
		errs = append(errs, connect.ConfigError{Key: "primary.key.mode", Message: fmt.Sprintf("Invalid value none for configuration primary.key.mode: insert.mode=%s requires a primary key (kafka, record_key or record_value)", mode)})
	}
	// JdbcSinkConnectorConfig.validate refuses both lists (its message
	// says column.*, the keys are field.*).
	if len(p.List("field.include.list")) > 0 && len(p.List("field.exclude.list")) > 0 {
		errs = append(errs, connect.ConfigError{Key: "field.include.list", Message: "Cannot define both field.exclude.list and field.include.list. Please specify only one."})
	}
	if pk == PKModeRecordValue && len(p.List("primary.key.fields")) == 0 {
		errs = append(errs, connect.ConfigError{Key: "primary.key.fields", Message: "Invalid value for configuration primary.key.fields: primary.key.mode=record_value requires the primary key field names"})
	}
	return errs
}

func parseConfig(cfg map[string]string) (*config, error) {
	if errs := append(configDef.Validate(cfg), validate(cfg)...); len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Key + ": " + e.Message
		}
		return nil, fmt.Errorf("invalid JDBC sink config: %s", strings.Join(msgs, "; "))
	}
	p := configDef.Parse(cfg)
	c := &config{
		user: p.String("connection.username"), password: p.String("connection.password"),
		insertMode: strings.ToLower(p.String("insert.mode")), deleteEnabled: p.Bool("delete.enabled"),
		truncateEnabled: p.Bool("truncate.enabled"), pkMode: strings.ToLower(p.String("primary.key.mode")),
		pkFields: p.List("primary.key.fields"), evolve: strings.EqualFold(p.String("schema.evolution"), "basic"),
		batchSize: p.Int("batch.size"), quote: p.Bool("quote.identifiers"),
	}
	if c.fieldList = p.List("field.exclude.list"); len(c.fieldList) == 0 {
		c.fieldList, c.fieldInclude = p.List("field.include.list"), true
	}
	c.nameFormat = p.String("collection.name.format")
	if _, set := cfg["collection.name.format"]; !set && strings.TrimSpace(cfg["table.name.format"]) != "" {
		c.nameFormat = strings.TrimSpace(cfg["table.name.format"])
	}
	c.nameBySource = strings.Contains(c.nameFormat, "${source.")
	var err error
	if c.zone, err = time.LoadLocation(p.String("use.time.zone")); err != nil {
		return nil, err
	}
	if c.dialect, c.dsn, err = parseJDBCURL(p.String("connection.url")); err != nil {
		return nil, err
	}
	return c, nil
}

// parseJDBCURL turns a JDBC URL into a dialect and a URL the Go drivers
// read: jdbc:postgresql://h:p/db?k=v → postgres://h:p/db?k=v;
// jdbc:mysql:// and jdbc:mariadb:// → host:port, database and parameters
// in a mysql:// URL (see mysqlDSN).
func parseJDBCURL(raw string) (dialect, dsn string, err error) {
	raw = strings.TrimSpace(raw)
	rest, ok := strings.CutPrefix(raw, "jdbc:")
	if !ok {
		return "", "", fmt.Errorf("Invalid value %s for configuration connection.url: a JDBC URL starts with jdbc:", raw)
	}
	u, err := url.Parse(rest)
	if err != nil || u.Host == "" {
		return "", "", fmt.Errorf("Invalid value %s for configuration connection.url: not a JDBC URL", raw)
	}
	switch u.Scheme {
	case "postgresql":
		u.Scheme = "postgres"
		return "postgresql", u.String(), nil
	case "mysql", "mariadb":
		u.Scheme = "mysql"
		return "mysql", u.String(), nil
	}
	return "", "", fmt.Errorf("Invalid value %s for configuration connection.url: unsupported database %q (postgresql, mysql, mariadb)", raw, u.Scheme)
}
