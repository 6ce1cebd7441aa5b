package mariadiff

import (
	"regexp"
)

// Deviation is one known difference between connectd and Debezium's
// MariaDbConnector 3.5.0. The suite fails on a difference no deviation
// matches, and on a deviation that matched nothing in a run that included
// one of its Seeds (a deviation that no longer occurs must leave the list).
type Deviation struct {
	ID     string
	Reason string // why a user would accept it
	Doc    string // the Debezium documentation page that shows Debezium's behaviour
	// Seeds are seeds where it occurs; running one of them without a hit
	// fails the suite.
	Seeds []int64
	// Kind and Path (regular expressions; empty matches all) select the
	// diffs; Match, when set, must also hold.
	Kind, Path string
	Match      func(d *Diff) bool

	kind, path *regexp.Regexp
}

const docsMariaDB = "https://debezium.io/documentation/reference/3.5/connectors/mariadb.html"

func (v *Deviation) matches(d *Diff) bool {
	if v.kind == nil {
		v.kind = regexp.MustCompile("^(?:" + v.Kind + ")$")
		v.path = regexp.MustCompile(v.Path)
	}
	if v.Kind != "" && !v.kind.MatchString(d.Kind) {
		return false
	}
	if v.Path != "" && !v.path.MatchString(d.Path) {
		return false
	}
	return v.Match == nil || v.Match(d)
}

// Deviations is the list the suite enforces.
var Deviations = []*Deviation{}

// Classify returns the deviation that explains d, or nil.
func Classify(d *Diff) *Deviation {
	for _, v := range Deviations {
		if v.matches(d) {
			return v
		}
	}
	return nil
}
