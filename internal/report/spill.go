package report

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// OperatorSpill keeps a report's operators, as a server answering in pieces sends them (pages of
// OperatorPage, an operator's subtasks continued over several), in a temporary file: the JSON
// puts the verdict and the findings before the operators, and they come last. WriteJSONSpilled
// writes the report from it, reading one part at a time, so that a report's rows, which can be
// far larger than the rest (bench/README.md, "Subtask detail streamed end to end"), are never
// held. Each part is a record: 1 if it continues the operator before it (else 0), its
// length (uvarint), the OperatorAssignment's bytes.
type OperatorSpill struct {
	f        *os.File
	w        *bufio.Writer
	parts    int
	head     []byte // a record's flag and length
	unlinked bool   // the file's name was removed at once: the open file is all there is of it
}

// NewOperatorSpill creates the spill's file in the temporary folder and, where the system allows
// it (not Windows), removes its name at once, so that nothing is left behind even if the process
// is killed; otherwise Close removes it.
func NewOperatorSpill() (*OperatorSpill, error) {
	f, err := os.CreateTemp("", "preflight-operators-*")
	if err != nil {
		return nil, err
	}
	return &OperatorSpill{f: f, w: bufio.NewWriterSize(f, 64<<10), unlinked: os.Remove(f.Name()) == nil}, nil
}

// AddPage spills a page's operators; the first continues the last one spilled when the page
// says so.
func (s *OperatorSpill) AddPage(page *pb.OperatorPage) error {
	for i, op := range page.GetOperators() {
		b, err := proto.Marshal(op)
		if err != nil {
			return err
		}
		flag := byte(0)
		if i == 0 && page.GetContinued() && s.parts > 0 {
			flag = 1
		}
		s.head = binary.AppendUvarint(append(s.head[:0], flag), uint64(len(b)))
		if _, err := s.w.Write(s.head); err != nil {
			return err
		}
		if _, err := s.w.Write(b); err != nil {
			return err
		}
		s.parts++
	}
	return nil
}

// Close closes the spill's file and removes it if its name is still there.
func (s *OperatorSpill) Close() error {
	err := s.f.Close()
	if s.unlinked {
		return err
	}
	if rerr := os.Remove(s.f.Name()); err == nil {
		err = rerr
	}
	return err
}

// WriteJSONSpilled writes rep, whose operators are in ops (rep has none), as WriteJSON writes
// the whole report: byte for byte the same (TestWriteJSONSpilled). An operator in one part is
// written as WriteJSON writes it; one continued over several parts is written from reads of its
// parts: its other fields and how many states, rows and old subtasks it has, then its
// states, its rows, its old subtasks (the JSON lists one after the other whatever order the
// parts came in).
func WriteJSONSpilled(w io.Writer, rep *pb.RescaleReport, ops *OperatorSpill) error {
	if ops == nil || ops.parts == 0 {
		return WriteJSON(w, rep)
	}
	if len(rep.GetOperators()) > 0 {
		return errors.New("report: a report with operators and spilled operators")
	}
	if err := ops.w.Flush(); err != nil {
		return err
	}
	r := &spillReader{f: ops.f, r: bufio.NewReaderSize(ops.f, 64<<10)}
	if err := r.seek(0); err != nil {
		return err
	}
	d := newIndenter(w)
	segs, err := marshalAround(rep, "operators")
	if err != nil {
		return err
	}
	d.write(segs[0])
	for n := 0; ; n++ {
		start := r.off
		op, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if n > 0 {
			d.write([]byte{','})
		}
		switch {
		case r.continues():
			err = writeOperatorParts(d, r, start, op)
		case len(op.GetStates()) > jsonChunk:
			err = writeOperatorJSON(d, op)
		default:
			err = writeList(d, &pb.RescaleReport{Operators: []*pb.OperatorAssignment{op}}, `{"operators":[`)
		}
		if err != nil {
			return err
		}
	}
	d.write(segs[1])
	return d.finish()
}

// writeOperatorParts writes the operator whose first part, first, starts at start in r and goes
// on in the parts after it; r is left after its last part.
func writeOperatorParts(d *indenter, r *spillReader, start int64, first *pb.OperatorAssignment) error {
	states, rows, old := len(first.GetStates()), len(first.GetSubtasks()), len(first.GetOldSubtasks())
	for r.continues() {
		op, err := r.next()
		if err != nil {
			return err
		}
		states, rows, old = states+len(op.GetStates()), rows+len(op.GetSubtasks()), old+len(op.GetOldSubtasks())
	}
	end := r.off
	var lists []protoreflect.Name // in field order, as the JSON lists them
	if states > 0 {
		lists = append(lists, "states")
	}
	if rows > 0 {
		lists = append(lists, "subtasks")
	}
	if old > 0 {
		lists = append(lists, "old_subtasks")
	}
	first.States, first.Subtasks, first.OldSubtasks = nil, nil, nil
	segs, err := marshalAround(first, lists...)
	if err != nil {
		return err
	}
	d.write(segs[0])
	for k, name := range lists {
		if k > 0 {
			d.write(segs[k])
		}
		if err := r.seek(start); err != nil {
			return err
		}
		written := false
		for i := 0; i == 0 || r.continues(); i++ {
			op, err := r.next()
			if err != nil {
				return err
			}
			// A part's list, jsonChunk elements at a time (a part of many states is one
			// chunk of protojson's output at a time, not all of them).
			for from := 0; ; from += jsonChunk {
				part := listChunk(op, name, from)
				if part == nil {
					break
				}
				if written {
					d.write([]byte{','})
				}
				if err := writeList(d, part, `{"`+string(part.ProtoReflect().Descriptor().Fields().ByName(name).JSONName())+`":[`); err != nil {
					return err
				}
				written = true
			}
		}
	}
	d.write(segs[len(lists)])
	return r.seek(end)
}

// listChunk returns elements [k, k+jsonChunk) of op's list name (states, subtasks or
// old_subtasks) in a message of their own; nil when k is past the list's end.
func listChunk(op *pb.OperatorAssignment, name protoreflect.Name, k int) *pb.OperatorAssignment {
	part := &pb.OperatorAssignment{}
	switch n := 0; name {
	case "states":
		if n = len(op.States); k < n {
			part.States = op.States[k:min(k+jsonChunk, n)]
		}
	case "subtasks":
		if n = len(op.Subtasks); k < n {
			part.Subtasks = op.Subtasks[k:min(k+jsonChunk, n)]
		}
	default:
		if n = len(op.OldSubtasks); k < n {
			part.OldSubtasks = op.OldSubtasks[k:min(k+jsonChunk, n)]
		}
	}
	if len(part.States)+len(part.Subtasks)+len(part.OldSubtasks) == 0 {
		return nil
	}
	return part
}

// spillReader reads an OperatorSpill's records, knowing its offset in the file.
type spillReader struct {
	f   *os.File
	r   *bufio.Reader
	off int64
}

func (r *spillReader) seek(off int64) error {
	if _, err := r.f.Seek(off, io.SeekStart); err != nil {
		return err
	}
	r.r.Reset(r.f)
	r.off = off
	return nil
}

// next reads the next part; io.EOF at the end.
// (Whether it continues the part before is what continues said before it was read.)
func (r *spillReader) next() (*pb.OperatorAssignment, error) {
	if _, err := r.r.ReadByte(); err != nil {
		return nil, err
	}
	n, err := binary.ReadUvarint(r.r)
	if err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r.r, b); err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	r.off += 1 + int64(uvarintLen(n)) + int64(n)
	op := &pb.OperatorAssignment{}
	return op, proto.Unmarshal(b, op)
}

// continues reports whether the next part continues the one read last.
func (r *spillReader) continues() bool {
	b, err := r.r.Peek(1)
	return err == nil && b[0] == 1
}

func uvarintLen(n uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], n)
}
