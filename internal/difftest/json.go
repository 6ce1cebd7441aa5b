package difftest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// MaskHeaders masks the run id of Debezium's context headers (random per
// connector start).
func MaskHeaders(hs []Header) []Header {
	out := make([]Header, len(hs))
	for i, h := range hs {
		if h.Key == "__debezium.context.runId" && h.Value != nil {
			star := "*"
			h.Value = &star
		}
		out[i] = h
	}
	return out
}

// AnyMap is m as an any (nil for a nil map), for JSONDiff.
func AnyMap(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// Decode parses JSON text with json.Number numbers; text that is not JSON
// is returned as the string itself.
func Decode(s string) any {
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return s
	}
	return v
}

// JSONText is v marshalled ("null" for nil).
func JSONText(v any) string {
	if v == nil {
		return "null"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// JSONDiff lists [path, got, want] of every leaf that differs ("" for an
// absent member). Array elements that are objects with a "field" name are
// addressed by it ("[name]").
func JSONDiff(path string, a, b any) [][3]string {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		ks := make([]string, 0, len(keys))
		for k := range keys {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		var out [][3]string
		for _, k := range ks {
			x, xok := av[k]
			y, yok := bv[k]
			switch {
			case !xok:
				out = append(out, [3]string{path + "." + k, "", JSONText(y)})
			case !yok:
				out = append(out, [3]string{path + "." + k, JSONText(x), ""})
			default:
				out = append(out, JSONDiff(path+"."+k, x, y)...)
			}
		}
		return out
	case []any:
		bv, ok := b.([]any)
		if !ok {
			break
		}
		if named(av) && named(bv) {
			return JSONDiff(path, byField(av), byField(bv))
		}
		if len(av) != len(bv) {
			break
		}
		var out [][3]string
		for i := range av {
			out = append(out, JSONDiff(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i])...)
		}
		return out
	default:
		if reflect.DeepEqual(a, b) {
			return nil
		}
	}
	if reflect.DeepEqual(a, b) {
		return nil
	}
	return [][3]string{{path, JSONText(a), JSONText(b)}}
}

func named(a []any) bool {
	if len(a) == 0 {
		return false
	}
	for _, e := range a {
		m, ok := e.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := m["field"].(string); !ok {
			return false
		}
	}
	return true
}

// byField turns a schema's fields array into an object keyed "[name]"
// (the field order itself is checked by the byte comparison).
func byField(a []any) map[string]any {
	out := map[string]any{}
	for _, e := range a {
		m := e.(map[string]any)
		out["["+m["field"].(string)+"]"] = m
	}
	return out
}

// Align matches two signature sequences by a longest common subsequence
// and returns the steps in order: [i, j] a matched pair, [i, -1] got[i]
// alone (extra), [-1, j] want[j] alone (missing).
func Align(got, want []string) [][2]int {
	n, m := len(got), len(want)
	l := make([][]int32, n+1)
	for i := range l {
		l[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if got[i] == want[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else if l[i+1][j] >= l[i][j+1] {
				l[i][j] = l[i+1][j]
			} else {
				l[i][j] = l[i][j+1]
			}
		}
	}
	var out [][2]int
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case got[i] == want[j]:
			out = append(out, [2]int{i, j})
			i++
			j++
		case l[i+1][j] >= l[i][j+1]:
			out = append(out, [2]int{i, -1})
			i++
		default:
			out = append(out, [2]int{-1, j})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, [2]int{i, -1})
	}
	for ; j < m; j++ {
		out = append(out, [2]int{-1, j})
	}
	return out
}

// Clip shortens s for a message ("(absent)" for "").
func Clip(s string) string {
	if s == "" {
		return "(absent)"
	}
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// Tail is the last n bytes of s.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
