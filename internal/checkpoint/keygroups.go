package checkpoint

import "encoding/binary"

// This file turns the key-group offsets of a KeyGroupsStateHandle into the bytes per key group
// that the Layout keeps (KeyedStateHandleLayout.KeyGroupBytes). Keyed-offset-heavy files are
// almost nothing else, so this is the decoder's hot loop for them: the offsets are decoded
// straight into the array that becomes the sizes, in one forward pass over the input bytes.

// keyGroupSizes reads n key-group offsets and the delegate stream handle that follows them, and
// returns the bytes per key group (keyGroupBytes' definition) and the delegate. The usual case —
// all offsets already in the buffer, not negative, the non-zero ones ascending, as Flink's
// writers lay key groups out — costs one pass (forwardKeyGroupBytes); any other input goes
// through keyGroupOffsets and offsetsToKeyGroupBytes, which also produce the truncation errors.
func (d *decoder) keyGroupSizes(n int) ([]int64, StreamStateHandle) {
	if n == 0 {
		d.rename("delegate")
		return nil, d.streamHandle()
	}
	// n ≤ maxKeyGroups and was checked against what remains, so one exact allocation.
	sizes := make([]int64, n)
	if raw := d.window(8 * n); raw != nil {
		if pend, ok := forwardKeyGroupBytes(sizes, raw); ok {
			d.pos += len(raw)
			d.rename("delegate")
			delegate := d.streamHandle()
			pend.finish(sizes, streamRef(delegate).Size)
			return sizes, delegate
		}
	}
	ascending := d.keyGroupOffsets(sizes)
	d.rename("delegate")
	delegate := d.streamHandle()
	return offsetsToKeyGroupBytes(sizes, streamRef(delegate).Size, ascending), delegate
}

// window returns the next n bytes (n ≤ readBufSize) without consuming them, or nil when they
// are not all there (end of input or the enclosing record's limit; the caller then reads them
// the slow way, which names the error). The slice is valid until the next read.
func (d *decoder) window(n int) []byte {
	if d.offset()+int64(n) > d.limit {
		return nil
	}
	if len(d.buf)-d.pos < n && !d.fill(n) {
		return nil
	}
	return d.buf[d.pos : d.pos+n]
}

// kgPending is the last run of equal non-zero offsets of a forward pass: its key groups end
// at the stream's end, known only after the delegate is read.
type kgPending struct {
	offset int64
	start  int // index of the run's first key group; -1 when every offset was 0
}

// forwardKeyGroupBytes decodes the big-endian offsets in raw (8 × len(sizes) bytes) into sizes,
// which must be zeroed, as bytes per key group: a key group with offset 0 has none, the others
// end at the next larger offset. It fails (false) at the first negative offset or non-zero offset
// below an earlier one; sizes is then garbage. The key groups of the last run hold their offset
// until finish.
func forwardKeyGroupBytes(sizes []int64, raw []byte) (kgPending, bool) {
	cur, start := int64(0), -1
	for i := range sizes {
		if len(raw) < 8 {
			break
		}
		o := int64(binary.BigEndian.Uint64(raw[:8]))
		raw = raw[8:]
		switch {
		case o == 0: // empty key group; sizes[i] is already 0
		case o == cur: // same offset as the run before: same end
			sizes[i] = o
		case o < cur || o < 0:
			return kgPending{}, false
		default: // o > cur: the open run ends here
			switch {
			case start < 0: // the first non-empty key group
			case start == i-1:
				sizes[start] = o - cur
			default:
				for j := start; j < i; j++ {
					if sizes[j] != 0 { // a key group of the run, not an empty one between
						sizes[j] = o - cur
					}
				}
			}
			cur, start = o, i
			sizes[i] = o
		}
	}
	return kgPending{offset: cur, start: start}, true
}

// finish sets the sizes of the pending run: up to the stream's end, or 0 when the stream is
// shorter than the offset.
func (p kgPending) finish(sizes []int64, streamSize int64) {
	if p.start < 0 {
		return
	}
	size := max(streamSize-p.offset, 0)
	for j := p.start; j < len(sizes); j++ {
		if sizes[j] != 0 {
			sizes[j] = size
		}
	}
}

// keyGroupOffsets fills dst with the next len(dst) big-endian i64 values (key-group offsets), a
// buffered window at a time as appendI64s does, and reports whether they are not negative and the
// non-zero ones never decrease (nonZeroAscending), checked in the same pass.
func (d *decoder) keyGroupOffsets(dst []int64) (ascending bool) {
	prev, bad := int64(0), false
	for len(dst) > 0 {
		avail := len(d.buf) - d.pos
		if l := d.limit - d.offset(); int64(avail) > l {
			avail = int(l)
		}
		if avail < 8 {
			d.next(8) // fills or fails
			d.pos -= 8
			continue
		}
		k := min(len(dst), avail/8)
		var wbad bool
		prev, wbad = decodeOffsetsAscending(dst[:k], d.buf[d.pos:d.pos+8*k], prev)
		bad = bad || wbad
		d.pos += 8 * k
		dst = dst[k:]
	}
	return !bad
}

// decodeOffsetsAscending stores the big-endian i64 values of b in dst (len(b) == 8 × len(dst))
// and reports whether a non-zero one is below prev, the largest non-zero offset before them, or
// below zero; it returns the new largest.
func decodeOffsetsAscending(dst []int64, b []byte, prev int64) (int64, bool) {
	var bad uint64
	for i := range dst {
		if len(b) < 8 {
			break
		}
		o := int64(binary.BigEndian.Uint64(b[:8]))
		dst[i] = o
		// A zero offset is an empty key group; anything else must not go below what came
		// before (prev ≥ 0, so this also refuses negative offsets).
		bad |= uint64(boolToInt(o < prev && o != 0))
		prev = max(prev, o)
		b = b[8:]
	}
	return prev, bad != 0
}
