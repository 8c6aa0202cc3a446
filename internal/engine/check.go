package engine

import (
	"context"
	"iter"
	"slices"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/rescale"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// SubtaskDetail says which per-subtask rows a report carries.
type SubtaskDetail uint8

const (
	// SubtasksAsAsked follows CheckOptions.include_subtasks: every new subtask of every
	// restored operator, or none; or, with chart_subtasks alone, the rows of SubtasksForChart.
	SubtasksAsAsked SubtaskDetail = iota
	// SubtasksForChart carries only what report.WriteText's before/after chart shows: the
	// operators named by a finding at WARNING or above (else the one operator with the most state
	// after the restore), and of each at most ChartRows subtasks (the first and last four, the
	// four with the least and the four with the most operator-state bytes). The rows are chosen
	// from per-subtask totals, so the cost is linear in old + new parallelism even for UNION state,
	// and the report's memory does not grow with the number of operators × subtasks.
	SubtasksForChart
)

// ChartRows is the most subtasks SubtasksForChart keeps per operator.
const ChartRows = 16

// StreamStates is how many of an operator's states a streamed message (Request.Each) describes:
// the first three, which report.WriteText's operators table names (the others it counts).
const StreamStates = 3

// uncounted stands for every state a streamed message does not describe (nothing writes it).
var uncounted = &pb.StateAssignment{}

// ChartOperators is the most operators SubtasksForChart gives rows: report.MaxCharts, the
// charts report.WriteText draws (engine cannot import report, whose tests import engine).
const ChartOperators = 8

// rangeOperators and rangeSubtasks cut a job into the ranges of vertices a check simulates at
// a time: a range ends after the vertex that brings it to this many operators or old
// subtasks. A range's simulation (its bytes an operator: bench/README.md, "Operator-heavy files,
// CLI and daemon") is released before the next range is simulated.
// (Variables so that tests can cut every vertex into a range of its own.)
var (
	rangeOperators = 2048
	rangeSubtasks  = 1 << 16
)

// check runs the simulator and the rules on the (validated) plan and builds the API report,
// stopping when ctx ends; a decode that finished as ctx ended does not start a simulation.
// c.each nil: the report lists every operator. each set: every operator's message goes to each,
// in report order, and the report keeps only those its text needs (charted, or named by a
// finding or a safe-parallelism entry); see Request.Each. pieces set: every operator goes to
// pieces, its rows a chunk at a time, and none is kept; see Request.Pieces.
//
// The job is simulated, checked and converted range of vertices by range (findings.Session),
// so that the memory of a check is the layout, the report and one range's simulation. With the
// JobManager-memory rule on (it sums every vertex), a first pass over the ranges keeps each
// vertex's payload total, so the job is simulated twice.
func (e *Engine) check(ctx context.Context, c checkRun, p *pb.RescalePlan) (_ *pb.RescaleReport, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	stop, release := cancel.Watch(ctx)
	defer release()
	defer cancel.Recover(&err)
	plan := toRescalePlan(p, c.opts)
	fopts := findingsOptions(c.opts)
	b := &reportBuilder{stop: stop, detail: c.detail, include: c.opts.GetIncludeSubtasks(), rowsFor: subtaskOperators(c.opts), each: c.each,
		pieces: c.pieces, statesInPieces: c.statesInPieces, out: &pb.RescaleReport{Checkpoint: summary(c.layout, c.source)}}
	s, err := findings.NewSession(ctx, c.layout, plan, e.catalog, fopts)
	if err != nil {
		return nil, err
	}
	rs := s.Resimulator()
	b.setShortIDs(rs.Operators())
	if err := payloadPass(ctx, s); err != nil {
		return nil, err
	}
	err = eachRange(rs, func(from, to int) error {
		res, fs, err := s.Vertices(ctx, from, to)
		if err == nil {
			b.add(res, fs)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	rep, err := s.Finish(ctx)
	if err != nil {
		return nil, err
	}
	b.finish(rep)
	return b.out, nil
}

// eachRange calls fn with consecutive ranges of the resolved plan's vertices covering the job,
// each ending after the vertex that brings it to rangeOperators operators or rangeSubtasks old
// subtasks.
func eachRange(rs *rescale.Resimulator, fn func(from, to int) error) error {
	for from, n := 0, rs.NumVertices(); from < n; {
		to, ops, subtasks := from, 0, 0
		for to < n && ops < rangeOperators && subtasks < rangeSubtasks {
			o, st := rs.VertexSize(to)
			ops, subtasks, to = ops+o, subtasks+st, to+1
		}
		if err := fn(from, to); err != nil {
			return err
		}
		from = to
	}
	return nil
}

// payloadPass runs the session's first pass over the ranges when the JobManager-memory rule,
// which sums every vertex, needs it.
func payloadPass(ctx context.Context, s *findings.Session) error {
	if !s.NeedsPayloadPass() {
		return nil
	}
	return eachRange(s.Resimulator(), func(from, to int) error { return s.PayloadPass(ctx, from, to) })
}

// reportBuilder converts simulated ranges into the report's operator messages as they come, so
// that a range's simulation can be released once converted.
type reportBuilder struct {
	stop    *cancel.Flag
	detail  SubtaskDetail
	include bool            // CheckOptions.include_subtasks
	rowsFor map[string]bool // CheckOptions.subtask_operators, lower case: every subtask of these
	each    func(*pb.OperatorAssignment)
	pieces  OperatorPieces // set: every operator goes there, in parts, and none is kept
	// statesInPieces: an operator whose state messages are converted a chunk at a time
	// (releaseStates) goes to pieces with them in parts.
	statesInPieces bool
	out            *pb.RescaleReport
	// merge holds the findings until finish, one per rule and cause on many operators.
	merge findings.OperatorMerger

	// shortLen is the length of every reported operator's short ID, in report order; next is
	// the index of the next operator added.
	shortLen []uint8
	next     int

	// charted: some operator named by a finding at WARNING or above got chart rows; otherwise
	// finish charts best, the operator with the most state (the rescaled one first).
	charted      bool
	nCharted     int // operators given chart rows, at most ChartOperators
	best         *rescale.OperatorAssignment
	bestMsg      *pb.OperatorAssignment
	bestKept     bool
	bestBytes    int64
	bestRescaled bool
}

// setShortIDs computes the short ID of every operator the report will list, before any is
// added: a short ID must be unique among all of them. Kept as a length (one byte an operator);
// the message's short_id is a prefix of its operator_id string.
func (b *reportBuilder) setShortIDs(ops iter.Seq[checkpoint.OperatorID]) {
	var ids []checkpoint.OperatorID // 16 bytes an operator while the short IDs are computed
	for id := range ops {
		b.stop.Check()
		ids = append(ids, id)
	}
	b.shortLen = make([]uint8, len(ids))
	shortIDs(len(ids), func(i int) string { return ids[i].String() }, func(i int, s string) { b.shortLen[i] = uint8(len(s)) })
}

// add converts a range's operators (res in report order) and findings fs, and drops the
// range's vertices from res as it goes.
func (b *reportBuilder) add(res *rescale.Result, fs []findings.Finding) {
	b.merge.Add(fs)
	named, referenced := b.namedBy(fs)
	// The states each message describes from the range's slab of messages: with each set, the
	// rest point to uncounted; on the API path without subtasks, an operator of many states has
	// its own messages, converted a chunk at a time (releaseStates).
	release := b.each == nil && b.detail == SubtasksAsAsked && !b.include && len(b.rowsFor) == 0
	described := func(op *rescale.OperatorAssignment) int {
		switch {
		case b.each != nil:
			return min(op.NumStates(), StreamStates)
		case release && op.NumStates() > releaseChunk:
			return 0
		}
		return op.NumStates()
	}
	n, nStates := 0, 0
	for _, v := range res.Vertices {
		n += len(v.Operators)
		for _, op := range v.Operators {
			nStates += described(op)
		}
	}
	// The messages of one kind come from one allocation each per range rather than one per
	// message: a cached file checked again allocates mostly in the simulation.
	opMsgs := make([]pb.OperatorAssignment, n)
	stateMsgs := make([]pb.StateAssignment, nStates)
	statePtrs := make([]*pb.StateAssignment, nStates)
	for vi, v := range res.Vertices {
		// Nothing reads the vertex after its operators are converted: drop it from the result so
		// that its simulation can be released while the report grows.
		res.Vertices[vi] = nil
		vid := v.ID.String()
		for _, op := range v.Operators {
			b.stop.Check()
			a := &opMsgs[0]
			opMsgs = opMsgs[1:]
			operatorAssignment(v, vid, op, a)
			// An operator whose states go to pieces has them converted as they are handed on
			// (piecesOfStates).
			k := described(op)
			inPieces := k == 0 && op.NumStates() > 0 && b.pieces != nil && b.statesInPieces
			switch {
			case k > 0 || op.NumStates() == 0:
				stateMessages(b.stop, op, a, stateMsgs[:k:k], statePtrs[:0:k])
				stateMsgs, statePtrs = stateMsgs[k:], statePtrs[k:]
			case !inPieces:
				releaseStates(b.stop, op, a)
			}
			// The ranges list the operators setShortIDs was given, in its order.
			a.ShortId = prefix(a.OperatorId, int(b.shortLen[b.next]))
			b.next++
			// A vertex head named by its vertex only needs its report entry when it is unnamed.
			kept := b.each == nil || referenced[a.OperatorId] && (op.Name == "" && op.UID == "" || op.ID != v.ID)
			every := b.detail == SubtasksAsAsked && b.include || b.rowsFor[a.OperatorId] // every subtask's row
			switch {
			case !hasSubtasks(op):
			case every && b.pieces != nil:
				b.rowsInPieces(op, a)
				continue
			case every:
				a.Subtasks = make([]*pb.SubtaskAssignment, 0, op.NewParallelism)
				states := op.States() // built once for the new and the old rows
				subtaskRows(b.stop, op, states, func(sa *pb.SubtaskAssignment) { a.Subtasks = append(a.Subtasks, sa) })
				a.OldSubtasks = oldSubtasks(b.stop, op, states)
			case b.detail == SubtasksForChart && named[a.OperatorId]:
				b.charted = true
				if b.nCharted < ChartOperators {
					b.chart(op, a)
					b.nCharted, kept = b.nCharted+1, true
				}
			}
			if b.pieces != nil {
				if inPieces {
					b.piecesOfStates(op, a)
				} else {
					b.piece(a, false)
				}
				continue
			}
			if b.each != nil {
				b.each(a)
				if kept {
					// The text report reads a kept operator's states only for whether it has
					// any (its row is in the table already): one stands for all of them, so an
					// operator of 300,000 states is not copied whole. The message is one of the
					// range's slab: a copy keeps the slab collectable.
					a.States = a.States[:min(len(a.States), 1)]
					a = proto.Clone(a).(*pb.OperatorAssignment)
				}
			}
			if kept {
				b.out.Operators = append(b.out.Operators, a)
			}
			if b.detail == SubtasksForChart && !b.charted && hasSubtasks(op) {
				// A candidate for the chart of a report without named operators, as
				// report.WriteText picks it: the rescaled operator with the most state, else
				// the operator with the most state.
				bytes := op.Summary.TotalStateBytes + op.Summary.KeyedTotalOwnedBytes
				rescaled := op.OldParallelism != op.NewParallelism
				if bytes > 0 && (b.best == nil || rescaled && !b.bestRescaled || rescaled == b.bestRescaled && bytes > b.bestBytes) {
					b.best, b.bestMsg, b.bestKept, b.bestBytes, b.bestRescaled = op, a, kept, bytes, rescaled
				}
			}
		}
	}
}

// OperatorPieces receives a report's operators in report order, in parts: a part not continued is
// an operator's message with its first rows (subtasks), a continued part holds the operator_id of
// the operator before it and more of its subtasks and old_subtasks, to be appended (the format of
// the API's OperatorPage). The receiver owns each part. An error ends the check with it.
type OperatorPieces func(op *pb.OperatorAssignment, continued bool) error

// rowChunkBytes is about how many bytes of subtask rows (their encoded size) rowsInPieces builds
// before handing them on: a row of a UNION operator lists every old subtask it reads, so an
// operator's rows can be far larger than the rest of the report (bench/README.md, "Subtask
// detail streamed end to end").
var rowChunkBytes = 64 << 10 // a variable so that tests can cut every row into a part of its own

// rowsInPieces hands op's message a with its rows (include_subtasks) to pieces a chunk at a time,
// then its old subtasks likewise, so that the rows held are one chunk, not the operator's: an
// operator of many states and a high old parallelism has old parallelism × states messages.
func (b *reportBuilder) rowsInPieces(op *rescale.OperatorAssignment, a *pb.OperatorAssignment) {
	part, continued, size := a, false, 0
	added := func(n int) {
		if size += n; size >= rowChunkBytes {
			b.piece(part, continued)
			part, continued, size = &pb.OperatorAssignment{OperatorId: a.OperatorId}, true, 0
		}
	}
	states := op.States() // built once for the new and the old rows
	subtaskRows(b.stop, op, states, func(sa *pb.SubtaskAssignment) {
		part.Subtasks = append(part.Subtasks, sa)
		added(proto.Size(sa))
	})
	oldSubtaskRows(b.stop, op, states, func(o *pb.OldSubtaskState) {
		part.OldSubtasks = append(part.OldSubtasks, o)
		added(proto.Size(o))
	})
	if !continued || len(part.Subtasks)+len(part.OldSubtasks) > 0 {
		b.piece(part, continued)
	}
}

// piecesOfStates hands op's message a (without rows) to pieces with its states releaseChunk at a
// time, the first in a's part and the others in continued parts: the messages held are one
// chunk, not the operator's.
func (b *reportBuilder) piecesOfStates(op *rescale.OperatorAssignment, a *pb.OperatorAssignment) {
	part, continued := a, false
	var st rescale.StateDistribution // one state at a time (OperatorAssignment.StateInto)
	for i := 0; i < op.NumStates(); i += releaseChunk {
		n := min(releaseChunk, op.NumStates()-i)
		msgs := make([]pb.StateAssignment, n)
		part.States = make([]*pb.StateAssignment, n)
		for k := range n {
			b.stop.Check()
			op.StateInto(i+k, &st)
			stateMessage(&st, &msgs[k])
			part.States[k] = &msgs[k]
		}
		b.piece(part, continued)
		part, continued = &pb.OperatorAssignment{OperatorId: a.OperatorId}, true
	}
}

// piece hands a part to pieces; its error unwinds the check (cancel.Recover returns it).
func (b *reportBuilder) piece(op *pb.OperatorAssignment, continued bool) {
	if err := b.pieces(op, continued); err != nil {
		cancel.Unwind(err)
	}
}

// namedBy returns the operators fs names at WARNING or above (charted), and those whose label the
// text takes from the report (report.indexReferenced): named by a finding without their name or
// uid, or heading a vertex a finding names.
func (b *reportBuilder) namedBy(fs []findings.Finding) (named, referenced map[string]bool) {
	named, referenced = map[string]bool{}, map[string]bool{}
	for _, f := range fs {
		b.stop.Check()
		if f.OperatorID != "" && f.Severity >= findings.Warning {
			named[f.OperatorID] = true
		}
		if b.each != nil {
			if f.OperatorName == "" && f.OperatorUID == "" {
				referenced[f.OperatorID] = true
			}
			referenced[f.VertexID] = true
		}
	}
	return named, referenced
}

// chart adds the rows report.WriteText's chart shows for op to its message a.
func (b *reportBuilder) chart(op *rescale.OperatorAssignment, a *pb.OperatorAssignment) {
	for _, i := range chartRows(b.stop, op) {
		a.Subtasks = append(a.Subtasks, subtaskAssignment(op, i))
	}
	// The chart shows the old subtasks a scale-down removes.
	if op.OldParallelism > op.NewParallelism {
		a.OldSubtasks = oldSubtasks(b.stop, op, op.States())
	}
}

// finish adds the verdict, the findings and the safe parallelisms, and the chart of the
// operator with the most state when no finding named one.
func (b *reportBuilder) finish(rep findings.Report) {
	out := b.out
	if b.detail == SubtasksForChart && !b.charted && b.best != nil {
		if len(b.bestMsg.Subtasks) == 0 { // subtask_operators gave it every row already
			b.chart(b.best, b.bestMsg)
		}
		if !b.bestKept {
			out.Operators = append(out.Operators, b.bestMsg)
		}
	}
	b.best, b.bestMsg = nil, nil
	out.Verdict = pb.Verdict(rep.Verdict)
	// The ranges' findings were merged as they came (add); the job-wide ones join them, and
	// all are converted in the order findings.Check gives.
	b.merge.Add(rep.Findings)
	b.addFindings(b.merge.Findings())
	sort.SliceStable(out.Findings, func(i, j int) bool { return findingOrder(out.Findings[i]).Before(findingOrder(out.Findings[j])) })
	for _, s := range rep.Safe {
		out.SafeParallelism = append(out.SafeParallelism, &pb.SafeParallelism{
			VertexId: s.VertexID, VertexName: s.VertexName, Requested: s.Requested, Below: s.Below, Above: s.Above,
		})
	}
}

// findingOrder is the sort key findings.Check orders its findings by.
func findingOrder(f *pb.Finding) findings.Order {
	first := int32(-1)
	if len(f.GetAffectedSubtasks()) > 0 {
		first = f.GetAffectedSubtasks()[0]
	}
	return findings.Order{Severity: findings.Severity(f.GetSeverity()), RuleID: f.GetRuleId(), Position: f.GetOperatorPosition(), VertexID: f.GetVertexId(),
		OperatorID: f.GetOperatorId(), StateName: f.GetStateName(), FirstSubtask: first, Message: f.GetMessage()}
}

// addFindings converts findings into the report's messages (one allocation for all of them).
func (b *reportBuilder) addFindings(fs []findings.Finding) {
	findingMsgs := make([]pb.Finding, len(fs))
	b.out.Findings = slices.Grow(b.out.Findings, len(fs))
	for i, f := range fs {
		b.stop.Check()
		fm := &findingMsgs[i]
		*fm = pb.Finding{
			RuleId:           f.RuleID,
			Title:            f.Title,
			Severity:         pb.Severity(f.Severity),
			OperatorId:       f.OperatorID,
			OperatorName:     f.OperatorName,
			OperatorUid:      f.OperatorUID,
			VertexId:         f.VertexID,
			StateName:        f.StateName,
			StateNames:       f.StateNames,
			AffectedSubtasks: f.AffectedSubtasks,
			Message:          f.Message,
			Remediation:      f.Remediation,
			References:       f.References,
			CatalogEntry:     f.CatalogEntry,
			OperatorPosition: f.Position,
			OperatorIds:      f.OperatorIDs,
		}
		b.out.Findings = append(b.out.Findings, fm)
	}
}

// hasSubtasks reports whether the report can list the operator's new subtasks.
func hasSubtasks(op *rescale.OperatorAssignment) bool {
	return op.Layout != nil && !op.FullyFinished && op.NewParallelism > 0
}

// chartRows returns, in ascending order, the subtasks a chart shows: all up to ChartRows, else
// the first four, the last four, and the four with the least and the most operator-state bytes
// (ties: the lower index counts as less).
func chartRows(stop *cancel.Flag, op *rescale.OperatorAssignment) []int {
	n := op.NewParallelism
	if n <= ChartRows {
		rows := make([]int, n)
		for i := range rows {
			rows[i] = i
		}
		return rows
	}
	bytes := make([]int64, n)
	order := make([]int, n)
	for i := range bytes {
		stop.Check()
		bytes[i] = op.SubtaskTotals(i).StateBytes
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return bytes[order[a]] < bytes[order[b]] })
	keep := map[int]bool{}
	for k := 0; k < 4; k++ {
		keep[k], keep[n-1-k], keep[order[k]], keep[order[n-1-k]] = true, true, true, true
	}
	rows := make([]int, 0, len(keep))
	for i := range keep {
		rows = append(rows, i)
	}
	sort.Ints(rows)
	return rows
}

// operatorAssignment fills out with what the simulator gave one operator, without states
// (stateMessages or releaseStates) and subtasks. vid is the vertex ID's hex, shared by the
// operators of the vertex (and by the head operator's ID).
func operatorAssignment(v *rescale.VertexAssignment, vid string, op *rescale.OperatorAssignment, out *pb.OperatorAssignment) {
	s := op.Summary
	id := vid
	if op.ID != v.ID {
		id = op.ID.String()
	}
	*out = pb.OperatorAssignment{
		OperatorId:             id,
		Name:                   op.Name,
		Uid:                    op.UID,
		VertexId:               vid,
		OldParallelism:         int32(op.OldParallelism),
		NewParallelism:         int32(op.NewParallelism),
		MaxParallelism:         int32(op.MaxParallelism),
		CoordinatorStateBytes:  op.CoordinatorBytes,
		FullyFinished:          op.FullyFinished,
		MaxSubtaskPayloadBytes: s.MaxPayloadBytes,
		TotalPayloadBytes:      s.TotalPayloadBytes,
		Position:               int32(op.LayoutIndex() + 1),
		UidByHash:              op.UIDByHash,
	}
	if op.ManagedKeyed != nil || op.RawKeyed != nil {
		k := &pb.KeyedAssignment{
			Bytes:          s.KeyedBytes,
			MaxReadBytes:   s.KeyedMaxReadBytes,
			MeanOwnedBytes: s.KeyedMeanOwnedBytes,
			Skew:           s.KeyedSkew,
		}
		var seen []checkpoint.KeyedHandleKind // a handful of kinds at most
		for _, d := range [2]*rescale.KeyedDistribution{op.ManagedKeyed, op.RawKeyed} {
			if d == nil {
				continue
			}
			for _, kind := range d.Kinds {
				if !slices.Contains(seen, kind) {
					seen = append(seen, kind)
					k.HandleKinds = append(k.HandleKinds, kind.String())
				}
			}
		}
		out.Keyed = k
	}
}

// subtaskAssignment is one report row: the subtask's totals and the old subtasks it reads,
// computed without listing its old entries (a UNION state would list every old subtask's).
func subtaskAssignment(op *rescale.OperatorAssignment, i int) *pb.SubtaskAssignment {
	st := op.SubtaskTotals(i)
	out := &pb.SubtaskAssignment{
		Index:           int32(st.Index),
		Elements:        st.Elements,
		StateBytes:      st.StateBytes,
		InlineBytes:     st.InlineBytes,
		Offsets:         st.Offsets,
		KeyGroupStart:   -1,
		KeyGroupEnd:     -1,
		KeyedReadBytes:  st.KeyedReadBytes,
		KeyedOwnedBytes: st.KeyedOwnedBytes,
		PayloadBytes:    st.PayloadBytes,
		BytesBefore:     st.BytesBefore,
	}
	if st.KeyGroups.NumKeyGroups > 0 {
		out.KeyGroupStart = int32(st.KeyGroups.Start)
		out.KeyGroupEnd = int32(st.KeyGroups.End())
	}
	out.FromOldSubtasks = op.OldSubtasksRead32(i)
	return out
}

// subtaskOperators is CheckOptions.subtask_operators as a set of the report's operator IDs
// (ValidateRequest checked them), nil when empty.
func subtaskOperators(opts *pb.CheckOptions) map[string]bool {
	if len(opts.GetSubtaskOperators()) == 0 {
		return nil
	}
	set := make(map[string]bool, len(opts.GetSubtaskOperators()))
	for _, id := range opts.GetSubtaskOperators() {
		set[strings.ToLower(id)] = true
	}
	return set
}

// findingsOptions is the rules' view of the request's check options.
func findingsOptions(opts *pb.CheckOptions) findings.Options {
	return findings.Options{
		FlinkVersion:            opts.GetFlinkVersion(),
		ConnectorVersions:       opts.GetConnectorVersions(),
		RPCFrameSize:            opts.GetRpcFrameSizeBytes(),
		InlineThreshold:         opts.GetInlineStateThresholdBytes(),
		JobManagerMemory:        opts.GetJobmanagerMemoryBytes(),
		AllowNonRestoredState:   opts.GetAllowNonRestoredState(),
		RestoreMode:             RestoreMode(opts.GetRestoreMode()),
		KafkaTransactionTimeout: time.Duration(opts.GetKafkaTransactionTimeoutMs()) * time.Millisecond,
		SnapshotTime:            snapshotTime(opts.GetSnapshotTime()),
		// The API's severities and the rules' share ordinals.
		FailLevel: findings.Severity(opts.GetFailLevel()),
	}
}

// snapshotTime parses CheckOptions.snapshot_time (validated by ValidateRequest); the zero time
// when it is empty or malformed.
func snapshotTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// probeOptions is findingsOptions with an unset fail level meaning ERROR: a probe must decide
// what denies.
func probeOptions(opts *pb.CheckOptions) findings.Options {
	o := findingsOptions(opts)
	if opts.GetFailLevel() == pb.Severity_SEVERITY_UNSPECIFIED {
		o.FailLevel = findings.Severity(pb.Severity_SEVERITY_ERROR)
	}
	return o
}

// releaseChunk is how many state messages releaseStates allocates at a time, and the fewest
// states for which an operator's state messages are converted a chunk at a time.
const releaseChunk = 4096

// stateMessages lists op's states in out, their messages in stateMsgs through statePtrs
// (capacity len(stateMsgs)). Where stateMsgs is shorter than op.NumStates() (Request.Each), the states
// beyond it are listed as uncounted, the one empty message they share. It checks stop per state
// (runs under cancel.Recover).
func stateMessages(stop *cancel.Flag, op *rescale.OperatorAssignment, out *pb.OperatorAssignment, stateMsgs []pb.StateAssignment, statePtrs []*pb.StateAssignment) {
	n := op.NumStates()
	if n > 0 {
		out.States = statePtrs
	}
	if len(stateMsgs) < n {
		out.States = make([]*pb.StateAssignment, 0, n)
	}
	var st rescale.StateDistribution // one state at a time (OperatorAssignment.StateInto)
	for i := range n {
		stop.Check()
		if i >= len(stateMsgs) {
			out.States = append(out.States, uncounted)
			continue
		}
		op.StateInto(i, &st)
		stateMessage(&st, &stateMsgs[i])
		out.States = append(out.States, &stateMsgs[i])
	}
}

// releaseStates lists op's states in out, their messages releaseChunk at a time rather than in
// the range's slab, so that the slab of a range with an operator of 300,000 states is not one
// allocation of all their messages. Only for the API report without subtasks.
func releaseStates(stop *cancel.Flag, op *rescale.OperatorAssignment, out *pb.OperatorAssignment) {
	n := op.NumStates()
	out.States = make([]*pb.StateAssignment, n)
	var msgs []pb.StateAssignment
	var st rescale.StateDistribution // one state at a time (OperatorAssignment.StateInto)
	for i := range n {
		stop.Check()
		if len(msgs) == 0 {
			msgs = make([]pb.StateAssignment, min(n-i, releaseChunk))
		}
		op.StateInto(i, &st)
		stateMessage(&st, &msgs[0])
		out.States[i], msgs = &msgs[0], msgs[1:]
	}
}

// stateMessage fills sm with what the report says of one state.
func stateMessage(st *rescale.StateDistribution, sm *pb.StateAssignment) {
	*sm = pb.StateAssignment{
		Name:                  st.Name,
		Mode:                  st.Mode.String(),
		Raw:                   st.Raw,
		Elements:              st.Elements,
		Bytes:                 st.Bytes,
		MinElementsPerSubtask: st.Summary.MinElements,
		MaxElementsPerSubtask: st.Summary.MaxElements,
		EmptySubtasks:         st.Summary.EmptySubtasks,
	}
}
