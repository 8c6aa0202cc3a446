package checkpoint

import (
	"sort"
	"strconv"
)

// ElementSizes is a run-length encoding of list-element sizes in stream order. Flink's list
// elements are usually of equal size (one split, one offset map, one file list per element), so a
// state with millions of elements typically needs a handful of runs.
type ElementSizes struct {
	// one holds the run of a state whose elements are all of one size, the usual case, so
	// that its sizes need no allocation of their own: a Layout holds one ElementSizes per state
	// and subtask (bench/README.md, "Many state names, round 4"). Zero when more is set.
	one [1]SizeRun
	// more holds the runs of a state of two sizes or more.
	more *moreRuns
}

// moreRuns is an ElementSizes of two runs or more.
type moreRuns struct {
	runs []SizeRun
	// ends[i] is the number of elements and bytes up to and including runs[i], so that Sum is a
	// binary search, not a scan. Kept only beyond shortRuns runs.
	ends []runEnd
}

// endList is the runs' ends, nil when not kept.
func (e *ElementSizes) endList() []runEnd {
	if e.more == nil {
		return nil
	}
	return e.more.ends
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
	if e.more == nil {
		switch {
		case e.one[0].Count == 0:
			e.one[0] = SizeRun{Size: size, Count: count}
			return
		case e.one[0].Size == size:
			e.one[0].Count += count
			return
		}
		e.more = &moreRuns{runs: append(make([]SizeRun, 0, 2), e.one[0])}
		e.one[0] = SizeRun{}
	}
	m := e.more
	n := len(m.runs)
	if n > 0 && m.runs[n-1].Size == size {
		m.runs[n-1].Count += count
		if m.ends != nil {
			m.ends[n-1].count += count
			m.ends[n-1].bytes += size * count
		}
		return
	}
	m.runs = append(m.runs, SizeRun{Size: size, Count: count})
	switch {
	case m.ends != nil:
		prev := m.ends[n-1]
		m.ends = append(m.ends, runEnd{prev.count + count, prev.bytes + size*count})
	case n+1 > shortRuns:
		m.ends = make([]runEnd, 0, cap(m.runs))
		var end runEnd
		for _, r := range m.runs {
			end.count += r.Count
			end.bytes += r.Size * r.Count
			m.ends = append(m.ends, end)
		}
	}
}

// Len returns the number of elements.
func (e *ElementSizes) Len() int64 {
	if ends := e.endList(); ends != nil {
		return ends[len(ends)-1].count
	}
	var n int64
	for _, r := range e.Runs() {
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
	for _, r := range e.Runs() {
		b += r.Size * r.Count
	}
	return b
}

// Runs returns the runs; the caller must not modify them.
func (e *ElementSizes) Runs() []SizeRun {
	switch {
	case e.more != nil:
		return e.more.runs
	case e.one[0].Count > 0:
		return e.one[:]
	}
	return nil
}

// At returns the size of element i (0-based); 0 past the end.
func (e *ElementSizes) At(i int64) int64 {
	ends, runs := e.endList(), e.Runs()
	if ends == nil {
		for _, r := range runs {
			if i < r.Count {
				return r.Size
			}
			i -= r.Count
		}
		return 0
	}
	r := sort.Search(len(ends), func(k int) bool { return ends[k].count > i })
	if r == len(runs) {
		return 0
	}
	return runs[r].Size
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
	runs := e.Runs()
	if n <= 0 || len(runs) == 0 {
		return 0
	}
	ends := e.endList()
	if ends == nil {
		var b int64
		for _, r := range runs {
			if n <= r.Count {
				return b + n*r.Size
			}
			b += r.Count * r.Size
			n -= r.Count
		}
		return b
	}
	r := sort.Search(len(ends), func(k int) bool { return ends[k].count >= n })
	if r == len(runs) {
		return ends[len(ends)-1].bytes
	}
	var start runEnd
	if r > 0 {
		start = ends[r-1]
	}
	return start.bytes + (n-start.count)*runs[r].Size
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
