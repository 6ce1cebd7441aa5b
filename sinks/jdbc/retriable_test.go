package jdbc

import (
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// retriable (PostgreSQL) and retriableMySQL share retriableBy: each
// database's own errors decide by their code (PostgreSQL SQLSTATE classes
// 08/40/53/57, Appendix A of the PostgreSQL 15 manual; MySQL/MariaDB
// error numbers 1205 lock wait timeout, 1213 deadlock, 2006/2013 server
// gone / lost), and errors neither knows are retriable only when they are
// network errors.
func TestRetriableClassification(t *testing.T) {
	netErr := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
	already := &connect.RetriableError{Err: errors.New("x")}
	cases := []struct {
		name  string
		class func(error) error
		err   error
		retry bool
	}{
		{"pg deadlock 40P01", retriable, &pgconn.PgError{Code: "40P01"}, true},
		{"pg admin shutdown 57P01", retriable, fmt.Errorf("table t: %w", &pgconn.PgError{Code: "57P01"}), true},
		{"pg unique violation 23505", retriable, &pgconn.PgError{Code: "23505"}, false},
		{"pg network", retriable, netErr, true},
		{"pg closed conn", retriable, net.ErrClosed, true},
		{"pg plain", retriable, errors.New("column x: bad value"), false},
		{"mysql deadlock 1213", retriableMySQL, &mysql.MySQLError{Number: 1213}, true},
		{"mysql lock wait 1205", retriableMySQL, fmt.Errorf("table t: %w", &mysql.MySQLError{Number: 1205}), true},
		{"mysql shutdown 1053", retriableMySQL, &mysql.MySQLError{Number: 1053}, true},
		{"mysql connection killed 1927", retriableMySQL, &mysql.MySQLError{Number: 1927}, true},
		{"mysql too many connections 1040", retriableMySQL, &mysql.MySQLError{Number: 1040}, true},
		{"mysql net read error 1158", retriableMySQL, &mysql.MySQLError{Number: 1158}, true},
		{"mysql duplicate 1062", retriableMySQL, &mysql.MySQLError{Number: 1062}, false},
		{"mysql invalid conn", retriableMySQL, mysql.ErrInvalidConn, true},
		{"mysql network", retriableMySQL, netErr, true},
		{"mysql plain", retriableMySQL, errors.New("column x: bad value"), false},
	}
	for _, c := range cases {
		got := c.class(c.err)
		var re *connect.RetriableError
		if isRetry := errors.As(got, &re); isRetry != c.retry || !errors.Is(got, c.err) {
			t.Errorf("%s: got %T %v, want retriable=%v wrapping the error", c.name, got, got, c.retry)
		}
	}
	for _, class := range []func(error) error{retriable, retriableMySQL} {
		if class(nil) != nil {
			t.Error("nil is not nil")
		}
		if got := class(already); got != error(already) {
			t.Errorf("an already retriable error was wrapped again: %v", got)
		}
	}
}
