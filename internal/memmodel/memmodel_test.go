package memmodel

import (
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/scenarios"
	"github.com/flinkpreflight/preflight/internal/scenarios/scenariotest"
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

// TestRuntimeLimit: the bound less the file-backed pages, 4 MiB and a sixteenth of the bound, but
// never below RuntimeFloorBytes above what is live.
func TestRuntimeLimit(t *testing.T) {
	for _, tc := range []struct {
		bound, fileBacked, live, want int64
	}{
		{64 << 20, 0, 0, 56 << 20},
		{64 << 20, 24 << 20, 0, 32 << 20},
		{128 << 20, 24 << 20, 0, 92 << 20},
		{128 << 20, 24 << 20, 76 << 20, 92 << 20},
		{64 << 20, 60 << 20, 0, 16 << 20},
		{128 << 20, 24 << 20, 80 << 20, 96 << 20},
	} {
		if got := RuntimeLimit(tc.bound, tc.fileBacked, tc.live); got != tc.want {
			t.Errorf("RuntimeLimit(%d, %d, %d) = %d, want %d", tc.bound, tc.fileBacked, tc.live, got, tc.want)
		}
	}
}

// TestRecordPart: 20k operators of one subtask each; rows follow the plan's default
// parallelism (or the stored one) plus each per-vertex parallelism, and count only when asked:
// every operator's (include_subtasks), or the named operators' (subtask_operators: each at the
// largest parallelism the plan may give it; an ID of no operator gets none); a check in pieces
// holds none of them but PiecesBytes.
func TestRecordPart(t *testing.T) {
	file, l := scenariotest.SyntheticLayout(t, scenarios.SyntheticOperators(20_000))
	size := int64(len(file))
	named := []string{l.Operators[5].ID.String(), strings.ToUpper(l.Operators[7].ID.String()), "0123456789abcdef0123456789abcdef"}
	for _, tc := range []struct {
		name     string
		rows     Rows
		def      int32
		vertex   map[string]int32
		want     int64
		inPieces bool
	}{
		{"no rows", Rows{}, 2, nil, 0, false},
		{"default parallelism 2", Rows{All: true}, 2, nil, 40_000, false},
		{"stored parallelism", Rows{All: true}, 0, nil, 20_000, false},
		{"per-vertex parallelism", Rows{All: true}, 1, map[string]int32{"a": 8, "b": -1}, 20_008, false},
		{"named at default parallelism 3", Rows{Operators: named}, 3, nil, 6, false},
		{"named at stored parallelism", Rows{Operators: named}, 0, nil, 2, false},
		{"named, a vertex at 8", Rows{Operators: named}, 2, map[string]int32{"a": 8, "b": -1}, 16, false},
		{"all in pieces", Rows{All: true, InPieces: true}, 2, nil, 0, true},
		{"named in pieces", Rows{Operators: named, InPieces: true}, 2, nil, 0, true},
		{"no rows in pieces", Rows{InPieces: true}, 2, nil, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Count(l, tc.rows, tc.def, tc.vertex)
			if r.Operators != 20_000 || r.SubtaskRecords != 20_000 || r.Rows != tc.want || r.InPieces != tc.inPieces {
				t.Fatalf("Count = %+v, want 20000 operators and subtask records, %d rows, in pieces %v", r, tc.want, tc.inPieces)
			}
			want := PerOperator*20_000 + PerSubtaskRecord*20_000 + PerSubtaskRow*tc.want
			if tc.inPieces {
				want += PiecesBytes
			}
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

// TestUnionRows: a row of an operator with UNION state lists every old subtask, so its rows cost
// old × new old-subtask reads on top of the rows; an operator without UNION or BROADCAST state
// adds none.
func TestUnionRows(t *testing.T) {
	for _, tc := range []struct {
		name string
		syn  scenarios.Synthetic
		old  int64 // old subtasks a row lists
	}{
		{"union", scenarios.SyntheticUnion(64), 64},
		{"split", scenarios.Synthetic{Operators: 1, Parallelism: 64, Split: 1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, l := scenariotest.SyntheticLayout(t, tc.syn)
			ops := int64(len(l.Operators))
			for _, rows := range []Rows{{All: true}, {Operators: []string{l.Operators[0].ID.String()}}} {
				r := Count(l, rows, 128, nil)
				wantRows := 128 * ops
				if len(rows.Operators) > 0 {
					wantRows = 128
				}
				if r.Rows != wantRows || r.OldReads != wantRows*tc.old {
					t.Errorf("%+v: %d rows and %d old reads, want %d and %d", rows, r.Rows, r.OldReads, wantRows, wantRows*tc.old)
				}
			}
		})
	}
}
