// Package deploy holds no code: Prometheus alert rules and a Grafana
// dashboard for connectd, and the tests that check them against the
// metrics connectd exports (see README.md).
package deploy
