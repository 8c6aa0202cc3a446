package checkpoint

import (
	"reflect"
	"testing"
)

// TestElementSizes: whatever runs are appended (none, one kept inline, several behind the
// pointer, more than shortRuns with their ends), Runs, Len, Total, At and Sum answer as the
// expanded list of sizes does, and cloneIn's copy is independent of the original.
func TestElementSizes(t *testing.T) {
	tests := []struct {
		name   string
		append []SizeRun // appended in order, counts <= 0 included
		runs   []SizeRun // want
	}{
		{"none", nil, nil},
		{"empty counts only", []SizeRun{{5, 0}, {6, -1}}, nil},
		{"one run", []SizeRun{{7, 3}}, []SizeRun{{7, 3}}},
		{"one run appended twice", []SizeRun{{7, 3}, {7, 2}}, []SizeRun{{7, 5}}},
		{"two runs", []SizeRun{{7, 3}, {9, 1}}, []SizeRun{{7, 3}, {9, 1}}},
		{"two runs, the second grown", []SizeRun{{7, 3}, {9, 1}, {9, 4}, {1, 0}}, []SizeRun{{7, 3}, {9, 5}}},
		{"beyond shortRuns", []SizeRun{{1, 1}, {2, 2}, {3, 1}, {4, 3}, {5, 1}, {6, 2}, {7, 1}, {8, 1}, {9, 2}, {9, 1}, {10, 1}},
			[]SizeRun{{1, 1}, {2, 2}, {3, 1}, {4, 3}, {5, 1}, {6, 2}, {7, 1}, {8, 1}, {9, 3}, {10, 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var e ElementSizes
			var flat []int64
			for _, r := range tc.append {
				e.Append(r.Size, r.Count)
				for range max(r.Count, 0) {
					flat = append(flat, r.Size)
				}
			}
			if got := e.Runs(); !reflect.DeepEqual(got, tc.runs) {
				t.Fatalf("Runs() = %v, want %v", got, tc.runs)
			}
			checkSizes(t, &e, flat)
			c := e.cloneIn(1)
			c.Append(1000, 1)
			checkSizes(t, &e, flat) // the original is unchanged
			checkSizes(t, &c, append(flat, 1000))
		})
	}
}

// checkSizes compares e with the expanded sizes flat.
func checkSizes(t *testing.T, e *ElementSizes, flat []int64) {
	t.Helper()
	var total int64
	for _, s := range flat {
		total += s
	}
	if e.Len() != int64(len(flat)) || e.Total() != total {
		t.Fatalf("Len, Total = %d, %d; want %d, %d", e.Len(), e.Total(), len(flat), total)
	}
	for i := range int64(len(flat)) + 1 {
		want := int64(0)
		if i < int64(len(flat)) {
			want = flat[i]
		}
		if got := e.At(i); got != want {
			t.Fatalf("At(%d) = %d, want %d", i, got, want)
		}
	}
	for from := range len(flat) + 1 {
		for to := from; to <= len(flat); to++ {
			var want int64
			for _, s := range flat[from:to] {
				want += s
			}
			if got := e.Sum(int64(from), int64(to)); got != want {
				t.Fatalf("Sum(%d, %d) = %d, want %d", from, to, got, want)
			}
		}
	}
}
