// Package engine runs Preflight's one pipeline: decode a _metadata stream into a Layout, simulate
// the restore plan with Flink's redistribution algorithms, apply the findings rules, and build the
// API report. The gRPC server and the CLI's embedded mode both call it, so both give the same
// answers. It owns no I/O beyond the reader it is handed; sources, limits and caching belong to
// its callers.
//
// # Memory
//
// A check holds the Layout (internal/checkpoint's package doc gives its bytes per record), the
// report and one range of vertices' simulation: the job is simulated, judged by the rules and
// converted into report messages range by range (findings.Session, ranges of up to 2,048
// operators or 65,536 old subtasks), each range's simulation released before the next is built.
// With the JobManager-memory rule on (it sums every vertex's payload), a first pass over the
// ranges keeps each vertex's payload total and the job is simulated twice, still one range at a
// time. The report holds per operator its OperatorAssignment, StateAssignments and hex IDs and,
// per subtask row, its totals and one number per old subtask read (the bytes of each: bench/README.md,
// "The memory model" and "`--jm-memory` by ranges"). Rows are built only when asked: every subtask with include_subtasks (the API), or only
// the ≤ 16 rows of the text report's chart (the CLI), chosen from per-subtask totals. The CLI's
// text check does not keep the operators' messages at all (Request.Each): its operators table is
// kept as text, the row's characters and 7 bytes. Nothing is built per (new subtask, old
// entry) unless the caller asks for that detail: UNION state costs old + new parallelism.
// Measured with BenchmarkScale and bench/scale.sh (bench/README.md, "Scale"). The estimate its
// callers bound or reserve memory by (the CLI's soft limit, the daemon's admission) is
// internal/memmodel's.
package engine

import (
	"context"
	"errors"
	"io"

	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/placement"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// Input is a _metadata stream and a label for it.
type Input struct {
	Reader io.Reader
	Source string // URI, upload name or "inline": shown in reports and logs
	// Size is the stream's expected length in bytes, 0 when unknown: the decoder sizes its
	// arrays from it once instead of growing them (a file of a million operators would
	// briefly need twice its largest array). A wrong size costs memory, not correctness.
	Size int64
}

// Engine is safe for concurrent use.
type Engine struct {
	catalog *findings.Catalog
}

// New returns an engine with the built-in operator catalog.
func New() *Engine { return &Engine{catalog: findings.DefaultCatalog()} }

// NewWithCatalog returns an engine with the given catalog (the built-in one extended with a
// user's entries, see findings.LoadCatalog).
func NewWithCatalog(cat *findings.Catalog) *Engine { return &Engine{catalog: cat} }

// Catalog is the engine's operator catalog; callers must not modify it (extend a Clone).
func (e *Engine) Catalog() *findings.Catalog { return e.catalog }

// ReadLayout decodes the stream into a Layout, honouring ctx while reading: every read of the
// stream checks it, so a decode stops within one buffer of the context's end. Malformed input
// yields a *checkpoint.FormatError; a decode stopped by ctx yields ctx's error.
func (e *Engine) ReadLayout(ctx context.Context, in Input) (*checkpoint.Layout, error) {
	l, err := checkpoint.ReadLayoutSized(ctx, cancel.Reader(ctx, in.Reader), in.Size)
	if cerr := ctx.Err(); err != nil && cerr != nil {
		return nil, cerr
	}
	return l, err
}

// Request is one check: the checkpoint, the plan and its options, and what the report carries.
// The checkpoint is either Input, a stream Check decodes, or Layout, one already decoded (the
// server caches layouts; the CLI's job checks and prune decode their own): exactly one is set.
type Request struct {
	Input  Input
	Layout *checkpoint.Layout
	// Source labels Layout in the report (a stream's label is Input.Source).
	Source  string
	Plan    *pb.RescalePlan
	Options *pb.CheckOptions
	// Detail says which per-subtask rows the report carries: SubtasksAsAsked (the API's
	// include_subtasks and chart_subtasks) or SubtasksForChart (the CLI's text report, whose
	// chart shows no other rows whatever include_subtasks says).
	Detail SubtaskDetail
	// Each, when set, makes the check stream its operators for a report too large to hold every
	// operator's message (a checkpoint of a million operators): every operator's message goes
	// to Each, in report order, and is not kept; the returned report's Operators holds only
	// those report.WriteText needs besides its operators table: the charted operators and those
	// a finding or a safe-parallelism entry names, with at most their first state. Each must not
	// keep the message it is given (report.OperatorTable keeps its row's text). The message
	// describes only the first StreamStates states (what the operators table shows); the others
	// are counted by entries that all point to one empty StateAssignment, so that an operator of
	// 300,000 states does not cost 300,000 messages. It is meant with SubtasksForChart and
	// cannot be combined with Placement, whose PF200 findings name operators only once every
	// operator has gone to Each.
	Each func(*pb.OperatorAssignment)
	// Placement, when set, is the running job's operator chains (internal/placement): the plan's
	// keys may then be JobVertexIDs, and the report gains the job's vertices and PF200 findings
	// (see checkJob).
	Placement *placement.Result
	// Pieces, when set, receives every operator as it is converted, its rows (include_subtasks,
	// or subtask_operators for the operators it names), then its old subtasks, a chunk at a time
	// (see OperatorPieces), and the returned report keeps none: for a server answering in
	// pieces, whose report (every subtask of a UNION operator lists every old subtask) can be far
	// larger than the file. It cannot be combined with chart rows (SubtasksForChart picks its
	// operators once all are seen) or Each.
	Pieces OperatorPieces
	// StatesInPieces: Pieces also takes an operator's states in parts (continued parts with
	// more states, releaseChunk at a time), so that an operator of 300,000 states is never
	// whole in messages. The API's OperatorPage continues only rows, so a server does not set it.
	StatesInPieces bool
}

// errNoCheckpoint, errStreamedJob and errPieces are a caller's mistakes, not the user's.
var (
	errNoCheckpoint = errors.New("engine: a check needs exactly one of Input.Reader and Layout")
	errStreamedJob  = errors.New("engine: a check cannot both stream operators (Each) and place them in a job (Placement)")
	errPieces       = errors.New("engine: a check in pieces (Pieces) cannot have chart rows or Each")
)

// Check validates the plan and options, decodes Input unless Layout is given, and checks the plan
// against the checkpoint. A request that is refused anyway (*PlanError, *OptionsError) is
// refused before anything is decoded. The decode, the simulation, the rules, the
// safe-parallelism search and the report stop when ctx ends and return ctx's error.
func (e *Engine) Check(ctx context.Context, req Request) (*pb.RescaleReport, error) {
	if (req.Layout == nil) == (req.Input.Reader == nil) {
		return nil, errNoCheckpoint
	}
	if req.Each != nil && req.Placement != nil {
		return nil, errStreamedJob
	}
	detail := req.Detail
	if detail == SubtasksAsAsked && ChartRowsOnly(req.Options) {
		detail = SubtasksForChart
	}
	if req.Pieces != nil && (req.Each != nil || detail == SubtasksForChart) {
		return nil, errPieces
	}
	plan := req.Plan
	if req.Placement != nil {
		// Validated with the chains, as it is simulated.
		plan = withChains(plan, req.Placement)
	}
	if err := ValidateRequest(plan, req.Options); err != nil {
		return nil, err
	}
	layout, source := req.Layout, req.Source
	if layout == nil {
		var err error
		if layout, err = e.ReadLayout(ctx, req.Input); err != nil {
			return nil, err
		}
		source = req.Input.Source
	}
	c := checkRun{layout: layout, source: source, opts: req.Options, detail: detail, each: req.Each, pieces: req.Pieces,
		statesInPieces: req.StatesInPieces}
	if req.Placement != nil {
		return e.checkJob(ctx, c, req.Plan, plan, req.Placement)
	}
	return e.check(ctx, c, plan)
}

// ChartRowsOnly reports whether opts asks for the rows of the text report's chart alone
// (chart_subtasks without include_subtasks): SubtasksForChart, chosen once every operator is seen.
func ChartRowsOnly(opts *pb.CheckOptions) bool {
	return opts.GetChartSubtasks() && !opts.GetIncludeSubtasks()
}

// checkRun is what a check keeps of its Request besides the plan, which a job check changes.
type checkRun struct {
	layout *checkpoint.Layout
	source string
	opts   *pb.CheckOptions
	detail SubtaskDetail
	each   func(*pb.OperatorAssignment)
	pieces OperatorPieces
	// statesInPieces: see Request.StatesInPieces.
	statesInPieces bool
}

// Inspect decodes the stream and describes it, stopping when ctx ends.
func (e *Engine) Inspect(ctx context.Context, in Input) (_ *pb.InspectCheckpointResponse, err error) {
	layout, err := e.ReadLayout(ctx, in)
	if err != nil {
		return nil, err
	}
	stop, release := cancel.Watch(ctx)
	defer release()
	defer cancel.Recover(&err)
	return e.inspectLayout(stop, layout, in.Source), nil
}

// InspectLayout describes an already decoded layout, stopping when ctx ends (then it returns
// ctx's error): its cost grows with the operators and their state names.
func (e *Engine) InspectLayout(ctx context.Context, layout *checkpoint.Layout, source string) (_ *pb.InspectCheckpointResponse, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	stop, release := cancel.Watch(ctx)
	defer release()
	defer cancel.Recover(&err)
	return e.inspectLayout(stop, layout, source), nil
}

// inspectLayout is InspectLayout checking stop per operator (under cancel.Recover).
func (e *Engine) inspectLayout(stop *cancel.Flag, layout *checkpoint.Layout, source string) *pb.InspectCheckpointResponse {
	resp := &pb.InspectCheckpointResponse{Checkpoint: summary(layout, source)}
	for i := range layout.Operators {
		stop.Check()
		info := operatorInfo(stop, &layout.Operators[i])
		info.Position = int32(i + 1)
		if entry := findings.Identify(&layout.Operators[i], e.catalog); entry != nil {
			info.CatalogEntry = entry.Name
		}
		resp.Operators = append(resp.Operators, info)
	}
	ops := resp.Operators
	shortIDs(len(ops), func(i int) string { return ops[i].OperatorId }, func(i int, s string) { ops[i].ShortId = s })
	return resp
}
