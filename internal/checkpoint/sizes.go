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
	// ends[i] is the number of elements and bytes up to and including runs[i], so that Sum is a
	// binary search, not a scan. Kept only beyond shortRuns runs, and behind a pointer: most
	// states have one or two, and a Layout holds one ElementSizes per state and subtask (32
	// bytes with the pointer, 48 with a slice).
	ends *[]runEnd
}

// endList is ends, nil when not kept.
func (e *ElementSizes) endList() []runEnd {
	if e.ends == nil {
		return nil
	}
	return *e.ends
}

type runEnd struct{ count, bytes int64 }

// shortRuns is the most runs scanned linearly instead of through ends.
const shortRuns = 8

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
	n := len(e.runs)
	if n > 0 && e.runs[n-1].Size == size {
		e.runs[n-1].Count += count
		if ends := e.endList(); ends != nil {
			ends[n-1].count += count
			ends[n-1].bytes += size * count
		}
		return
	}
	e.runs = append(e.runs, SizeRun{Size: size, Count: count})
	switch {
	case e.ends != nil:
		prev := (*e.ends)[n-1]
		*e.ends = append(*e.ends, runEnd{prev.count + count, prev.bytes + size*count})
	case n+1 > shortRuns:
		ends := make([]runEnd, 0, cap(e.runs))
		var end runEnd
		for _, r := range e.runs {
			end.count += r.Count
			end.bytes += r.Size * r.Count
			ends = append(ends, end)
		}
		e.ends = &ends
	}
}

// Len returns the number of elements.
func (e *ElementSizes) Len() int64 {
	if ends := e.endList(); ends != nil {
		return ends[len(ends)-1].count
	}
	var n int64
	for _, r := range e.runs {
		n += r.Count
	}
	return n
}

// Total returns the bytes of all elements.
func (e *ElementSizes) Total() int64 {
	if ends := e.endList(); ends != nil {
		return ends[len(ends)-1].bytes
	}
	var b int64
	for _, r := range e.runs {
		b += r.Size * r.Count
	}
	return b
}

// Runs returns the runs; the caller must not modify them.
func (e *ElementSizes) Runs() []SizeRun { return e.runs }

// At returns the size of element i (0-based); 0 past the end.
func (e *ElementSizes) At(i int64) int64 {
	ends := e.endList()
	if ends == nil {
		for _, r := range e.runs {
			if i < r.Count {
				return r.Size
			}
			i -= r.Count
		}
		return 0
	}
	r := sort.Search(len(ends), func(k int) bool { return ends[k].count > i })
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
	ends := e.endList()
	if ends == nil {
		var b int64
		for _, r := range e.runs {
			if n <= r.Count {
				return b + n*r.Size
			}
			b += r.Count * r.Size
			n -= r.Count
		}
		return b
	}
	r := sort.Search(len(ends), func(k int) bool { return ends[k].count >= n })
	if r == len(e.runs) {
		return ends[len(ends)-1].bytes
	}
	var start runEnd
	if r > 0 {
		start = ends[r-1]
	}
	return start.bytes + (n-start.count)*e.runs[r].Size
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
