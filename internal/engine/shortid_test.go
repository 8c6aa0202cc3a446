package engine

import (
	"fmt"
	"testing"
)

func TestShortIDs(t *testing.T) {
	for _, tt := range []struct {
		name string
		ids  []string
		want []string
	}{
		{"none", nil, []string{}},
		{"distinct at eight", []string{"0d9ffb4f280d028d86dadba01ac205d7", "45b0254a1111111111111111111111aa"},
			[]string{"0d9ffb4f", "45b0254a"}},
		{"shared first eight", []string{"4b204d51cb71ba88d79b347eb5034174", "15ed30b20ac89a1811f0c12b427646b0", "4b204d51cb7aaaaaaaaaaaaaaaaaaaaa"},
			[]string{"4b204d51cb71", "15ed30b2", "4b204d51cb7a"}},
		{"three sharing", []string{"aaaaaaaa01", "aaaaaaaa02", "aaaaaaaa1f"},
			[]string{"aaaaaaaa01", "aaaaaaaa02", "aaaaaaaa1"}},
		{"equal IDs stay whole", []string{"0123456789abcdef", "0123456789abcdef"},
			[]string{"0123456789abcdef", "0123456789abcdef"}},
		{"one is a prefix of another", []string{"0123456789", "0123456789ab"},
			[]string{"0123456789", "0123456789a"}},
		{"not hex", []string{"kafka-source-1", "kafka-source-2", "sink"},
			[]string{"kafka-source-1", "kafka-source-2", "sink"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := collectShortIDs(tt.ids)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("shortIDs(%v) = %v, want %v", tt.ids, got, tt.want)
			}
		})
	}
}

// TestShortIDsUnique: on many random-looking IDs every short ID is a prefix of its ID, at
// least eight digits, and unique.
func TestShortIDsUnique(t *testing.T) {
	const n = 100000
	ids := make([]string, n)
	x := uint64(88172645463325252)
	for i := range ids {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		ids[i] = fmt.Sprintf("%05x000%024x", x>>44, x) // 20 random bits lead: collisions at eight digits
	}
	got := collectShortIDs(ids)
	seen := map[string]bool{}
	longer := 0
	for i, s := range got {
		if len(s) < minShortID || ids[i][:len(s)] != s || seen[s] {
			t.Fatalf("short ID %q of %q: too short, not a prefix or not unique", s, ids[i])
		}
		seen[s] = true
		if len(s) > minShortID {
			longer++
		}
	}
	if longer == 0 {
		t.Error("no ID needed more than eight digits; the test does not exercise collisions")
	}
}

func BenchmarkShortIDs(b *testing.B) {
	const n = 1 << 20
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%08x%024x", uint32(i*2654435761), i)
	}
	b.ReportAllocs()
	for b.Loop() {
		shortIDs(n, func(i int) string { return ids[i] }, func(int, string) {})
	}
}

func collectShortIDs(ids []string) []string {
	out := make([]string, len(ids))
	shortIDs(len(ids), func(i int) string { return ids[i] }, func(i int, s string) { out[i] = s })
	return out
}
