package engine

import (
	"slices"
	"strconv"
)

// minShortID is the fewest hex digits of a short operator ID (git's default abbreviation).
const minShortID = 8

// shortIDs calls set with, for each of n operator IDs, the shortest prefix of at least minShortID
// characters that no other ID in the list shares (the whole ID when another is equal to it or
// starts with it). Reports name operators without a name or uid by it: "operator #3 (a1b2c3d4)".
//
// The cost stays near-linear for a million operators: the IDs are sorted by their first eight
// hex digits as integers, and only IDs that share those (about n²/2³³ pairs for random IDs) are
// compared as strings. IDs that are not hex fall back to sorting every ID as a string. The
// prefixes share the IDs' memory; the only allocation is 8 bytes per ID while it runs.
func shortIDs(n int, id func(int) string, set func(int, string)) {
	keys := make([]uint64, n)
	for i := range n {
		s := id(i)
		p, err := strconv.ParseUint(prefix(s, minShortID), 16, 32)
		if len(s) < minShortID || err != nil {
			shortIDsByString(n, id, set)
			return
		}
		keys[i] = p<<32 | uint64(i)
	}
	slices.Sort(keys)
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && keys[hi]>>32 == keys[lo]>>32 {
			hi++
		}
		if hi-lo == 1 {
			i := int(uint32(keys[lo]))
			set(i, id(i)[:minShortID])
		} else {
			group := make([]int, 0, hi-lo)
			for _, k := range keys[lo:hi] {
				group = append(group, int(uint32(k)))
			}
			uniquePrefixes(group, id, set)
		}
		lo = hi
	}
}

// shortIDsByString is shortIDs for IDs that are not all hex.
func shortIDsByString(n int, id func(int) string, set func(int, string)) {
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	uniquePrefixes(all, id, set)
}

// uniquePrefixes sets the short IDs of the IDs of group: one character more than the longest prefix
// it shares with a neighbour in sorted order.
func uniquePrefixes(group []int, id func(int) string, set func(int, string)) {
	slices.SortFunc(group, func(a, b int) int {
		switch x, y := id(a), id(b); {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	for k, i := range group {
		s := id(i)
		n := minShortID
		if k > 0 {
			n = max(n, commonPrefix(s, id(group[k-1]))+1)
		}
		if k+1 < len(group) {
			n = max(n, commonPrefix(s, id(group[k+1]))+1)
		}
		set(i, prefix(s, n))
	}
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func prefix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	return s[:n]
}
