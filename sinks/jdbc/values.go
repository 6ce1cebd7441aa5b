package jdbc

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// Debezium's semantic type names (io.debezium.time.*, io.debezium.data.*).
const (
	dbzDate                 = "io.debezium.time.Date"
	dbzTime                 = "io.debezium.time.Time"
	dbzMicroTime            = "io.debezium.time.MicroTime"
	dbzNanoTime             = "io.debezium.time.NanoTime"
	dbzTimestamp            = "io.debezium.time.Timestamp"
	dbzMicroTimestamp       = "io.debezium.time.MicroTimestamp"
	dbzNanoTimestamp        = "io.debezium.time.NanoTimestamp"
	dbzZonedTimestamp       = "io.debezium.time.ZonedTimestamp"
	dbzZonedTime            = "io.debezium.time.ZonedTime"
	dbzMicroDuration        = "io.debezium.time.MicroDuration"
	dbzVariableScaleDecimal = "io.debezium.data.VariableScaleDecimal"
	dbzJSON                 = "io.debezium.data.Json"
	dbzUUID                 = "io.debezium.data.Uuid"
	dbzEnum                 = "io.debezium.data.Enum"
	dbzXML                  = "io.debezium.data.Xml"
	dbzBits                 = "io.debezium.data.Bits"
)

// textValue renders v (of schema s) as the text a database parses for
// the column type columnType(s): decimal integers, shortest floats,
// true/false, dates as 2006-01-02, times as 15:04:05.999999,
// timestamps without zone as 2006-01-02 15:04:05.999999 (Debezium's
// Timestamp/MicroTimestamp/NanoTimestamp are wall-clock values encoded as
// UTC), ZonedTimestamp as Debezium's ISO-8601 string, decimals in plain
// notation, bytes as lower-case hex, JSON/UUID/enum as their strings and
// arrays/maps/structs as JSON. ok=false for a null.
func textValue(s *connect.Schema, v any) (string, bool, error) {
	if v == nil {
		return "", false, nil
	}
	switch s.Name {
	case dbzDate:
		n, _ := asInt(v)
		return time.Unix(n*86400, 0).UTC().Format("2006-01-02"), true, nil
	case connect.DateName:
		return v.(time.Time).UTC().Format("2006-01-02"), true, nil
	case dbzTime, dbzMicroTime, dbzNanoTime:
		n, _ := asInt(v)
		d := map[string]time.Duration{dbzTime: time.Millisecond, dbzMicroTime: time.Microsecond, dbzNanoTime: time.Nanosecond}[s.Name]
		return timeOfDay(time.Duration(n) * d), true, nil
	case connect.TimeName:
		t := v.(time.Time).UTC()
		return t.Format("15:04:05.999999"), true, nil
	case dbzTimestamp, dbzMicroTimestamp, dbzNanoTimestamp:
		n, _ := asInt(v)
		var t time.Time
		switch s.Name {
		case dbzTimestamp:
			t = time.UnixMilli(n)
		case dbzMicroTimestamp:
			t = time.UnixMicro(n)
		default:
			t = time.Unix(0, n)
		}
		return t.UTC().Format("2006-01-02 15:04:05.999999"), true, nil
	case connect.TimestampName:
		return v.(time.Time).UTC().Format("2006-01-02 15:04:05.999999"), true, nil
	case connect.DecimalName:
		d, ok := v.(connect.Decimal)
		if !ok {
			return "", false, fmt.Errorf("%T is not a Decimal", v)
		}
		return decimalText(d.Unscaled, d.Scale), true, nil
	case dbzVariableScaleDecimal:
		st, ok := v.(*connect.Struct)
		if !ok {
			return "", false, fmt.Errorf("%T is not a VariableScaleDecimal", v)
		}
		sc, _ := asInt(st.Get("scale"))
		raw, _ := st.Get("value").([]byte)
		return decimalText(fromTwosComplement(raw), int(sc)), true, nil
	case dbzMicroDuration:
		n, _ := asInt(v)
		return fmt.Sprintf("%d microseconds", n), true, nil
	}
	switch x := v.(type) {
	case string:
		return x, true, nil
	case bool:
		return strconv.FormatBool(x), true, nil
	case int8, int16, int32, int64, int:
		n, _ := asInt(x)
		return strconv.FormatInt(n, 10), true, nil
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), true, nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true, nil
	case []byte:
		return hex.EncodeToString(x), true, nil
	case *connect.Struct, []any, map[string]any:
		b, err := json.Marshal(plain(x))
		return string(b), true, err
	}
	return fmt.Sprint(v), true, nil
}

// plain turns Connect data into values encoding/json renders.
func plain(v any) any {
	switch x := v.(type) {
	case *connect.Struct:
		m := map[string]any{}
		for i, f := range x.Schema.Fields {
			m[f.Name] = plain(x.Values[i])
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = plain(x[i])
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = plain(e)
		}
		return out
	case connect.Decimal:
		return json.Number(decimalText(x.Unscaled, x.Scale))
	}
	return v
}

func timeOfDay(d time.Duration) string {
	t := time.Unix(0, 0).UTC().Add(d)
	if d >= 24*time.Hour {
		return "24:00:00"
	}
	return t.Format("15:04:05.999999")
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}

func decimalText(unscaled *big.Int, scale int) string {
	if unscaled == nil {
		return "0"
	}
	if scale <= 0 {
		return new(big.Int).Mul(unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil)).String()
	}
	digits := unscaled.String()
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	out := digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	if neg {
		return "-" + out
	}
	return out
}

// fromTwosComplement decodes Java's BigInteger.toByteArray.
func fromTwosComplement(b []byte) *big.Int {
	x := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return x
}
