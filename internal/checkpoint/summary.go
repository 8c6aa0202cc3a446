package checkpoint

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"

	"github.com/flinkpreflight/preflight/internal/cancel"
)

// offsetSummary folds the ascending offsets of one state entry into what the Layout needs: the
// count, the first and last offset, and the run-length-encoded differences of consecutive
// offsets (the sizes of all elements but the last, whose end is known only once the delegate
// stream's size and the other states of the handle are known).
type offsetSummary struct {
	n           int64
	first, last int64
	sizes       ElementSizes
	cur, curN   int64 // the open run
	unordered   bool  // an offset was smaller than its predecessor
	// boundsOnly skips the run-length encoding (UNION and BROADCAST states keep only their
	// element count and byte total).
	boundsOnly bool
	// budget is the decoder's remaining run budget (nil: unlimited); once it is spent, runs are
	// folded into tailN elements of tailBytes bytes.
	budget           *int64
	tailN, tailBytes int64
}

// add folds big-endian i64 offsets (len(b) is a multiple of 8).
func (s *offsetSummary) add(b []byte) {
	if len(b) < 8 {
		return
	}
	i := 0
	if s.n == 0 {
		v := int64(binary.BigEndian.Uint64(b))
		s.first, s.last = v, v
		i = 8
	}
	s.n += int64(len(b) / 8)
	if s.boundsOnly {
		// Only the count, the bounds and whether the offsets ascend: a branch-free scan.
		last, descend := s.last, uint64(0)
		for ; i+8 <= len(b); i += 8 {
			v := int64(binary.BigEndian.Uint64(b[i:]))
			descend |= uint64(boolToInt(v < last))
			last = v
		}
		s.last, s.unordered = last, s.unordered || descend != 0
		return
	}
	last, cur, curN := s.last, s.cur, s.curN
	for ; i+8 <= len(b); i += 8 {
		v := int64(binary.BigEndian.Uint64(b[i:]))
		diff := v - last
		last = v
		if diff == cur {
			curN++
			continue
		}
		if curN > 0 {
			s.flush(cur, curN)
		}
		cur, curN = diff, 1
	}
	s.last, s.cur, s.curN = last, cur, curN
}

func (s *offsetSummary) flush(size, count int64) {
	if size < 0 {
		s.unordered = true
		size = 0
	}
	if s.budget != nil {
		if *s.budget <= 0 || s.tailN > 0 {
			s.tailN += count
			s.tailBytes += size * count
			return
		}
		*s.budget--
	}
	s.sizes.Append(size, count)
}

// runBudget caps the run-length-encoded sizes one ReadLayout keeps over all states (32 bytes a
// run, so 32 MiB): elements whose size changes from one to the next cost a run each, and a
// hostile or unusual file could otherwise need more memory than its own offsets. Beyond the
// budget a state's remaining element sizes are folded into their average (byte totals stay
// exact) and the state is marked SizesApproximate.
const runBudget = 1 << 20

// summarizeOffsets builds a summary from offsets held in memory.
func summarizeOffsets(offs []int64, mode DistributionMode) offsetSummary {
	s := offsetSummary{boundsOnly: mode != SplitDistribute}
	var buf [8 * 256]byte
	for len(offs) > 0 {
		k := min(len(offs), 256)
		for i := 0; i < k; i++ {
			binary.BigEndian.PutUint64(buf[8*i:], uint64(offs[i]))
		}
		s.add(buf[:8*k])
		offs = offs[k:]
	}
	return s
}

// entryEnds is what finishing a state entry's sizes needs of its offsetSummary beyond the
// Layout's record: the first and last offset, the open run and the folded tail.
type entryEnds struct {
	first, last      int64
	cur, curN        int64
	tailN, tailBytes int64
}

// layout is the Layout's record of the summarized entry, its sizes not yet finished.
func (s *offsetSummary) layout(name string, mode DistributionMode) StateEntryLayout {
	l := StateEntryLayout{Name: name, Mode: mode, Elements: s.n, SizesApproximate: s.unordered}
	if mode == SplitDistribute {
		l.Sizes = s.sizes
	}
	return l
}

// ends is what finishLayouts needs of s besides its layout.
func (s *offsetSummary) ends() entryEnds {
	return entryEnds{first: s.first, last: s.last, cur: s.cur, curN: s.curN, tailN: s.tailN, tailBytes: s.tailBytes}
}

// finishStates computes the Layout's records of the states of one handle (see finishLayouts).
func finishStates(entries []StateEntry, streamSize int64, stop *cancel.Flag) []StateEntryLayout {
	out := make([]StateEntryLayout, len(entries))
	ends := make([]entryEnds, len(entries))
	for i := range entries {
		stop.Check()
		e := &entries[i]
		s := &e.sum
		if s.n == 0 && len(e.Offsets) > 0 {
			tmp := summarizeOffsets(e.Offsets, e.Mode)
			s = &tmp
		}
		out[i], ends[i] = s.layout(e.Name, e.Mode), s.ends()
	}
	finishLayouts(out, ends, streamSize, stop)
	return out
}

// finishLayouts computes the element sizes of the states of one handle (spec §6.1): an element
// ends at the next larger offset of the handle, the last one at the stream size. Summaries keep
// only each state's first and last offset, so a state whose offset range overlaps another's is
// marked SizesApproximate. It checks stop per state (one handle can list a million names).
func finishLayouts(out []StateEntryLayout, ends []entryEnds, streamSize int64, stop *cancel.Flag) {
	// Most handles list a few states: their work slices stay on the stack.
	var orderBuf [8]int32
	var firstsBuf [8]int64
	order, firsts := orderBuf[:0], firstsBuf[:0] // order: non-empty states by first offset
	if len(out) > len(orderBuf) {
		order, firsts = make([]int32, 0, len(out)), make([]int64, 0, len(out))
	}
	for i := range out {
		if out[i].Elements > 0 {
			order = append(order, int32(i))
		}
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		stop.Check()
		return cmp.Compare(ends[a].first, ends[b].first)
	})
	// Overlapping ranges: sweep in order of first offset.
	maxLast, maxIdx := int64(-1<<63), int32(-1)
	for _, i := range order {
		stop.Check()
		if maxIdx >= 0 && ends[i].first <= maxLast {
			out[i].SizesApproximate = true
			out[maxIdx].SizesApproximate = true
		}
		if ends[i].last > maxLast {
			maxLast, maxIdx = ends[i].last, i
		}
	}
	for _, i := range order {
		firsts = append(firsts, ends[i].first)
	}
	for _, i := range order {
		stop.Check()
		s := &ends[i]
		end := streamSize
		if k, _ := slices.BinarySearch(firsts, s.last+1); k < len(firsts) {
			end = firsts[k]
		}
		lastSize := end - s.last
		if lastSize < 0 {
			lastSize = 0
			out[i].SizesApproximate = true
		}
		if out[i].Mode != SplitDistribute {
			out[i].Bytes = max(s.last-s.first, 0) + lastSize
			continue
		}
		out[i].Sizes = finishSizes(&out[i], s, lastSize)
		out[i].Bytes = out[i].Sizes.Total()
	}
}

// finishSizes returns the element sizes of a SPLIT_DISTRIBUTE entry: the runs so far, then the
// tail, the open run and the last element, with room for exactly what the appends add (a Layout
// holds one per SPLIT state and subtask).
func finishSizes(l *StateEntryLayout, s *entryEnds, lastSize int64) ElementSizes {
	var pending [4]SizeRun
	np := 0
	if s.tailN > 0 {
		avg, rem := s.tailBytes/s.tailN, s.tailBytes%s.tailN
		pending[0], pending[1], np = SizeRun{avg + 1, rem}, SizeRun{avg, s.tailN - rem}, 2
		l.SizesApproximate = true
	}
	if s.curN > 0 {
		cur := s.cur
		if cur < 0 {
			cur = 0
			l.SizesApproximate = true
		}
		pending[np], np = SizeRun{cur, s.curN}, np+1
	}
	pending[np], np = SizeRun{lastSize, 1}, np+1
	sizes := l.Sizes.cloneIn(newRuns(l.Sizes.Runs(), pending[:np]))
	for _, r := range pending[:np] {
		sizes.Append(r.Size, r.Count)
	}
	return sizes
}

// newRuns is how many runs appending pending to runs adds (ElementSizes.Append merges a run
// into the one before it when their sizes are equal, and skips empty ones).
func newRuns(runs, pending []SizeRun) int {
	n, last, any := 0, int64(0), len(runs) > 0
	if any {
		last = runs[len(runs)-1].Size
	}
	for _, r := range pending {
		if r.Count <= 0 || any && r.Size == last {
			continue
		}
		n, last, any = n+1, r.Size, true
	}
	return n
}

// cloneIn returns an independent copy with room for extra more runs.
func (e *ElementSizes) cloneIn(extra int) ElementSizes {
	runs := e.Runs()
	if len(runs)+extra <= 1 {
		return ElementSizes{one: e.one}
	}
	m := &moreRuns{runs: append(make([]SizeRun, 0, len(runs)+extra), runs...)}
	if ends := e.endList(); ends != nil {
		m.ends = append(make([]runEnd, 0, len(ends)+extra), ends...)
	}
	return ElementSizes{more: m}
}

// keyGroupBytes derives the bytes of each key group from its offset (0 = no data) and the next
// larger offset of the handle or the stream size.
func keyGroupBytes(offsets []int64, streamSize int64) []int64 {
	if len(offsets) == 0 {
		return nil
	}
	out := make([]int64, len(offsets))
	if nonZeroAscending(offsets) {
		ascendingKeyGroupBytes(out, offsets, streamSize)
	} else {
		sortedKeyGroupBytes(out, offsets, streamSize)
	}
	return out
}

// keyGroupBytesInPlace is keyGroupBytes overwriting offsets with the result.
func keyGroupBytesInPlace(offsets []int64, streamSize int64) []int64 {
	return offsetsToKeyGroupBytes(offsets, streamSize, nonZeroAscending(offsets))
}

// offsetsToKeyGroupBytes is keyGroupBytesInPlace when the caller already knows whether the
// offsets are nonZeroAscending.
func offsetsToKeyGroupBytes(offsets []int64, streamSize int64, ascending bool) []int64 {
	if len(offsets) == 0 {
		return nil
	}
	if ascending {
		ascendingKeyGroupBytes(offsets, offsets, streamSize)
		return offsets
	}
	out := make([]int64, len(offsets))
	sortedKeyGroupBytes(out, offsets, streamSize)
	copy(offsets, out)
	return offsets
}

// nonZeroAscending reports whether the offsets are not negative and the non-zero ones never
// decrease: how Flink's key-group writers lay key groups out in the stream, one after the other.
// (Not negative: then no difference of two offsets overflows.)
func nonZeroAscending(offsets []int64) bool {
	prev := int64(0)
	for _, o := range offsets {
		if o != 0 {
			if o < prev {
				return false
			}
			prev = o
		}
	}
	return true
}

// ascendingKeyGroupBytes fills out (which may be offsets itself) for non-zero offsets that never
// decrease, in one backward pass: the next larger offset is the nearest larger one to the right.
// Equal offsets share the end of the first larger one.
func ascendingKeyGroupBytes(out, offsets []int64, streamSize int64) {
	out = out[:len(offsets)]
	i := len(offsets) - 1
	for i >= 0 && offsets[i] == 0 {
		out[i] = 0
		i--
	}
	if i < 0 {
		return
	}
	// cur is the smallest non-zero offset seen so far (right of i), curEnd its end.
	// Offsets are not negative, so no difference overflows.
	cur, curEnd := offsets[i], streamSize
	out[i] = max(streamSize-cur, 0)
	for i--; i >= 0; i-- {
		o := offsets[i]
		switch {
		case o == 0:
			out[i] = 0
		case o == cur:
			out[i] = max(curEnd-o, 0)
		default: // 0 < o < cur
			out[i] = cur - o
			cur, curEnd = o, cur
		}
	}
}

// sortedKeyGroupBytes fills out for offsets in any order, by binary search in the sorted
// distinct non-zero offsets.
func sortedKeyGroupBytes(out, offsets []int64, streamSize int64) {
	sorted := make([]int64, 0, len(offsets))
	for _, o := range offsets {
		if o != 0 {
			sorted = append(sorted, o)
		}
	}
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	for i, o := range offsets {
		out[i] = 0
		if o == 0 {
			continue
		}
		end := streamSize
		if k, found := slices.BinarySearch(sorted, o); found && k+1 < len(sorted) {
			end = sorted[k+1]
		}
		out[i] = span(o, end)
	}
}

// span returns end - start when positive (saturating at MaxInt64 for negative offsets), else 0.
func span(start, end int64) int64 {
	if end <= start {
		return 0
	}
	if d := end - start; d > 0 {
		return d
	}
	return math.MaxInt64
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
