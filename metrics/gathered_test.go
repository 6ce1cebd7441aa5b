package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// gathered is a prometheus.Collector of one family of a Registry.
type gathered struct {
	r    *Registry
	name string
}

func (g *gathered) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(g, ch) }

func (g *gathered) Collect(ch chan<- prometheus.Metric) {
	all := make(chan prometheus.Metric, 256)
	go func() { collector{g.r}.Collect(all); close(all) }()
	for m := range all {
		if containsName(m.Desc().String(), g.name) {
			ch <- m
		}
	}
}

func containsName(desc, name string) bool {
	return len(desc) > 0 && (strings.Contains(desc, `fqName: "`+name+`"`))
}
