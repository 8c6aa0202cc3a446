package rescale

import (
	"sort"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// oldEntry is one (stream, offsets) entry of a named operator state: the name's entry in one old
// subtask's handle. It holds no pointer, so that the garbage collector need not scan entries.
type oldEntry struct {
	old int32 // old subtask index; the stream id is old + stateDist.streamBase
	// sizes indexes operatorSim.sizes for entries whose elements differ in size (or are of
	// equal size that does not add up to bytes); uniformSizes when every element is bytes / n
	// bytes (none without elements); -1 when the sizes are not known.
	sizes int32
	n     int64 // elements (offsets)
	pre   int64 // elements of the name before this entry, in Flink's traversal order
	bytes int64
}

// uniformSizes is oldEntry.sizes of an entry whose elements are all bytes / n bytes: the size
// is not kept per entry, as most entries are of this kind.
const uniformSizes = -2

// uniform returns the size of every element of e when all are equal, else -1.
func uniform(sizes []*checkpoint.ElementSizes, e *oldEntry) int64 {
	switch {
	case e.sizes == uniformSizes && e.n > 0:
		return e.bytes / e.n
	case e.sizes == uniformSizes:
		return 0
	case e.sizes >= 0:
		if runs := sizes[e.sizes].Runs(); len(runs) == 1 && runs[0].Count == e.n {
			return runs[0].Size
		}
	}
	return -1
}

// sum returns the bytes of elements [from, from+count) of entry e.
func (d *stateDist) sum(e *oldEntry, from, count int64) int64 {
	switch {
	case count <= 0:
		return 0
	case count == e.n:
		return e.bytes
	case e.sizes == uniformSizes:
		return uniform(d.sizes, e) * count
	case e.sizes >= 0:
		sz := d.sizes[e.sizes]
		if runs := sz.Runs(); len(runs) <= 8 {
			return sumRuns(runs, from, from+count)
		}
		return sz.Sum(from, from+count)
	}
	// Sizes missing or inconsistent: share the bytes proportionally.
	return e.bytes*(from+count)/e.n - e.bytes*from/e.n
}

// stateDist is the working view of one named state's distribution: a temporary that
// operatorSim.dist builds from the state's stateRec (its mode, path and cursor start, and where
// its entries are in the operator's) when it is needed, and drops after. Nothing per new subtask
// is stored: SPLIT_DISTRIBUTE keeps the cursor parameters (start, base, remainder) and the
// prefix sums of the concatenated old entries; UNION gives everyone everything; BROADCAST maps
// subtask i to entry i mod n.
type stateDist struct {
	op    *operatorSim
	sizes []*checkpoint.ElementSizes // element sizes of the entries that need them (the operator's)
	// streamBase maps an entry's old subtask to its stream id: 0 for managed, oldP for raw.
	streamBase int32
	mode       checkpoint.DistributionMode
	path       OperatorPath // PathUnchanged, PathUnchangedWithUnion or PathRescale
	// partial marks a BROADCAST name that is "partially reported" (§1.3) on PathUnchangedWithUnion.
	partial bool
	newP    int
	entries []oldEntry
	// SPLIT_DISTRIBUTE on PathRescale: run k (k = 0..newP-1) goes to subtask (start+k) mod newP;
	// the first rem runs have base+1 elements, the others base.
	start, base, rem int64
	// nameOverhead is the payload estimate of one entry of this name (PayloadEntryOverhead plus
	// the name's bytes), set only by namedDist: zero where the payload is not estimated.
	nameOverhead int64
}

// firstFrom returns the first entry of old subtask i or a later one (entries are in old-subtask
// order, one per old subtask); len(entries) when there is none.
func (d *stateDist) firstFrom(i int) int {
	return sort.Search(len(d.entries), func(e int) bool { return int(d.entries[e].old) >= i })
}

// endOf returns the element index just past entry e.
func (d *stateDist) endOf(e int) int64 { return d.entries[e].pre + d.entries[e].n }

// containing returns the nonempty entry that holds element x (0 <= x < total).
func (d *stateDist) containing(x int64) int {
	return sort.Search(len(d.entries), func(e int) bool { return d.endOf(e) > x })
}

// cursorAt returns Flink's cursor (entry index, offset into it) after l elements were consumed.
func (d *stateDist) cursorAt(l int64) (int, int64) {
	if l <= 0 {
		return 0, 0
	}
	e := d.containing(l - 1)
	if d.endOf(e) == l {
		return e + 1, 0
	}
	return e, l - d.entries[e].pre
}

// run returns the first element and the element count of SPLIT run k.
func (d *stateDist) run(k int64) (l, c int64) {
	l = k*d.base + min(k, d.rem)
	c = d.base
	if k < d.rem {
		c++
	}
	return l, c
}

// runOf returns the run index new subtask i gets.
func (d *stateDist) runOf(i int) int64 {
	n := int64(d.newP)
	return ((int64(i)-d.start)%n + n) % n
}

// Share returns what new subtask i receives of the state, with one Slice per old entry. For
// UNION names that is every entry of every old subtask; ShareCounts gives the totals without
// the slices.
func (s *StateDistribution) Share(i int) Share {
	d := s.dist()
	return d.share(i)
}

// share is Share on the working view.
func (d *stateDist) share(i int) Share {
	var sh Share
	d.walk(i, func(e int, first, count, bytes int64) {
		en := &d.entries[e]
		sh.Slices = append(sh.Slices, Slice{
			OldSubtask: int(en.old), First: first, Elements: count, Bytes: bytes,
			Stream: d.op.streams[d.stream(en)].ref,
		})
		sh.Elements += count
		sh.Bytes += bytes
	})
	sh.Present = len(sh.Slices) > 0
	return sh
}

// ShareCounts is Share without the slices: Present, Elements and Bytes. It does not allocate,
// and is O(1) for UNION names.
func (s *StateDistribution) ShareCounts(i int) Share {
	var sh Share
	if s.Mode == checkpoint.Union {
		if i >= 0 && i < int(s.NewParallelism) {
			sh = Share{Present: int64(s.OldEntries) > 0, Elements: s.Elements, Bytes: s.Bytes}
		}
		return sh
	}
	d := s.dist()
	d.walk(i, func(_ int, _, count, bytes int64) {
		sh.Present = true
		sh.Elements += count
		sh.Bytes += bytes
	})
	return sh
}

// advance moves a cursor at element off of entry e past c elements, of which the entry holds
// avail from off on: to the next entry when they are all taken.
func advance(e int, off, avail, c int64) (int, int64) {
	if avail > c {
		return e, off + c
	}
	return e + 1, 0
}

// walk calls f for every entry new subtask i receives, in Flink's order: the entry, the first
// element taken from it, the element count and their bytes.
func (d *stateDist) walk(i int, f func(e int, first, count, bytes int64)) {
	if i < 0 || i >= d.newP || len(d.entries) == 0 {
		return
	}
	if d.mode != checkpoint.SplitDistribute || d.path != PathRescale {
		d.eachWhole(i, func(e int) { f(e, 0, d.entries[e].n, d.entries[e].bytes) })
		return
	}
	l, c := d.run(d.runOf(i))
	e, off := d.cursorAt(l)
	for c > 0 {
		en := &d.entries[e]
		avail := en.n - off
		take := min(avail, c)
		f(e, off, take, d.sum(en, off, take))
		e, off = advance(e, off, avail, c)
		c -= avail
	}
}

// sumRuns returns the bytes of elements [from, to) of a few runs, by a linear walk.
func sumRuns(runs []checkpoint.SizeRun, from, to int64) int64 {
	var b, pos int64
	for _, r := range runs {
		lo, hi := max(from, pos), min(to, pos+r.Count)
		if hi > lo {
			b += (hi - lo) * r.Size
		}
		pos += r.Count
		if pos >= to {
			break
		}
	}
	return b
}

// stream returns the id of the stream entry en points into (see operatorSim.streams).
func (d *stateDist) stream(en *oldEntry) int32 { return en.old + d.streamBase }
