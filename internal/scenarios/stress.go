package scenarios

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// stressNameFormat names the states: "s" and nine digits, so that every record has one width.
const stressNameFormat = "s%09d"

// WriteManyStateNames streams a format-3 _metadata file with one operator (uid "stress", stored
// parallelism 1, max parallelism 128) whose single subtask holds n SPLIT_DISTRIBUTE names of one
// element each: the input that stresses every per-name loop (Java HashMap order, distributions,
// rules, reports) in 23 bytes per name, without building n entries in memory. For deadline and
// scale tests and benchmarks.
func WriteManyStateNames(w io.Writer, n int) error {
	if n < 1 || n > 1e9 {
		return fmt.Errorf("WriteManyStateNames: n = %d, want 1..1e9 (nine-digit names)", n)
	}
	// A one-name file from the encoder, split around its name: everything before the name
	// (ending with the name count), the name's record, and everything after it.
	first := fmt.Sprintf(stressNameFormat, 0)
	m := &checkpoint.Metadata{Version: 3, CheckpointID: 1, Trailing: []byte{}, Operators: []checkpoint.OperatorState{{
		ID: checkpoint.OperatorIDFromUID("stress"), Parallelism: 1, MaxParallelism: 128,
		Subtasks: []checkpoint.SubtaskEntry{{Index: 0, State: &checkpoint.SubtaskState{
			ManagedOperatorState: checkpoint.OperatorStateSlot{Present: 1, Handle: &checkpoint.OperatorStateHandle{
				Tag:      checkpoint.TagPartitionableOperatorStateHandle,
				States:   []checkpoint.StateEntry{{Name: first, Mode: checkpoint.SplitDistribute, Offsets: []int64{0}}},
				Delegate: &checkpoint.FileStateHandle{Path: "file:/stress/chk-1/op", StateSize: int64(n) * 8},
			}},
		}}},
	}}}
	var tmpl bytes.Buffer
	if err := checkpoint.Write(&tmpl, m); err != nil {
		return err
	}
	b := tmpl.Bytes()
	at := bytes.Index(b, append([]byte{0, byte(len(first))}, first...))
	if at < 4 {
		return fmt.Errorf("WriteManyStateNames: the encoder's layout changed (name not found)")
	}
	record := 2 + len(first) + 1 + 4 + 8 // name, mode, offset count, one offset
	bw := bufio.NewWriterSize(w, 1<<16)
	head := bytes.Clone(b[:at])
	binary.BigEndian.PutUint32(head[at-4:], uint32(n))
	if _, err := bw.Write(head); err != nil {
		return err
	}
	rec := bytes.Clone(b[at : at+record])
	digits := rec[3 : 2+len(first)] // the nine digits of the name, counted up in place
	for i := 0; i < n; i++ {
		if i > 0 {
			for d := len(digits) - 1; d >= 0; d-- {
				if digits[d]++; digits[d] <= '9' {
					break
				}
				digits[d] = '0'
			}
		}
		binary.BigEndian.PutUint64(rec[record-8:], uint64(i)*8) // element i at offset 8i
		if _, err := bw.Write(rec); err != nil {
			return err
		}
	}
	if _, err := bw.Write(b[at+record:]); err != nil {
		return err
	}
	return bw.Flush()
}
