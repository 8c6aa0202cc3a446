package units

import (
	"math"
	"testing"
)

func TestBytes(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1, "1 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{-2048, "-2.0 KiB"}, {10 << 20, "10.0 MiB"}, {176160768, "168.0 MiB"},
		{3 << 30, "3.0 GiB"}, {5 << 40, "5.0 TiB"}, {2 << 50, "2.0 PiB"},
		{math.MaxInt64, "8192.0 PiB"},
	} {
		if got := Bytes(tt.n); got != tt.want {
			t.Errorf("Bytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestBytesExact(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{
		{0, "0 bytes"}, {1, "1 byte"}, {684, "684 bytes"}, {1023, "1023 bytes"}, {1024, "1.0 KiB = 1024 bytes"},
		{176160768, "168.0 MiB = 176160768 bytes"}, {10485760, "10.0 MiB = 10485760 bytes"},
		{2 << 40, "2.0 TiB = 2199023255552 bytes"},
	} {
		if got := BytesExact(tt.n); got != tt.want {
			t.Errorf("BytesExact(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestRanges(t *testing.T) {
	for _, tt := range []struct {
		in   []int32
		want string
	}{
		{nil, ""},
		{[]int32{3}, "3"},
		{[]int32{0, 1}, "0-1"},
		{[]int32{0, 1, 2, 3, 7}, "0-3, 7"},
		{[]int32{0, 2, 5, 6, 7, 8, 9}, "0, 2, 5-9"},
		{[]int32{4, 5, 6, 7}, "4-7"},
		{[]int32{7, 3}, "7, 3"},
		{[]int32{1, 1}, "1, 1"},
	} {
		if got := Ranges(tt.in); got != tt.want {
			t.Errorf("Ranges(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPlural(t *testing.T) {
	for _, tt := range []struct {
		n      int64
		noun   string
		plural []string
		want   string
	}{
		{0, "operator", nil, "0 operators"},
		{1, "operator", nil, "1 operator"},
		{6, "operator", nil, "6 operators"},
		{1, "entry", []string{"entries"}, "1 entry"},
		{2, "entry", []string{"entries"}, "2 entries"},
	} {
		if got := Plural(tt.n, tt.noun, tt.plural...); got != tt.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", tt.n, tt.noun, got, tt.want)
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 29995: "29,995", 1234567: "1,234,567", -4500: "-4,500", -450: "-450"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
