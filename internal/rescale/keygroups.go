package rescale

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// UpperBoundMaxParallelism is Flink's KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM.
const UpperBoundMaxParallelism = 1 << 15

// DefaultMaxParallelism is the max parallelism Flink derives for a vertex of parallelism p when
// none is configured: min(max(roundUpToPowerOfTwo(p + p/2), 128), 32768).
func DefaultMaxParallelism(p int) int {
	return min(max(roundUpToPowerOfTwo(p+p/2), 128), UpperBoundMaxParallelism)
}

func roundUpToPowerOfTwo(x int) int {
	if x <= 1 {
		return 1
	}
	n := 1
	for n < x {
		n <<= 1
	}
	return n
}

// KeyGroupRangeForSubtask is KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex: the
// key groups of subtask i of p at max parallelism maxP.
func KeyGroupRangeForSubtask(maxP, p, i int) checkpoint.KeyGroupRange {
	if maxP <= 0 || p <= 0 || i < 0 || i >= p {
		return checkpoint.KeyGroupRange{}
	}
	start := (i*maxP + p - 1) / p
	end := ((i+1)*maxP - 1) / p
	return keyGroupRangeOf(start, end)
}

// OperatorIndexForKeyGroup is KeyGroupRangeAssignment.computeOperatorIndexForKeyGroup:
// kg * p / maxP.
func OperatorIndexForKeyGroup(maxP, p, kg int) int {
	return kg * p / maxP
}

// MurmurHash is Flink's MathUtils.murmurHash of an int hash code: one Murmur3-32 round, then
// fmix32, then the absolute value (MIN_VALUE maps to 0).
func MurmurHash(code int32) int32 {
	k := uint32(code)
	k *= 0xcc9e2d51
	k = k<<15 | k>>17
	k *= 0x1b873593
	h := k
	h = h<<13 | h>>19
	h = h*5 + 0xe6546b64
	h ^= 4
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	r := int32(h)
	switch {
	case r >= 0:
		return r
	case r != -1<<31:
		return -r
	}
	return 0
}

// KeyGroupForKeyHash is KeyGroupRangeAssignment.computeKeyGroupForKeyHash: the key group of a
// key whose Java hashCode is code.
func KeyGroupForKeyHash(code int32, maxP int) int {
	return int(MurmurHash(code)) % maxP
}

// keyGroupRangeOf is KeyGroupRange.of(start, end) with EMPTY for end < start.
func keyGroupRangeOf(start, end int) checkpoint.KeyGroupRange {
	if end < start {
		return checkpoint.KeyGroupRange{}
	}
	return checkpoint.KeyGroupRange{Start: start, NumKeyGroups: end - start + 1}
}

// IntersectKeyGroups is KeyGroupRange.getIntersection; the empty range when they do not overlap.
func IntersectKeyGroups(a, b checkpoint.KeyGroupRange) checkpoint.KeyGroupRange {
	if a.NumKeyGroups <= 0 || b.NumKeyGroups <= 0 {
		return checkpoint.KeyGroupRange{}
	}
	return keyGroupRangeOf(max(a.Start, b.Start), min(a.End(), b.End()))
}

// NewKeyGroupRange is KeyGroupRange.of(start, end): the inclusive range, EMPTY when end < start;
// a negative start is an error, as in Flink (IllegalArgumentException).
func NewKeyGroupRange(start, end int) (checkpoint.KeyGroupRange, error) {
	if start < 0 {
		return checkpoint.KeyGroupRange{}, fmt.Errorf("start key group must be non-negative: %d", start)
	}
	return keyGroupRangeOf(start, end), nil
}
