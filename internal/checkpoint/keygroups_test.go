package checkpoint

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// referenceKeyGroupBytes is the definition: sorted distinct non-zero offsets, binary search.
func referenceKeyGroupBytes(offsets []int64, streamSize int64) []int64 {
	if len(offsets) == 0 {
		return nil
	}
	out := make([]int64, len(offsets))
	sortedKeyGroupBytes(out, offsets, streamSize)
	return out
}

func checkKeyGroupBytes(t *testing.T, offsets []int64, streamSize int64) {
	t.Helper()
	want := referenceKeyGroupBytes(offsets, streamSize)
	if got := keyGroupBytes(offsets, streamSize); !slices.Equal(got, want) {
		t.Fatalf("keyGroupBytes(%v, %d) = %v, want %v", offsets, streamSize, got, want)
	}
	in := slices.Clone(offsets)
	if got := keyGroupBytesInPlace(in, streamSize); !slices.Equal(got, want) {
		t.Fatalf("keyGroupBytesInPlace(%v, %d) = %v, want %v", offsets, streamSize, got, want)
	}
	// The decoder's one-pass forms: decoded with the ascending check, and the forward pass.
	raw := make([]byte, 0, 8*len(offsets))
	for _, o := range offsets {
		raw = binary.BigEndian.AppendUint64(raw, uint64(o))
	}
	ascending := nonZeroAscending(offsets)
	dec := make([]int64, len(offsets))
	if last, bad := decodeOffsetsAscending(dec, raw, 0); !slices.Equal(dec, offsets) || bad == ascending {
		t.Fatalf("decodeOffsetsAscending(%v) = %v, bad %v (last %d); nonZeroAscending %v", offsets, dec, bad, last, ascending)
	}
	if got := offsetsToKeyGroupBytes(dec, streamSize, ascending); !slices.Equal(got, want) {
		t.Fatalf("offsetsToKeyGroupBytes(%v, %d) = %v, want %v", offsets, streamSize, got, want)
	}
	sizes := make([]int64, len(offsets))
	pend, ok := forwardKeyGroupBytes(sizes, raw)
	if ok != ascending {
		t.Fatalf("forwardKeyGroupBytes(%v) ok = %v, nonZeroAscending = %v", offsets, ok, ascending)
	}
	if ok {
		or := pend.finish(sizes, streamSize)
		if !slices.Equal(sizes, want) {
			t.Fatalf("forwardKeyGroupBytes(%v, %d) = %v, want %v", offsets, streamSize, sizes, want)
		}
		if got, want := compactKeyGroupSizes(sizes, or), NewKeyGroupSizes(want); !reflect.DeepEqual(got, want) {
			t.Fatalf("forwardKeyGroupBytes(%v, %d): compact form %v (OR %#x), want %v", offsets, streamSize, got, or, want)
		}
	}
	checkKeyGroupSizes(t, want)
}

// checkKeyGroupSizes checks the compact form against the plain sizes: values, every range sum
// (the rescale simulator's question) and the narrowest width.
func checkKeyGroupSizes(t *testing.T, sizes []int64) {
	t.Helper()
	k := NewKeyGroupSizes(sizes)
	if got := k.AppendTo(nil); k.Len() != len(sizes) || !slices.Equal(got, sizes) {
		t.Fatalf("NewKeyGroupSizes(%v): Len %d, values %v", sizes, k.Len(), got)
	}
	for from := 0; from <= len(sizes) && from < 12; from++ {
		for to := from; to <= len(sizes); to++ {
			var want int64
			for _, v := range sizes[from:to] {
				want += v
			}
			if got := k.Sum(from, to); got != want {
				t.Fatalf("NewKeyGroupSizes(%v).Sum(%d, %d) = %d, want %d", sizes, from, to, got, want)
			}
		}
	}
	width := 0
	if len(sizes) > 0 {
		width = 2
		for _, v := range sizes {
			switch {
			case v < 0 || v >= 1<<32:
				width = 8
			case v >= 1<<16:
				width = max(width, 4)
			}
		}
	}
	if int(k.width) != width {
		t.Fatalf("NewKeyGroupSizes(%v) width %d, want %d", sizes, k.width, width)
	}
}

func TestKeyGroupSizes(t *testing.T) {
	for _, sizes := range [][]int64{
		nil, {0}, {1, 2, 3}, {65535, 0, 7}, {65536, 1}, {1 << 31, 5}, {1<<32 - 1}, {1 << 32, 3},
		{math.MaxInt64, 0}, {-1, 4}, {math.MinInt64, math.MaxInt64, 1},
	} {
		checkKeyGroupSizes(t, sizes)
	}
	if (KeyGroupSizes{}).Len() != 0 || (KeyGroupSizes{}).Sum(0, 0) != 0 {
		t.Fatal("the zero KeyGroupSizes is not empty")
	}
}

func TestKeyGroupBytes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		offsets []int64
		size    int64
		want    []int64
	}{
		{"empty", nil, 10, nil},
		{"all empty groups", []int64{0, 0, 0}, 10, []int64{0, 0, 0}},
		{"ascending", []int64{4, 10, 25}, 40, []int64{6, 15, 15}},
		{"empty groups between", []int64{0, 4, 0, 10, 0}, 40, []int64{0, 6, 0, 30, 0}},
		{"equal offsets share the next", []int64{4, 4, 10, 10}, 12, []int64{6, 6, 2, 2}},
		{"stream shorter than last", []int64{4, 50}, 40, []int64{46, 0}},
		{"descending", []int64{25, 10, 4}, 40, []int64{15, 15, 6}},
		{"interleaved", []int64{10, 4, 25, 0, 7}, 30, []int64{15, 3, 5, 0, 3}},
		{"negative", []int64{-8, 4}, 10, []int64{12, 6}},
		{"extremes", []int64{math.MinInt64, math.MaxInt64}, math.MaxInt64, []int64{math.MaxInt64, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := keyGroupBytes(tc.offsets, tc.size); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			checkKeyGroupBytes(t, tc.offsets, tc.size)
		})
	}
}

func TestKeyGroupBytesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := r.IntN(40)
		offs := make([]int64, n)
		pos := int64(r.IntN(5))
		for i := range offs {
			switch r.IntN(6) {
			case 0: // empty key group
			case 1: // same offset as the previous one
				offs[i] = pos
			case 2: // out of order
				offs[i] = int64(r.IntN(100)) - 10
			default:
				pos += int64(r.IntN(20))
				offs[i] = pos
			}
		}
		checkKeyGroupBytes(t, offs, pos+int64(r.IntN(30))-10)
	}
}

func FuzzKeyGroupBytes(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 10}, int64(20))
	f.Fuzz(func(t *testing.T, b []byte, size int64) {
		offs := make([]int64, len(b)/8)
		for i := range offs {
			offs[i] = int64(binary.BigEndian.Uint64(b[8*i:]))
		}
		checkKeyGroupBytes(t, offs, size)
	})
}
