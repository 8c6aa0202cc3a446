package checkpoint

import (
	"sort"
	"strconv"
)

// ElementSizes is a run-length encoding of list-element sizes in stream order. Flink's list
// elements are usually of equal size (one split, one offset map, one file list per element), so a
// state with millions of elements typically needs a handful of runs.
type ElementSizes struct {
	runs []SizeRun
	// ends[i] is the number of elements and bytes up to and including runs[i]; kept beside the
	// runs so that Sum is a binary search, not a scan.
	endCount []int64
	endBytes []int64
}

// SizeRun is Count consecutive elements of Size bytes each.
type SizeRun struct {
	Size  int64
	Count int64
}

// Append adds count elements of the given size.
func (e *ElementSizes) Append(size, count int64) {
	if count <= 0 {
		return
	}
	var prevCount, prevBytes int64
	if n := len(e.runs); n > 0 {
		prevCount, prevBytes = e.endCount[n-1], e.endBytes[n-1]
		if e.runs[n-1].Size == size {
			e.runs[n-1].Count += count
			e.endCount[n-1] += count
			e.endBytes[n-1] += size * count
			return
		}
	}
	e.runs = append(e.runs, SizeRun{Size: size, Count: count})
	e.endCount = append(e.endCount, prevCount+count)
	e.endBytes = append(e.endBytes, prevBytes+size*count)
}

// Len returns the number of elements.
func (e *ElementSizes) Len() int64 {
	if len(e.runs) == 0 {
		return 0
	}
	return e.endCount[len(e.endCount)-1]
}

// Total returns the bytes of all elements.
func (e *ElementSizes) Total() int64 {
	if len(e.runs) == 0 {
		return 0
	}
	return e.endBytes[len(e.endBytes)-1]
}

// Runs returns the runs; the caller must not modify them.
func (e *ElementSizes) Runs() []SizeRun { return e.runs }

// At returns the size of element i (0-based).
func (e *ElementSizes) At(i int64) int64 {
	r := sort.Search(len(e.endCount), func(k int) bool { return e.endCount[k] > i })
	if r == len(e.runs) {
		return 0
	}
	return e.runs[r].Size
}

// Sum returns the bytes of elements [from, to).
func (e *ElementSizes) Sum(from, to int64) int64 {
	if to <= from {
		return 0
	}
	return e.prefix(to) - e.prefix(from)
}

// prefix returns the bytes of the first n elements.
func (e *ElementSizes) prefix(n int64) int64 {
	if n <= 0 || len(e.runs) == 0 {
		return 0
	}
	r := sort.Search(len(e.endCount), func(k int) bool { return e.endCount[k] >= n })
	if r == len(e.runs) {
		return e.endBytes[len(e.endBytes)-1]
	}
	startCount, startBytes := int64(0), int64(0)
	if r > 0 {
		startCount, startBytes = e.endCount[r-1], e.endBytes[r-1]
	}
	return startBytes + (n-startCount)*e.runs[r].Size
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
