package connect

// Transformation is a single message transform (SMT), as
// org.apache.kafka.connect.transforms.Transformation: it turns one source
// record into another, or drops it.
//
// The worker configures one instance per task and alias, then calls Apply
// from the task's poll goroutine only; Close is called once when the task
// stops. Implementations need not be safe for concurrent use.
type Transformation interface {
	// Configure receives the transformation's own properties, with the
	// "transforms.<alias>." prefix removed. Errors name the offending key
	// (a ConfigError, or an error wrapping one).
	Configure(props map[string]string) error
	// Apply returns the transformed record, or nil to drop it. It may return
	// r itself when nothing changes, and must not modify r in place when it
	// returns a different record. An error fails the record (the worker's
	// errors.tolerance decides what happens next).
	Apply(r *SourceRecord) (*SourceRecord, error)
	// Config returns the definition of every key Configure accepts.
	Config() *ConfigDef
	// Close releases any resources.
	Close()
}

// Predicate decides whether a transformation applies to a record, as
// org.apache.kafka.connect.transforms.predicates.Predicate.
type Predicate interface {
	// Configure receives the predicate's own properties, with the
	// "predicates.<alias>." prefix removed.
	Configure(props map[string]string) error
	// Test reports whether r matches.
	Test(r *SourceRecord) bool
	// Config returns the definition of every key Configure accepts.
	Config() *ConfigDef
}
