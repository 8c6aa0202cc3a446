package memmodel

import (
	"bytes"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/scenarios"
)

func TestFileSizePart(t *testing.T) {
	for _, tc := range []struct {
		size                   int64
		file, process, request int64
	}{
		{-1, 0, 64 << 20, 2 << 20},
		{0, 0, 64 << 20, 2 << 20},
		{1 << 20, 4 << 20, 68 << 20, 6 << 20},
	} {
		if got := FileBytes(tc.size); got != tc.file {
			t.Errorf("FileBytes(%d) = %d, want %d", tc.size, got, tc.file)
		}
		if got := ProcessBytes(tc.size); got != tc.process {
			t.Errorf("ProcessBytes(%d) = %d, want %d", tc.size, got, tc.process)
		}
		if got := RequestBytes(tc.size); got != tc.request {
			t.Errorf("RequestBytes(%d) = %d, want %d", tc.size, got, tc.request)
		}
	}
	if got := CachedRequestBytes(1 << 20); got != 4<<20 {
		t.Errorf("CachedRequestBytes(1 MiB) = %d, want 4 MiB", got)
	}
}

// TestRecordPart: 20k operators of one subtask each; rows follow the plan's default
// parallelism (or the stored one) plus each per-vertex parallelism, and count only when asked.
func TestRecordPart(t *testing.T) {
	var b bytes.Buffer
	if err := scenarios.WriteSynthetic(&b, scenarios.SyntheticOperators(20_000)); err != nil {
		t.Fatal(err)
	}
	l, err := checkpoint.ReadLayout(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	size := int64(b.Len())
	for _, tc := range []struct {
		name   string
		rows   bool
		def    int32
		vertex map[string]int32
		want   int64
	}{
		{"no rows", false, 2, nil, 0},
		{"default parallelism 2", true, 2, nil, 40_000},
		{"stored parallelism", true, 0, nil, 20_000},
		{"per-vertex parallelism", true, 1, map[string]int32{"a": 8, "b": -1}, 20_008},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Count(l, tc.rows, tc.def, tc.vertex)
			if r.Operators != 20_000 || r.SubtaskRecords != 20_000 || r.Rows != tc.want {
				t.Fatalf("Count = %+v, want 20000 operators and subtask records, %d rows", r, tc.want)
			}
			want := PerOperator*20_000 + PerSubtaskRecord*20_000 + PerSubtaskRow*tc.want
			if r.Bytes() != want {
				t.Errorf("Bytes = %d, want %d", r.Bytes(), want)
			}
			if extra := CheckExtraBytes(r, size); extra != RequestBaseBytes+want-RequestBytes(size) || extra <= 0 {
				t.Errorf("CheckExtraBytes = %d: want the record part beyond the file's %d bytes", extra, RequestBytes(size))
			}
		})
	}
	if extra := CheckExtraBytes(Records{Operators: 1}, 1<<20); extra != 0 {
		t.Errorf("CheckExtraBytes of a state-heavy file = %d, want 0", extra)
	}
}
