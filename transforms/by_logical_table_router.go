package transforms

import "github.com/connectd/connectd/connect"

// ByLogicalTableRouter is io.debezium.transforms.ByLogicalTableRouter
// (Debezium 3.6 "Topic Routing",
// https://debezium.io/documentation/reference/stable/transformations/topic-routing.html),
// the class Debezium 3.6.1 ships: the same routing as ToLogicalTopicRouter
// with key.field.name defaulting to __dbz__physicalTableIdentifier and the
// cache size under logical.table.cache.size (default 16).
type ByLogicalTableRouter struct {
	logicalRouter
}

var _ connect.Transformation = (*ByLogicalTableRouter)(nil)

// Config returns the keys of the Debezium 3.6 topic routing options table.
func (t *ByLogicalTableRouter) Config() *connect.ConfigDef {
	return logicalRouterConfig("__dbz__physicalTableIdentifier", "logical.table.cache.size", "Logical table cache size")
}

// Configure reads the keys of Config.
func (t *ByLogicalTableRouter) Configure(props map[string]string) error {
	return t.configure(t.Config(), props, "logical.table.cache.size")
}
