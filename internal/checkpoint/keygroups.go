package checkpoint

import "encoding/binary"

// This file turns the key-group offsets of a KeyGroupsStateHandle into the bytes per key group
// that the Layout keeps (KeyedStateHandleLayout.KeyGroupBytes). Keyed-offset-heavy files are
// almost nothing else, so this is the decoder's hot loop for them: the offsets are decoded
// into sizes in one forward pass over the input bytes, and the Layout keeps them compacted.

// keyGroupSizes reads n key-group offsets and the delegate stream handle that follows them, and
// returns the bytes per key group (keyGroupBytes' definition), compacted, and the delegate. The
// usual case — all offsets already in the buffer, not negative, the non-zero ones ascending, as
// Flink's writers lay key groups out — costs one pass (forwardKeyGroupBytes) into a scratch
// array the decoder reuses, so the Layout's only allocation is the compact form; any other input
// goes through keyGroupOffsets and offsetsToKeyGroupBytes, which also produce the truncation
// errors.
func (d *decoder) keyGroupSizes(n int) (KeyGroupSizes, StreamStateHandle) {
	if n == 0 {
		d.rename("delegate")
		return KeyGroupSizes{}, d.streamHandle()
	}
	// n ≤ maxKeyGroups and was checked against what remains. The scratch is taken out of d while
	// in use: the delegate can itself be a key-groups handle (tag 3 nested as a stream).
	sizes := d.kgScratch
	d.kgScratch = nil
	if cap(sizes) < n {
		sizes = make([]int64, n)
	}
	sizes = sizes[:n]
	defer func() { d.kgScratch = sizes }()
	if raw := d.window(8 * n); raw != nil {
		if pend, ok := forwardKeyGroupBytes(sizes, raw); ok {
			d.pos += len(raw)
			d.rename("delegate")
			delegate := d.streamHandle()
			or := pend.finish(sizes, streamRef(delegate).Size)
			return compactKeyGroupSizes(sizes, or), delegate
		}
	}
	ascending := d.keyGroupOffsets(sizes)
	d.rename("delegate")
	delegate := d.streamHandle()
	return NewKeyGroupSizes(offsetsToKeyGroupBytes(sizes, streamRef(delegate).Size, ascending)), delegate
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
	start  int    // index of the run's first key group; -1 when every offset was 0
	or     uint64 // all sizes set so far ORed together (for the compact form's width)
}

// forwardKeyGroupBytes decodes the big-endian offsets in raw (8 × len(sizes) bytes) into sizes
// as bytes per key group: a key group with offset 0 has none, the others
// end at the next larger offset. It fails (false) at the first negative offset or non-zero offset
// below an earlier one; sizes is then garbage. The key groups of the last run hold their offset
// until finish.
func forwardKeyGroupBytes(sizes []int64, raw []byte) (kgPending, bool) {
	cur, start, or := int64(0), -1, uint64(0)
	for i := range sizes {
		if len(raw) < 8 {
			break
		}
		o := int64(binary.BigEndian.Uint64(raw[:8]))
		raw = raw[8:]
		switch {
		case o > cur: // the open run ends here (the usual case: one key group per run)
			size := o - cur
			switch {
			case start < 0: // the first non-empty key group: no run before it
				size = 0
			case start == i-1:
				sizes[start] = size
			default:
				for j := start; j < i; j++ {
					if sizes[j] != 0 { // a key group of the run, not an empty one between
						sizes[j] = size
					}
				}
			}
			or |= uint64(size)
			cur, start = o, i
			sizes[i] = o
		case o == 0: // empty key group
			sizes[i] = 0
		case o == cur: // same offset as the run before: same end
			sizes[i] = o
		default: // below an earlier offset, or negative
			return kgPending{}, false
		}
	}
	return kgPending{offset: cur, start: start, or: or}, true
}

// finish sets the sizes of the pending run: up to the stream's end, or 0 when the stream is
// shorter than the offset. It returns all sizes ORed together.
func (p kgPending) finish(sizes []int64, streamSize int64) uint64 {
	if p.start < 0 {
		return p.or
	}
	size := max(streamSize-p.offset, 0)
	for j := p.start; j < len(sizes); j++ {
		if sizes[j] != 0 {
			sizes[j] = size
		}
	}
	return p.or | uint64(size)
}

// KeyGroupSizes holds the bytes of each key group of a key-groups handle (tags 3, 7, 12), in the
// narrowest of 2, 4 or 8 bytes per key group that holds the largest. A key-group-heavy file is
// almost nothing but offsets, and keeping 8 bytes per key group would make the Layout as large
// as the file; a heap snapshot's key groups rarely exceed 64 KiB or 4 GiB each. The zero value
// is empty; Layouts compare with reflect.DeepEqual because the width depends only on the values.
type KeyGroupSizes struct {
	data  []byte // little-endian, width bytes per key group
	width uint8
}

// NewKeyGroupSizes returns sizes in compact form (it does not keep sizes). Negative values,
// which the decoder never produces, are kept as they are.
func NewKeyGroupSizes(sizes []int64) KeyGroupSizes {
	var or uint64
	for _, v := range sizes {
		or |= uint64(v) // a negative value sets the top bit: 8 bytes
	}
	return compactKeyGroupSizes(sizes, or)
}

// compactKeyGroupSizes is NewKeyGroupSizes for sizes whose values ORed together are or.
func compactKeyGroupSizes(sizes []int64, or uint64) KeyGroupSizes {
	if len(sizes) == 0 {
		return KeyGroupSizes{}
	}
	var k KeyGroupSizes
	switch {
	case or < 1<<16:
		k = KeyGroupSizes{width: 2, data: make([]byte, 0, 2*len(sizes))}
		for _, v := range sizes {
			k.data = binary.LittleEndian.AppendUint16(k.data, uint16(v))
		}
	case or < 1<<32:
		k = KeyGroupSizes{width: 4, data: make([]byte, 0, 4*len(sizes))}
		for _, v := range sizes {
			k.data = binary.LittleEndian.AppendUint32(k.data, uint32(v))
		}
	default:
		k = KeyGroupSizes{width: 8, data: make([]byte, 0, 8*len(sizes))}
		for _, v := range sizes {
			k.data = binary.LittleEndian.AppendUint64(k.data, uint64(v))
		}
	}
	return k
}

// Len returns the number of key groups.
func (k KeyGroupSizes) Len() int {
	if k.width == 0 {
		return 0
	}
	return len(k.data) / int(k.width)
}

// At returns the bytes of the i-th key group of the handle's range (0-based).
func (k KeyGroupSizes) At(i int) int64 {
	switch k.width {
	case 2:
		return int64(binary.LittleEndian.Uint16(k.data[2*i:]))
	case 4:
		return int64(binary.LittleEndian.Uint32(k.data[4*i:]))
	}
	return int64(binary.LittleEndian.Uint64(k.data[8*i:]))
}

// Sum returns the bytes of key groups [from, to) of the handle's range (0-based).
func (k KeyGroupSizes) Sum(from, to int) int64 {
	if to <= from {
		return 0
	}
	var sum int64
	switch w := int(k.width); w {
	case 2:
		for b := k.data[2*from : 2*to]; len(b) >= 2; b = b[2:] {
			sum += int64(binary.LittleEndian.Uint16(b))
		}
	case 4:
		for b := k.data[4*from : 4*to]; len(b) >= 4; b = b[4:] {
			sum += int64(binary.LittleEndian.Uint32(b))
		}
	default:
		for b := k.data[8*from : 8*to]; len(b) >= 8; b = b[8:] {
			sum += int64(binary.LittleEndian.Uint64(b))
		}
	}
	return sum
}

// AppendTo appends the sizes to dst as int64s.
func (k KeyGroupSizes) AppendTo(dst []int64) []int64 {
	for i := range k.Len() {
		dst = append(dst, k.At(i))
	}
	return dst
}

// keyGroupOffsets fills dst with the next len(dst) big-endian i64 values (key-group offsets), a
// buffered window at a time as appendI64s does, and reports whether they are not negative and the
// non-zero ones never decrease (nonZeroAscending), checked in the same pass.
func (d *decoder) keyGroupOffsets(dst []int64) (ascending bool) {
	prev, bad := int64(0), false
	for len(dst) > 0 {
		k := d.i64Window(len(dst))
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
