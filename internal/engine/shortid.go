package engine

import (
	"slices"
	"strconv"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// minShortID is the fewest hex digits of a short operator ID (git's default abbreviation).
const minShortID = 8

// setShortIDs sets the short_id of a report's operators.
func setShortIDs(ops []*pb.OperatorAssignment) {
	for i, short := range shortIDs(len(ops), func(i int) string { return ops[i].OperatorId }) {
		ops[i].ShortId = short
	}
}

// shortIDs returns, for each of n operator IDs, the shortest prefix of at least minShortID
// characters that no other ID in the list shares (the whole ID when another is equal to it or
// starts with it). Reports name operators without a name or uid by it: "operator #3 (a1b2c3d4)".
//
// The cost stays near-linear for a million operators: the IDs are sorted by their first eight
// hex digits as integers, and only IDs that share those (about n²/2³³ pairs for random IDs) are
// compared as strings. IDs that are not hex fall back to sorting every ID as a string.
func shortIDs(n int, id func(int) string) []string {
	out := make([]string, n)
	keys := make([]uint64, n)
	for i := range n {
		s := id(i)
		p, err := strconv.ParseUint(prefix(s, minShortID), 16, 32)
		if len(s) < minShortID || err != nil {
			return shortIDsByString(n, id)
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
			out[i] = id(i)[:minShortID]
		} else {
			group := make([]int, 0, hi-lo)
			for _, k := range keys[lo:hi] {
				group = append(group, int(uint32(k)))
			}
			uniquePrefixes(group, id, out)
		}
		lo = hi
	}
	return out
}

// shortIDsByString is shortIDs for IDs that are not all hex.
func shortIDsByString(n int, id func(int) string) []string {
	out := make([]string, n)
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	uniquePrefixes(all, id, out)
	return out
}

// uniquePrefixes sets out[i] for the IDs of group: one character more than the longest prefix
// it shares with a neighbour in sorted order.
func uniquePrefixes(group []int, id func(int) string, out []string) {
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
		out[i] = prefix(s, n)
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
