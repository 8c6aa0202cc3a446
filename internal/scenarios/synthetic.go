package scenarios

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// Synthetic describes a generated checkpoint for scale benchmarks: Operators operator records
// (format 5, names and uids "op-<k>"), each at Parallelism with every subtask reporting the same
// named list states (Split SPLIT_DISTRIBUTE, Union UNION and Broadcast BROADCAST names of
// Elements elements of ElementSize bytes), their stream a savepoint-relative file. With no states
// the subtasks are written as empty subtask records, as Flink writes stateless operators.
type Synthetic struct {
	Operators      int
	Parallelism    int
	MaxParallelism int // 0: 128, or the parallelism when larger
	Split          int
	Union          int
	Broadcast      int
	Elements       int // per state and subtask; 0 means 1
	ElementSize    int // bytes; 0 means 16
}

// SyntheticOperators is the 100,000-operator shape of the bounded-memory issue: parallelism 1,
// one SPLIT_DISTRIBUTE state with one element per operator (about 110 bytes an operator).
func SyntheticOperators(n int) Synthetic {
	return Synthetic{Operators: n, Parallelism: 1, Split: 1}
}

// SyntheticUnion is one operator at parallelism p whose every subtask holds a UNION state of one
// element (an offset map, as a legacy source writes), beside a SPLIT_DISTRIBUTE state.
func SyntheticUnion(p int) Synthetic {
	return Synthetic{Operators: 1, Parallelism: p, MaxParallelism: 32768, Split: 1, Union: 1}
}

// WriteSynthetic streams the checkpoint to w in constant memory: one operator record is encoded
// at a time (with checkpoint.Write) and copied between the file's header and trailer.
func WriteSynthetic(w io.Writer, s Synthetic) error {
	if s.Operators < 0 || s.Parallelism < 1 || s.Parallelism > 32768 {
		return fmt.Errorf("scenarios: synthetic checkpoint needs operators >= 0 and parallelism in 1..32768")
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	var head []byte
	head = binary.BigEndian.AppendUint32(head, checkpoint.Magic)
	head = binary.BigEndian.AppendUint32(head, 5)
	head = binary.BigEndian.AppendUint64(head, 4242)
	head = binary.BigEndian.AppendUint32(head, 0) // master states
	head = binary.BigEndian.AppendUint32(head, uint32(s.Operators))
	if _, err := bw.Write(head); err != nil {
		return err
	}
	// Operators are encoded a batch at a time as a file of their own: head (24 bytes), the
	// records, the trailer; the records are copied out.
	const batch = 256
	var part bytes.Buffer
	ops := make([]checkpoint.OperatorState, 0, batch)
	for k := 0; k < s.Operators; k += batch {
		ops = ops[:0]
		for j := k; j < min(k+batch, s.Operators); j++ {
			ops = append(ops, s.operator(j))
		}
		part.Reset()
		if err := checkpoint.Write(&part, &checkpoint.Metadata{Version: 5, CheckpointID: 4242, Operators: ops, Trailer: savepointTrailer}); err != nil {
			return err
		}
		b := part.Bytes()
		if _, err := bw.Write(b[len(head) : len(b)-len(savepointTrailer)]); err != nil {
			return err
		}
	}
	if _, err := bw.Write(savepointTrailer); err != nil {
		return err
	}
	return bw.Flush()
}

// operator builds record k.
func (s Synthetic) operator(k int) checkpoint.OperatorState {
	maxP := s.MaxParallelism
	if maxP == 0 {
		maxP = max(128, s.Parallelism)
	}
	name := fmt.Sprintf("op-%d", k)
	op := operator(name, name, s.Parallelism, maxP)
	elements, size := max(s.Elements, 1), max(s.ElementSize, 1)
	if s.ElementSize == 0 {
		size = 16
	}
	var states []*listState
	add := func(n int, mode checkpoint.DistributionMode, prefix string) {
		for x := 0; x < n; x++ {
			states = append(states, &listState{name: fmt.Sprintf("%s-%d", prefix, x), mode: mode, serializer: bytesSnapshot,
				count: int64(elements), size: int64(size)})
		}
	}
	add(s.Split, checkpoint.SplitDistribute, "split")
	add(s.Union, checkpoint.Union, "union")
	add(s.Broadcast, checkpoint.Broadcast, "broadcast")
	if len(states) == 0 {
		return stateless(op)
	}
	loc := location{savepoint: true, seed: "synthetic"}
	for i := 0; i < s.Parallelism; i++ {
		op.Subtasks = append(op.Subtasks, loc.subtaskWithOperatorState(name, i, states))
	}
	return op
}

// WriteSyntheticFolder writes the checkpoint as a savepoint folder: dir/_metadata and every
// state file its relative handles reference, each of its recorded size (the bytes are zeros: the
// folder is for tests that stat files, not read them). It returns the files' paths relative to
// dir, sorted.
func WriteSyntheticFolder(dir string, s Synthetic) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := WriteSynthetic(&b, s); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "_metadata"), b.Bytes(), 0o644); err != nil {
		return nil, err
	}
	sizes := map[string]int64{}
	err := checkpoint.ReadFileRefs(context.Background(), &b, 0, func(f checkpoint.FileRef) {
		if f.Kind == checkpoint.StreamRelativeFile {
			sizes[f.Path] = max(sizes[f.Path], f.MinSize())
		}
	})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(sizes))
	for name, size := range sizes {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}
