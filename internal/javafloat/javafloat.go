// Package javafloat formats floating-point numbers exactly as Java 17's
// Double.toString(double) and Float.toString(float) do (the JDK 17
// jdk.internal.math.FloatingDecimal algorithm, which Jackson uses for JSON
// numbers, so Kafka Connect's JsonConverter and Debezium print them so).
//
// Java 17's digits are not always the shortest that read back as the same
// value: Double.MIN_VALUE prints as 4.9E-324 (shortest: 5E-324), 2.0E-3 as
// 0.002, and some values get a 17th digit. The algorithm here is a port of
// FloatingDecimal.BinaryToASCIIBuffer.dtoa and getChars, with math/big in
// place of FDBigInteger (whose operations are exact, so the digits are the
// same) and Java's int/long wrap-around kept where the original relies on
// it. Java 19 and later print the shortest form; the reference peer is
// Java 17 (reference/debezium/README.md).
package javafloat

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// Format returns Double.toString(f) (bitSize 64) or Float.toString(float32(f))
// (bitSize 32): NaN, Infinity, -Infinity, 0.0, -0.0; plain notation with at
// least one fraction digit for 1e-3 <= |f| < 1e7, else d.dddE±n.
func Format(f float64, bitSize int) string {
	return string(Append(nil, f, bitSize))
}

// Append appends Format(f, bitSize) to dst.
func Append(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	var b buffer
	if bitSize == 32 {
		fb := math.Float32bits(float32(f))
		neg := fb&0x80000000 != 0
		fract := int64(fb & 0x7fffff)
		binExp := int(fb&0x7f800000) >> 23
		var nSig int
		if binExp == 0 {
			lz := bits.LeadingZeros32(uint32(fract))
			shift := lz - 8
			fract <<= shift
			binExp = 1 - shift
			nSig = 32 - lz
		} else {
			fract |= 0x800000
			nSig = 24
		}
		binExp -= 127
		b.neg = neg
		b.dtoa(binExp, fract<<29, nSig)
	} else {
		db := math.Float64bits(f)
		neg := db&(1<<63) != 0
		fract := int64(db & (1<<52 - 1))
		binExp := int(db >> 52 & 0x7ff)
		var nSig int
		if binExp == 0 {
			lz := bits.LeadingZeros64(uint64(fract))
			shift := lz - 11
			fract <<= shift
			binExp = 1 - shift
			nSig = 64 - lz
		} else {
			fract |= 1 << 52
			nSig = 53
		}
		binExp -= 1023
		b.neg = neg
		b.dtoa(binExp, fract, nSig)
	}
	return b.appendChars(dst)
}

// buffer is BinaryToASCIIBuffer's state: the digits (ASCII), the decimal
// exponent (value = 0.d1d2… × 10^decExp) and the sign.
type buffer struct {
	neg      bool
	decExp   int
	digits   [20]byte
	first, n int
}

var insignificantDigitsNumber = [...]int{0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6,
	7, 7, 7, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15, 15,
	16, 16, 16, 17, 17, 17, 18, 18, 18, 19}

// n5Bits[i] is the number of bits of 5^i.
var n5Bits = [...]int{0, 3, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28, 31, 33, 35, 38, 40, 42, 45, 47, 49, 52, 54, 56, 59, 61}

// long5Pow[i] = 5^i (i < 27), small5Pow[i] = 5^i (i < 14).
var long5Pow, small5Pow [27]int64

func init() {
	p := int64(1)
	for i := range long5Pow {
		long5Pow[i] = p
		if i < 14 {
			small5Pow[i] = p
		}
		p *= 5
	}
}

func insignificantDigitsForPow2(p2 int) int {
	if p2 > 1 && p2 < len(insignificantDigitsNumber) {
		return insignificantDigitsNumber[p2]
	}
	return 0
}

// developLongDigits writes the digits of an integer value (the fast path).
func (b *buffer) developLongDigits(decExp int, lvalue int64, insignificant int) {
	if insignificant != 0 {
		pow10 := long5Pow[insignificant] << insignificant
		residue := lvalue % pow10
		lvalue /= pow10
		decExp += insignificant
		if residue >= pow10>>1 {
			lvalue++
		}
	}
	d := len(b.digits) - 1
	c := lvalue % 10
	lvalue /= 10
	for c == 0 {
		decExp++
		c = lvalue % 10
		lvalue /= 10
	}
	for lvalue != 0 {
		b.digits[d] = byte('0' + c)
		d--
		decExp++
		c = lvalue % 10
		lvalue /= 10
	}
	b.digits[d] = byte('0' + c)
	b.decExp = decExp + 1
	b.first = d
	b.n = len(b.digits) - d
}

// estimateDecExp is FloatingDecimal's estimate of floor(log10(value)).
func estimateDecExp(fractBits int64, binExp int) int {
	d2 := math.Float64frombits(0x3ff0000000000000 | uint64(fractBits)&(1<<52-1))
	d := (d2-1.5)*0.289529654 + 0.176091259 + float64(binExp)*0.301029995663981
	dBits := math.Float64bits(d)
	exponent := int(dBits>>52&0x7ff) - 1023
	negative := dBits&(1<<63) != 0
	switch {
	case exponent >= 0 && exponent < 52:
		mask := uint64(1<<52-1) >> exponent
		r := int((dBits&(1<<52-1) | 1<<52) >> (52 - exponent))
		if negative {
			if mask&dBits == 0 {
				return -r
			}
			return -r - 1
		}
		return r
	case exponent < 0:
		if dBits&^(1<<63) == 0 || !negative {
			return 0
		}
		return -1
	}
	return int(d)
}

func (b *buffer) dtoa(binExp int, fractBits int64, nSignificantBits int) {
	tailZeros := bits.TrailingZeros64(uint64(fractBits))
	nFractBits := 53 - tailZeros
	nTinyBits := nFractBits - binExp - 1
	if nTinyBits < 0 {
		nTinyBits = 0
	}
	if binExp <= 62 && binExp >= -21 && nTinyBits < len(long5Pow) && nFractBits+n5Bits[nTinyBits] < 64 && nTinyBits == 0 {
		// an integer that fits a long
		insignificant := 0
		if binExp > nSignificantBits {
			insignificant = insignificantDigitsForPow2(binExp - nSignificantBits - 1)
		}
		if binExp >= 52 {
			fractBits <<= binExp - 52
		} else {
			fractBits = int64(uint64(fractBits) >> (52 - binExp))
		}
		b.developLongDigits(0, fractBits, insignificant)
		return
	}
	decExp := estimateDecExp(fractBits, binExp)
	B5 := max(0, -decExp)
	B2 := B5 + nTinyBits + binExp
	S5 := max(0, decExp)
	S2 := S5 + nTinyBits
	M2 := B2 - nSignificantBits
	fractBits = int64(uint64(fractBits) >> tailZeros)
	B2 -= nFractBits - 1
	common2 := min(B2, S2)
	B2 -= common2
	S2 -= common2
	M2 -= common2
	if nFractBits == 1 {
		M2--
	}
	if M2 < 0 {
		B2 -= M2
		S2 -= M2
		M2 = 0
	}
	bBits := nFractBits + B2
	if B5 < len(n5Bits) {
		bBits += n5Bits[B5]
	} else {
		bBits += B5 * 3
	}
	tenSBits := S2 + 1
	if S5+1 < len(n5Bits) {
		tenSBits += n5Bits[S5+1]
	} else {
		tenSBits += (S5 + 1) * 3
	}
	nd := 0
	var low, high bool
	var lowDigitDiff int64
	compatible := func() {
		if decExp < -3 || decExp >= 8 {
			low, high = false, false
		}
	}
	switch {
	case bBits >= 64 || tenSBits >= 64:
		S := pow52(S5, S2)
		B := pow52(B5, B2)
		B.Mul(B, big.NewInt(fractBits))
		M := pow52(B5+1, M2+1)
		tenS := pow52(S5+1, S2+1)
		q, r := new(big.Int), new(big.Int)
		sum := new(big.Int)
		step := func() int {
			q.QuoRem(B, S, r)
			B.Mul(r, big.NewInt(10))
			return int(q.Int64())
		}
		qd := step()
		low = B.Cmp(M) < 0
		high = tenS.Cmp(sum.Add(B, M)) <= 0
		if qd == 0 && !high {
			decExp--
		} else {
			b.digits[nd] = byte('0' + qd)
			nd++
		}
		compatible()
		for !low && !high {
			qd = step()
			M.Mul(M, big.NewInt(10))
			low = B.Cmp(M) < 0
			high = tenS.Cmp(sum.Add(B, M)) <= 0
			b.digits[nd] = byte('0' + qd)
			nd++
		}
		if high && low {
			B.Lsh(B, 1)
			lowDigitDiff = int64(B.Cmp(tenS))
		}
	case bBits < 32 && tenSBits < 32:
		// Java int arithmetic (wraps at 32 bits)
		bv := int32(int32(fractBits)*int32(small5Pow[B5])) << B2
		s := int32(small5Pow[S5]) << S2
		m := int32(small5Pow[B5]) << M2
		tens := s * 10
		qd := bv / s
		bv = 10 * (bv % s)
		m *= 10
		low = bv < m
		high = bv+m > tens
		if qd == 0 && !high {
			decExp--
		} else {
			b.digits[nd] = byte('0' + qd)
			nd++
		}
		compatible()
		for !low && !high {
			qd = bv / s
			bv = 10 * (bv % s)
			m *= 10
			if m > 0 {
				low = bv < m
				high = bv+m > tens
			} else {
				low, high = true, true
			}
			b.digits[nd] = byte('0' + qd)
			nd++
		}
		lowDigitDiff = int64(bv<<1 - tens)
	default:
		bv := fractBits * long5Pow[B5] << B2
		s := long5Pow[S5] << S2
		m := long5Pow[B5] << M2
		tens := s * 10
		qd := int(bv / s)
		bv = 10 * (bv % s)
		m *= 10
		low = bv < m
		high = bv+m > tens
		if qd == 0 && !high {
			decExp--
		} else {
			b.digits[nd] = byte('0' + qd)
			nd++
		}
		compatible()
		for !low && !high {
			qd = int(bv / s)
			bv = 10 * (bv % s)
			m *= 10
			if m > 0 {
				low = bv < m
				high = bv+m > tens
			} else {
				low, high = true, true
			}
			b.digits[nd] = byte('0' + qd)
			nd++
		}
		lowDigitDiff = bv<<1 - tens
	}
	b.decExp = decExp + 1
	b.first = 0
	b.n = nd
	if high {
		if low {
			if lowDigitDiff == 0 {
				if b.digits[b.first+b.n-1]&1 != 0 {
					b.roundup()
				}
			} else if lowDigitDiff > 0 {
				b.roundup()
			}
		} else {
			b.roundup()
		}
	}
}

// pow52 is 5^p5 × 2^p2.
func pow52(p5, p2 int) *big.Int {
	v := new(big.Int).Exp(big.NewInt(5), big.NewInt(int64(p5)), nil)
	return v.Lsh(v, uint(p2))
}

func (b *buffer) roundup() {
	i := b.first + b.n - 1
	q := b.digits[i]
	if q == '9' {
		for q == '9' && i > b.first {
			b.digits[i] = '0'
			i--
			q = b.digits[i]
		}
		if q == '9' {
			b.decExp++
			b.digits[b.first] = '1'
			return
		}
	}
	b.digits[i] = q + 1
}

// appendChars is getChars: Java's Double.toString layout of the digits.
func (b *buffer) appendChars(dst []byte) []byte {
	if b.neg {
		dst = append(dst, '-')
	}
	digits := b.digits[b.first : b.first+b.n]
	switch {
	case b.decExp > 0 && b.decExp < 8:
		n := min(b.n, b.decExp)
		dst = append(dst, digits[:n]...)
		if n < b.decExp {
			for i := 0; i < b.decExp-n; i++ {
				dst = append(dst, '0')
			}
			dst = append(dst, '.', '0')
		} else {
			dst = append(dst, '.')
			if n < b.n {
				dst = append(dst, digits[n:]...)
			} else {
				dst = append(dst, '0')
			}
		}
	case b.decExp <= 0 && b.decExp > -3:
		dst = append(dst, '0', '.')
		for i := 0; i < -b.decExp; i++ {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0], '.')
		if b.n > 1 {
			dst = append(dst, digits[1:]...)
		} else {
			dst = append(dst, '0')
		}
		dst = append(dst, 'E')
		var e int
		if b.decExp <= 0 {
			dst = append(dst, '-')
			e = -b.decExp + 1
		} else {
			e = b.decExp - 1
		}
		dst = strconv.AppendInt(dst, int64(e), 10)
	}
	return dst
}
