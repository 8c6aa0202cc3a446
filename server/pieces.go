package server

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// pieceBytes is the size a piece of CheckRescaleStream stays under: far below gRPC's default
// 4 MiB receive limit and any proxy's, large enough that a page carries hundreds of operators.
// A single element larger than this (a subtask row of an operator with very many state names) is
// sent in a piece of its own.
const pieceBytes = 1 << 20

// streamedPieceBytes is the size the pages of operators sent as the engine converts them
// (Server.checkSending) stay under: their rows are held until the page is sent, larger in memory
// than encoded (a UNION row's from_old_subtasks are int32s in memory, one or two bytes each
// encoded), so a smaller page keeps the daemon's heap, and the client's, smaller
// (bench/README.md, "Subtask detail streamed end to end").
const streamedPieceBytes = 256 << 10

// sendPieces sends rep as CheckRescaleStream's pieces: pages of operators, then pages of
// findings, an item too large for one page spread over several (continued pages), then the report
// without its operators and findings. It reads rep and never changes it (a memoized report is
// shared). A report whose operators were sent already (operatorPager) has none left.
func sendPieces(rep *pb.RescaleReport, send func(*pb.ReportPiece) error) error {
	ops := operatorPager(send, pieceBytes)
	if err := ops.sendAll(rep.GetOperators()); err != nil {
		return err
	}
	findings := pager[*pb.Finding]{
		limit:  pieceBytes,
		spread: []protoreflect.Name{"state_names", "operator_ids"},
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

// operatorPager sends pages of operators of at most limit bytes; its add takes the parts
// engine.Request.Pieces hands on.
func operatorPager(send func(*pb.ReportPiece) error, limit int) *pager[*pb.OperatorAssignment] {
	return &pager[*pb.OperatorAssignment]{
		limit:  limit,
		spread: []protoreflect.Name{"subtasks", "old_subtasks"},
		keep:   []protoreflect.Name{"operator_id"},
		send: func(page []*pb.OperatorAssignment, continued bool) error {
			return send(&pb.ReportPiece{Piece: &pb.ReportPiece_Operators{
				Operators: &pb.OperatorPage{Operators: page, Continued: continued}}})
		},
	}
}

// pager sends a list of messages in pages of at most limit bytes. A message larger than a page is
// sent over several: first its fields with as many elements of its spread lists as fit, then
// continued pages holding the keep fields and the next elements. Messages are added one at a
// time (add, then flush), or all at once (sendAll).
type pager[T proto.Message] struct {
	spread, keep []protoreflect.Name
	limit        int
	send         func(page []T, continued bool) error

	page      []T // not sent yet
	size      int
	continued bool // the page's first message continues the last one sent
}

func (p *pager[T]) sendAll(items []T) error {
	for _, it := range items {
		if err := p.add(it, false); err != nil {
			return err
		}
	}
	return p.flush()
}

// add puts it on the page, sending the page first when it would outgrow limit. A continued
// it holds the keep fields of the message added before it and more elements of its spread
// lists: they are appended to that message while it is on the page (which then owns it; add
// never changes a message that is not continued), else it starts a continued page.
func (p *pager[T]) add(it T, continued bool) error {
	n := proto.Size(it)
	if continued && len(p.page) > 0 && p.size+n <= p.limit {
		p.merge(p.page[len(p.page)-1], it)
		p.size += n
		return nil
	}
	if len(p.page) > 0 && (p.size+n > p.limit || n > p.limit) {
		if err := p.flush(); err != nil {
			return err
		}
	}
	if n > p.limit {
		return p.split(it, continued)
	}
	if len(p.page) == 0 {
		p.continued = continued
	}
	p.page, p.size = append(p.page, it), p.size+n
	return nil
}

// flush sends the page, if any.
func (p *pager[T]) flush() error {
	if len(p.page) == 0 {
		return nil
	}
	page, continued := p.page, p.continued
	p.page, p.size, p.continued = nil, 0, false
	return p.send(page, continued)
}

// merge appends next's spread elements to last's.
func (p *pager[T]) merge(last, next T) {
	dst, src := last.ProtoReflect(), next.ProtoReflect()
	for _, name := range p.spread {
		fd := src.Descriptor().Fields().ByName(name)
		from := src.Get(fd).List()
		if from.Len() == 0 {
			continue
		}
		to := dst.Mutable(fd).List()
		for i := range from.Len() {
			to.Append(from.Get(i))
		}
	}
}

// split sends one message larger than a page (the first piece continued when it is); each piece
// carries one spread element at least.
func (p *pager[T]) split(it T, continued bool) error {
	src := it.ProtoReflect()
	cur := shallowCopy(it, func(f protoreflect.Name) bool { return !slices.Contains(p.spread, f) })
	size, elems := proto.Size(cur), 0
	for _, name := range p.spread {
		fd := src.Descriptor().Fields().ByName(name)
		list := src.Get(fd).List()
		for i := range list.Len() {
			n := elemSize(fd, list.Get(i))
			if elems > 0 && size+n > p.limit {
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

// idleSender sends an answer's pieces in a goroutine of its own, so that a send the client does
// not read can be given up: gRPC's Send waits on the stream's flow control and cannot be
// interrupted (the request's deadline, set in the handler's context, does not reach it), but
// returning from the handler ends the stream, which ends the Send. Without it, a client that
// stops reading would hold the check's slot and memory as long as it keeps its connection.
type idleSender struct {
	ctx    context.Context
	send   func(*pb.ReportPiece) error
	idle   time.Duration
	pieces chan *pb.ReportPiece
	errs   chan error // buffered: a send given up returns into it after the handler has gone
	idled  error      // the send given up: every later send fails with it at once
}

// sendWithin returns send run by an idleSender (see there) and the function that stops its
// goroutine once the handler is done sending.
func (s *Server) sendWithin(ctx context.Context, send func(*pb.ReportPiece) error) (func(*pb.ReportPiece) error, func()) {
	is := &idleSender{ctx: ctx, send: send, idle: s.cfg.SendIdleTimeout, pieces: make(chan *pb.ReportPiece), errs: make(chan error, 1)}
	go func() {
		for p := range is.pieces {
			is.errs <- is.send(p)
		}
	}()
	var once sync.Once
	return is.sendPiece, func() { once.Do(func() { close(is.pieces) }) }
}

// sendPiece sends p, or gives up when the send makes no progress for the idle timeout: the
// client then gets DEADLINE_EXCEEDED (once it reads the pieces already on their way). Not
// RESOURCE_EXHAUSTED: the daemon has room, and a client that retries on it (busy, over the budget)
// would stall the same way; DEADLINE_EXCEEDED says that time ran out on the client's side, as for
// an upload that stalls (--upload-idle-timeout), and names the flag so that its operator can tell
// a slow reader from a slow check.
func (is *idleSender) sendPiece(p *pb.ReportPiece) error {
	if is.idled != nil {
		return is.idled // the goroutine is still in the send given up
	}
	is.pieces <- p // the goroutine waits for it
	t := time.NewTimer(is.idle)
	defer t.Stop()
	select {
	case err := <-is.errs:
		return err
	case <-t.C:
		addLog(is.ctx, slog.String("ended", "send-idle"))
		is.idled = status.Errorf(codes.DeadlineExceeded, "send idle: the client read nothing of the answer for %v (--send-idle-timeout)", is.idle)
		return is.idled
	case <-is.ctx.Done():
		// The request's own deadline (or the client's cancel): a send blocked on flow control
		// does not see it.
		is.idled = status.FromContextError(is.ctx.Err()).Err()
		return is.idled
	}
}
