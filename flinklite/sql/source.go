package sql

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
)

// SourceTable is a FROM table of a job as the source database names it:
// the table its Debezium topic captures and the columns of the topic's
// record key (the primary key, or message.key.columns).
type SourceTable struct {
	Schema, Table string
	Key           []string
}

// SourceQuery is a job's SELECT as the source database runs it (connectd
// verify --against JOB): the same SELECT list, FROM, WHERE, GROUP BY and
// HAVING over the source tables, with the expressions of the result's
// unique key first.
type SourceQuery struct {
	// Text is the SELECT: KeyValues key columns, then the job's Columns
	// in order, in PostgreSQL's dialect: identifiers in double quotes,
	// MySQL's CAST types as PostgreSQL's (postgresCasts).
	Text string
	// KeyValues is how many of Text's first columns make the key.
	KeyValues int
	// Columns are the job's result columns (Query.Columns).
	Columns []string

	key func(vals []any) any
}

// Key is the result key of a source row, from its first KeyValues values,
// in the structure of the job's upsert topic key (its JSON object): the
// GROUP BY values by key column ({"region":"north"}), {} for an aggregate
// without GROUP BY, the source's record key for a projection of one table
// ({"id":1}), the record keys by alias for a join ({"o":{"id":1},"c":null}:
// null for the side a LEFT JOIN extends with NULLs).
func (s *SourceQuery) Key(vals []any) any { return s.key(vals[:s.KeyValues]) }

// ErrSourceQuery: a job whose query cannot be run on the source database
// (verify says what cannot be checked).
var ErrSourceQuery = errors.New("the job's query cannot be run on the source database")

// SourceQuery rewrites the job's SELECT for the source database: each
// FROM topic becomes the table resolve returns for it (keeping the name
// the query refers to it by as its alias), and the result's key
// expressions are put first (the GROUP BY expressions, or each source's
// record key columns). Errors (wrapping ErrSourceQuery): a UNION ALL (its
// branches' keys are not one row shape yet), resolve's.
func (q *Query) SourceQuery(resolve func(topic string) (SourceTable, error)) (*SourceQuery, error) {
	stmts, _, err := parser.New().Parse(q.SQL, "", "")
	if err != nil || len(stmts) != 1 {
		return nil, fmt.Errorf("%w: parsing it again: %v", ErrSourceQuery, err)
	}
	stmt := stmts[0]
	if ex, ok := stmt.(*ast.ExplainStmt); ok {
		stmt = ex.Stmt
	}
	var sel ast.ResultSetNode
	switch s := stmt.(type) {
	case *ast.SelectStmt:
		sel = s
	case *ast.SetOprStmt:
		sel = s
	case *ast.CreateTableStmt:
		sel = s.Select
	case *ast.InsertStmt:
		sel = s.Select
	}
	s, ok := sel.(*ast.SelectStmt)
	if !ok || q.plan == nil {
		return nil, fmt.Errorf("%w: a UNION ALL (each branch has a key of its own) cannot be compared yet", ErrSourceQuery)
	}
	// FROM: the topics become the source tables.
	tables := map[string]SourceTable{} // by alias
	var walk func(n ast.ResultSetNode) error
	walk = func(n ast.ResultSetNode) error {
		switch x := n.(type) {
		case *ast.Join:
			if err := walk(x.Left); err != nil {
				return err
			}
			if x.Right != nil {
				return walk(x.Right)
			}
		case *ast.TableSource:
			tn, ok := x.Source.(*ast.TableName)
			if !ok {
				return fmt.Errorf("%w: a FROM item that is not a table", ErrSourceQuery)
			}
			name := tableName(tn)
			topic := ""
			alias := x.AsName.O
			if alias == "" {
				alias = tn.Name.O
			}
			for _, sl := range q.slots {
				if sl.alias == alias && sl.table == name {
					topic = sl.topic
				}
			}
			if topic == "" {
				return fmt.Errorf("%w: FROM %s is not one of the job's sources", ErrSourceQuery, name)
			}
			st, err := resolve(topic)
			if err != nil {
				return err
			}
			tables[alias] = st
			x.AsName = ast.NewCIStr(alias)
			tn.Schema, tn.Name = ast.NewCIStr(st.Schema), ast.NewCIStr(st.Table)
		default:
			return fmt.Errorf("%w: unexpected FROM item %T", ErrSourceQuery, n)
		}
		return nil
	}
	if s.From == nil {
		return nil, fmt.Errorf("%w: no FROM", ErrSourceQuery)
	}
	if err := walk(s.From.TableRefs); err != nil {
		return nil, err
	}
	out := &SourceQuery{Columns: q.Columns}
	var keyFields []*ast.SelectField
	col := func(alias, c string) *ast.ColumnNameExpr {
		return &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: ast.NewCIStr(alias), Name: ast.NewCIStr(c)}}
	}
	switch q.plan.kind {
	case "aggregate":
		var groups []ast.ExprNode
		if s.GroupBy != nil {
			for _, it := range s.GroupBy.Items {
				groups = append(groups, it.Expr)
			}
		}
		if len(groups) != len(q.KeyColumns) {
			return nil, fmt.Errorf("%w: %d GROUP BY expressions for the key columns %v", ErrSourceQuery, len(groups), q.KeyColumns)
		}
		for i, g := range groups {
			keyFields = append(keyFields, &ast.SelectField{Expr: g, AsName: ast.NewCIStr(fmt.Sprintf("__verify_key%d", i))})
		}
		names := q.KeyColumns
		out.key = func(vals []any) any {
			m := make(map[string]any, len(names))
			for i, n := range names {
				m[n] = vals[i]
			}
			return m
		}
	case "project":
		type part struct {
			alias string
			cols  []string
		}
		var parts []part
		for _, i := range q.plan.slots {
			alias := q.slots[i].alias
			st := tables[alias]
			if len(st.Key) == 0 {
				return nil, fmt.Errorf("%w: %s (%s.%s) has no key columns: the job's result key is its record key", ErrSourceQuery, alias, st.Schema, st.Table)
			}
			parts = append(parts, part{alias, st.Key})
			for _, c := range st.Key {
				keyFields = append(keyFields, &ast.SelectField{Expr: col(alias, c), AsName: ast.NewCIStr(fmt.Sprintf("__verify_key%d", len(keyFields)))})
			}
		}
		out.key = func(vals []any) any {
			var keys []any
			at := 0
			for _, p := range parts {
				m := make(map[string]any, len(p.cols))
				null := true
				for _, c := range p.cols {
					m[c] = vals[at]
					if vals[at] != nil {
						null = false
					}
					at++
				}
				if null {
					keys = append(keys, nil) // a LEFT JOIN's NULL side
				} else {
					keys = append(keys, m)
				}
			}
			if len(parts) == 1 {
				return keys[0]
			}
			m := make(map[string]any, len(parts))
			for i, p := range parts {
				m[p.alias] = keys[i]
			}
			return m
		}
	default:
		return nil, fmt.Errorf("%w: plan %s", ErrSourceQuery, q.plan.kind)
	}
	out.KeyValues = len(keyFields)
	s.Fields.Fields = append(keyFields, s.Fields.Fields...)
	var b strings.Builder
	// Brackets around every binary operation: MySQL's precedence is not
	// PostgreSQL's for every operator; string literals without MySQL's
	// charset introducer.
	flags := format.RestoreStringSingleQuotes | format.RestoreKeyWordUppercase | format.RestoreNameDoubleQuotes |
		format.RestoreBracketAroundBinaryOperation | format.RestoreStringWithoutCharset
	if err := s.Restore(format.NewRestoreCtx(flags, &b)); err != nil {
		return nil, fmt.Errorf("%w: writing it for the source: %v", ErrSourceQuery, err)
	}
	if out.Text, err = postgresCasts(b.String()); err != nil {
		return nil, err
	}
	return out, nil
}

// postgresCasts rewrites the CAST target types of MySQL's dialect that
// PostgreSQL reads otherwise or not at all, outside quoted strings and
// names: CHAR (in PostgreSQL character(1), a truncation) becomes TEXT,
// SIGNED BIGINT, DOUBLE DOUBLE PRECISION; UNSIGNED (no PostgreSQL type) is
// an error.
func postgresCasts(text string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(text); {
		c := text[i]
		if c == '\'' || c == '"' { // a quoted string or name: copied as is
			j := i + 1
			for j < len(text) {
				if text[j] == c {
					if j+1 < len(text) && text[j+1] == c { // doubled quote
						j += 2
						continue
					}
					break
				}
				j++
			}
			b.WriteString(text[i:min(j+1, len(text))])
			i = j + 1
			continue
		}
		replaced := false
		for _, r := range [][2]string{{" AS CHAR)", " AS TEXT)"}, {" AS SIGNED)", " AS BIGINT)"}, {" AS DOUBLE)", " AS DOUBLE PRECISION)"}, {" AS UNSIGNED)", ""}} {
			if strings.HasPrefix(text[i:], r[0]) {
				if r[1] == "" {
					return "", fmt.Errorf("%w: CAST AS UNSIGNED has no PostgreSQL type", ErrSourceQuery)
				}
				b.WriteString(r[1])
				i += len(r[0])
				replaced = true
				break
			}
		}
		if !replaced {
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}
