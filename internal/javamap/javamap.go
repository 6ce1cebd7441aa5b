// Package javamap reproduces the iteration order of java.util.HashMap with
// String keys, which decides the byte order of the JSON Kafka Connect's
// JsonConverter writes for a Map (the offsets in connect-offsets) and the
// order of the lists Debezium builds by iterating a HashMap (the
// data_collections of a transaction END event).
//
// A HashMap built with the default constructor by put calls iterates its
// table from bucket 0 up; the bucket of a key is (h ^ h>>>16) & (capacity-1)
// with h = String.hashCode() (over UTF-16 units), and a bucket keeps its keys
// in insertion order (a resize splits a bucket without reordering it). The
// capacity starts at 16 and doubles when the size exceeds 0.75 × capacity,
// or when a bucket would hold more than 8 keys while the capacity is below
// 64 (where Java would otherwise make it a tree). Tree bins (more than 8
// keys in one bucket of a table of 64 or more) are not modelled.
package javamap

import (
	"sort"
	"unicode/utf16"
)

// StringHash is Java's String.hashCode of s (UTF-16 units).
func StringHash(s string) int32 {
	var h int32
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x80 {
			h = 31*h + int32(c)
			continue
		}
		for _, u := range utf16.Encode([]rune(s[i:])) {
			h = 31*h + int32(u)
		}
		return h
	}
	return h
}

func spread(h int32) uint32 { u := uint32(h); return u ^ u>>16 }

// Order returns keys (distinct, in the order they were put into a new
// HashMap) in the order the map iterates them. keys is not changed.
func Order(keys []string) []string {
	n := len(keys)
	if n < 2 {
		return append([]string(nil), keys...)
	}
	hs := make([]uint32, n)
	for i, k := range keys {
		hs[i] = spread(StringHash(k))
	}
	capacity := uint32(16)
	count := map[uint32]int{}
	resize := func(upTo int) {
		capacity *= 2
		clear(count)
		for j := 0; j <= upTo; j++ {
			count[hs[j]&(capacity-1)]++
		}
	}
	for i := range keys {
		b := hs[i] & (capacity - 1)
		if count[b]++; count[b] > 8 && capacity < 64 {
			resize(i) // treeifyBin on a small table resizes instead
		}
		if float64(i+1) > 0.75*float64(capacity) {
			resize(i)
		}
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return hs[idx[a]]&(capacity-1) < hs[idx[b]]&(capacity-1) })
	out := make([]string, n)
	for i, j := range idx {
		out[i] = keys[j]
	}
	return out
}
