package rescale

import (
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// TestEntryOfOneSize: an old entry whose elements are all of one size keeps no size of its own
// (oldEntry.sizes uniformSizes, bytes / n), unless its bytes are not that size times its
// elements (a hand-made or merged record): then a part of it still counts the run's size per
// element, and the whole entry its bytes, as when the size was kept per entry.
func TestEntryOfOneSize(t *testing.T) {
	tests := []struct {
		name        string
		size, n, b  int64 // one run of n elements of size bytes; the entry's Bytes b
		newP        int
		wantPerPart int64 // bytes each new subtask receives
	}{
		{"consistent, split in three", 10, 3, 30, 3, 10},
		{"bytes not size × n, split in three", 10, 3, 35, 3, 10},
		{"bytes not size × n, whole", 10, 3, 35, 1, 35},
		{"consistent, whole", 7, 4, 28, 1, 28},
		{"consistent, split in two", 7, 4, 28, 2, 14},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := checkpoint.StateEntryLayout{Name: "s", Mode: checkpoint.SplitDistribute, Elements: tc.n, Bytes: tc.b}
			e.Sizes.Append(tc.size, tc.n)
			l := layoutOf(op(1, 1, 128, sub(0, handle("f", e))))
			r := simulate(t, l, Plan{Parallelism: map[string]int{opID(1).String(): tc.newP}})
			a := r.Vertices[0].Operators[0]
			s := a.State(0)
			for i := range tc.newP {
				if got := s.Share(i).Bytes; got != tc.wantPerPart {
					t.Errorf("subtask %d: %d bytes, want %d", i, got, tc.wantPerPart)
				}
				if got := a.Subtask(i).StateBytes; got != tc.wantPerPart {
					t.Errorf("subtask %d: Subtask's %d state bytes, want %d", i, got, tc.wantPerPart)
				}
			}
			if s.Summary.MinBytes != tc.wantPerPart || s.Summary.MaxBytes != tc.wantPerPart {
				t.Errorf("summary bytes %d..%d, want %d", s.Summary.MinBytes, s.Summary.MaxBytes, tc.wantPerPart)
			}
		})
	}
}
