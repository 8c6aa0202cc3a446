package checkpoint

import (
	"bytes"
	"testing"
)

// largeKeyedFile generates a file dominated by key-group offsets: ops operators at max
// parallelism 32768 (Flink's upper bound), each split over parallelism subtasks whose managed
// keyed state is a KeyGroupsStateHandle (tag 3) with one offset per key group of its range. The
// key groups hold 16 to 79 bytes each, and every 13th is empty (offset 0), as a heap backend
// writes them.
func largeKeyedFile(tb testing.TB, ops, parallelism int) []byte {
	const maxParallelism = 1 << 15
	m := &Metadata{Version: 6, CheckpointID: 1, Trailer: mustHex(templateA)}
	for o := range ops {
		uid := "keyed-" + string(rune('a'+o%26)) + string(rune('a'+o/26))
		op := OperatorState{ID: OperatorIDFromUID(uid), UID: uid, Parallelism: int32(parallelism), MaxParallelism: maxParallelism}
		for i := range parallelism {
			// KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex.
			start := (i*maxParallelism + parallelism - 1) / parallelism
			end := ((i+1)*maxParallelism+parallelism-1)/parallelism - 1
			offs := make([]int64, end-start+1)
			pos := int64(64)
			for k := range offs {
				if (start+k)%13 == 0 {
					continue
				}
				offs[k] = pos
				pos += 16 + int64((start+k)*7%64)
			}
			h := &KeyGroupsStateHandle{Tag: TagKeyGroupsHandle, StartKeyGroup: int32(start), NumKeyGroups: int32(len(offs)),
				Offsets: offs, Delegate: &FileStateHandle{Path: "s3://bucket/chk-1/" + uid, StateSize: pos}}
			op.Subtasks = append(op.Subtasks, SubtaskEntry{Index: int32(i), State: &SubtaskState{ManagedKeyedState: h}})
		}
		m.Operators = append(m.Operators, op)
	}
	var buf bytes.Buffer
	if err := Write(&buf, m); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkLargeKeyedOffsets decodes 64 operators × 32768 key groups (16 MiB of key-group
// offsets at parallelism 16); the list-state counterpart is BenchmarkLargeUnionOffsets.
func BenchmarkLargeKeyedOffsets(b *testing.B) {
	data := largeKeyedFile(b, 64*largeScale(), 16)
	b.Logf("file: %d MiB", len(data)>>20)
	benchLarge(b, data)
}
