package server

import (
	"slices"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// pieceBytes is the size a piece of CheckRescaleStream stays under: far below gRPC's default
// 4 MiB receive limit and any proxy's, large enough that a page carries hundreds of operators.
// A single element larger than this (a subtask row of an operator with very many state names) is
// sent in a piece of its own.
const pieceBytes = 1 << 20

// sendPieces sends rep as CheckRescaleStream's pieces: pages of operators, then pages of
// findings, an item too large for one page spread over several (continued pages), then the report
// without its operators and findings. It reads rep and never changes it (a memoized report is
// shared).
func sendPieces(rep *pb.RescaleReport, send func(*pb.ReportPiece) error) error {
	ops := pager[*pb.OperatorAssignment]{
		spread: []protoreflect.Name{"subtasks", "old_subtasks"},
		keep:   []protoreflect.Name{"operator_id"},
		send: func(page []*pb.OperatorAssignment, continued bool) error {
			return send(&pb.ReportPiece{Piece: &pb.ReportPiece_Operators{
				Operators: &pb.OperatorPage{Operators: page, Continued: continued}}})
		},
	}
	if err := ops.sendAll(rep.GetOperators()); err != nil {
		return err
	}
	findings := pager[*pb.Finding]{
		spread: []protoreflect.Name{"state_names"},
		keep:   []protoreflect.Name{"rule_id", "operator_id"},
		send: func(page []*pb.Finding, continued bool) error {
			return send(&pb.ReportPiece{Piece: &pb.ReportPiece_Findings{
				Findings: &pb.FindingPage{Findings: page, Continued: continued}}})
		},
	}
	if err := findings.sendAll(rep.GetFindings()); err != nil {
		return err
	}
	last := shallowCopy(rep, func(f protoreflect.Name) bool { return f != "operators" && f != "findings" }).(*pb.RescaleReport)
	return send(&pb.ReportPiece{Piece: &pb.ReportPiece_Report{Report: last}})
}

// pager sends a list of messages in pages of at most pieceBytes. A message larger than a page is
// sent over several: first its fields with as many elements of its spread lists as fit, then
// continued pages holding the keep fields and the next elements.
type pager[T proto.Message] struct {
	spread, keep []protoreflect.Name
	send         func(page []T, continued bool) error
}

func (p pager[T]) sendAll(items []T) error {
	var page []T
	size := 0
	for _, it := range items {
		n := proto.Size(it)
		if len(page) > 0 && (size+n > pieceBytes || n > pieceBytes) {
			if err := p.send(page, false); err != nil {
				return err
			}
			page, size = nil, 0
		}
		if n > pieceBytes {
			if err := p.split(it); err != nil {
				return err
			}
			continue
		}
		page, size = append(page, it), size+n
	}
	if len(page) == 0 {
		return nil
	}
	return p.send(page, false)
}

// split sends one message larger than a page; each piece carries one spread element at least.
func (p pager[T]) split(it T) error {
	src := it.ProtoReflect()
	cur := shallowCopy(it, func(f protoreflect.Name) bool { return !slices.Contains(p.spread, f) })
	size, elems, continued := proto.Size(cur), 0, false
	for _, name := range p.spread {
		fd := src.Descriptor().Fields().ByName(name)
		list := src.Get(fd).List()
		for i := range list.Len() {
			n := elemSize(fd, list.Get(i))
			if elems > 0 && size+n > pieceBytes {
				if err := p.send([]T{cur.(T)}, continued); err != nil {
					return err
				}
				cur, continued = shallowCopy(it, func(f protoreflect.Name) bool { return slices.Contains(p.keep, f) }), true
				size, elems = proto.Size(cur), 0
			}
			cur.ProtoReflect().Mutable(fd).List().Append(list.Get(i))
			size, elems = size+n, elems+1
		}
	}
	return p.send([]T{cur.(T)}, continued)
}

// elemSize is about what one element of a repeated field adds to its message's encoding.
func elemSize(fd protoreflect.FieldDescriptor, v protoreflect.Value) int {
	switch fd.Kind() {
	case protoreflect.MessageKind:
		return proto.Size(v.Message().Interface()) + 4
	case protoreflect.StringKind:
		return len(v.String()) + 4
	case protoreflect.BytesKind:
		return len(v.Bytes()) + 4
	}
	return 10
}

// shallowCopy is a new message of m's type holding the fields of m that keep accepts, sharing
// their values (lists and messages are not copied).
func shallowCopy(m proto.Message, keep func(protoreflect.Name) bool) proto.Message {
	src := m.ProtoReflect()
	dst := src.New()
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if keep(fd.Name()) {
			dst.Set(fd, v)
		}
		return true
	})
	return dst.Interface()
}
