package rescale

import "unicode/utf16"

// JavaStringHashCode is java.lang.String.hashCode: the 31-polynomial over the UTF-16 code units,
// wrapping at 32 bits.
func JavaStringHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			h = 31*h + int32(r1)
			h = 31*h + int32(r2)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// HashMapOrder returns the names, given in insertion order, in the iteration order of a
// java.util.HashMap<String, ?> created with the default capacity (16) and load factor (0.75):
// by bucket (spread hash & (capacity-1)) at the final capacity, then by insertion order. Duplicate
// names keep their first position. Treeified buckets (8+ collisions in one bucket) are not
// emulated.
func HashMapOrder(names []string) []string {
	out := make([]string, 0, len(names))
	seen := make(map[string]struct{}, len(names))
	for _, n := range names {
		if _, ok := seen[n]; !ok {
			seen[n] = struct{}{}
			out = append(out, n)
		}
	}
	sorted := make([]string, len(out))
	for i, j := range hashMapOrder(out) {
		sorted[i] = out[j]
	}
	return sorted
}

// hashMapOrder returns the iteration order of distinct names (given in insertion order) as
// indexes into names.
func hashMapOrder(names []string) []int {
	idx := make([]int, len(names))
	for i := range idx {
		idx[i] = i
	}
	if len(names) < 2 {
		return idx
	}
	capacity := 16
	for float64(len(names)) > 0.75*float64(capacity) {
		capacity <<= 1
	}
	buckets := make([]uint32, len(names))
	for i, n := range names {
		buckets[i] = javaHashMapBucket(n, capacity)
	}
	// Stable insertion sort by bucket: name lists are short.
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && buckets[idx[j]] < buckets[idx[j-1]]; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	return idx
}

func javaHashMapBucket(name string, capacity int) uint32 {
	h := uint32(JavaStringHashCode(name))
	return (h ^ h>>16) & uint32(capacity-1)
}
