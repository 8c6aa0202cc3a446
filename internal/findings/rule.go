package findings

import (
	"context"
	"strings"

	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// Flink defaults the rules fall back to.
const (
	DefaultRPCFrameSize    = 10 << 20 // pekko.framesize / akka.framesize: "10485760b"
	DefaultInlineThreshold = 20 << 10 // execution.checkpointing.data-inline-threshold: 20kb
)

// Options describe the restoring cluster and what the caller treats as failure.
type Options struct {
	// FlinkVersion of the restoring cluster ("1.19.1", "2.0", "1.20-SNAPSHOT"); "" = unknown:
	// version-dependent bugs are assumed to apply and the findings say so.
	FlinkVersion string
	// RPCFrameSize is pekko.framesize (akka.framesize); 0 = 10 MiB.
	RPCFrameSize int64
	// InlineThreshold is the inline-state threshold; 0 = 20 KiB.
	InlineThreshold int64
	// JobManagerMemory is the JobManager heap available for the restore; 0 = unknown (the
	// memory rule is silent).
	JobManagerMemory int64
	// AllowNonRestoredState is --allowNonRestoredState. The simulator reads
	// Plan.AllowNonRestoredState, so set both; Check re-simulates with the flag when either is set.
	AllowNonRestoredState bool
	// FailLevel: findings at or above it make the verdict DENY; SeverityUnspecified = Error.
	FailLevel Severity
	// Disabled rule IDs.
	Disabled []string
	// MaxResimulations bounds the re-simulations per vertex of the safe-parallelism search when
	// no rule can state a bound; 0 = 32.
	MaxResimulations int
}

func (o Options) frameSize() int64 {
	if o.RPCFrameSize > 0 {
		return o.RPCFrameSize
	}
	return DefaultRPCFrameSize
}

func (o Options) inlineThreshold() int64 {
	if o.InlineThreshold > 0 {
		return o.InlineThreshold
	}
	return DefaultInlineThreshold
}

func (o Options) failLevel() Severity {
	if o.FailLevel == SeverityUnspecified {
		return Error
	}
	return o.FailLevel
}

// Rule is one check. Implementations are small stateless types; Check reads the context and
// returns findings with RuleID, Title and Severity set.
type Rule interface {
	ID() string
	Title() string
	// Severity is the rule's highest severity (some rules grade their findings).
	Severity() Severity
	// Explanation says what the rule checks and why, with references.
	Explanation() string
	Check(c *Context) []Finding
}

// Bounder is implemented by rules that can say, without re-simulating, whether they would fire
// on a vertex at another parallelism. known=false means "cannot tell": the safe-parallelism
// search then re-simulates.
type Bounder interface {
	SafeAt(c *Context, v *rescale.VertexAssignment, p int) (safe, known bool)
}

// Rules returns every built-in rule, in ID order.
func Rules() []Rule {
	return []Rule{
		EmptyRestoreRule{},
		FirstOnlyRule{},
		AtMostOneRule{},
		OrderDependentRule{},
		HazardRule{},
		FormatVersionRule{},
		UnknownFlinkVersionRule{},
		MaxParallelismRule{},
		MaxParallelismChangedRule{},
		PinnedOperatorRule{},
		FrameSizeRule{},
		JobManagerMemoryRule{},
		OrphanUnionRule{},
		KeyedSkewRule{},
		ChannelStateRule{},
		NonRestoredStateRule{},
		UnknownOperatorEmptySplitRule{},
		MissingUIDRule{},
		RestoreFailureRule{},
	}
}

// RuleByID returns the built-in rule with the given ID (case-insensitive), or nil.
func RuleByID(id string) Rule {
	for _, r := range Rules() {
		if strings.EqualFold(r.ID(), strings.TrimSpace(id)) {
			return r
		}
	}
	return nil
}

// Context is what the rules read: the checkpoint, the plan, the simulation and the catalog.
type Context struct {
	Layout  *checkpoint.Layout
	Plan    rescale.Plan
	Result  *rescale.Result
	Catalog *Catalog
	Options Options

	newEntries map[*rescale.OperatorAssignment]*CatalogEntry // operators new to the job
	stateHits  map[string][]stateRuleHit                     // stateRules memo, by label set
	search     *searchIndex                                  // the safe-parallelism search's indexes (search.go)
	memo       *checkMemo
	// ctx and stop end the rules' loops when the caller gives up (nil: never).
	ctx  context.Context
	stop *cancel.Flag
}

// checkMemo holds what one check computes once and its safe-parallelism re-simulations share:
// they differ only in the plan, and these depend on the checkpoint and the catalog alone.
type checkMemo struct {
	// identified is Identify per checkpoint operator, by its index in Layout.Operators; known
	// marks the computed ones. Slices rather than maps: a file may hold a million operators.
	identified []*CatalogEntry
	known      []bool
	// unionFloors is unionPayloadFloor per vertex ID.
	unionFloors map[checkpoint.OperatorID]int64
}

func newContext(layout *checkpoint.Layout, plan rescale.Plan, result *rescale.Result, cat *Catalog, opts Options,
	memo *checkMemo) *Context {
	return newStoppableContext(context.Background(), nil, layout, plan, result, cat, opts, memo)
}

// newStoppableContext is newContext whose loops stop when ctx ends (stop watches ctx).
func newStoppableContext(ctx context.Context, stop *cancel.Flag, layout *checkpoint.Layout, plan rescale.Plan, result *rescale.Result,
	cat *Catalog, opts Options, memo *checkMemo) *Context {
	if cat == nil {
		cat = sharedDefault()
	}
	c := &Context{Layout: layout, Plan: plan, Result: result, Catalog: cat, Options: opts,
		newEntries: map[*rescale.OperatorAssignment]*CatalogEntry{}, stateHits: map[string][]stateRuleHit{}, memo: memo,
		ctx: ctx, stop: stop}
	if c.memo == nil {
		n := 0
		if layout != nil { // rules that read only the options need no checkpoint
			n = len(layout.Operators)
		}
		c.memo = &checkMemo{identified: make([]*CatalogEntry, n), known: make([]bool, n), unionFloors: map[checkpoint.OperatorID]int64{}}
	}
	for _, v := range result.Vertices {
		for _, op := range v.Operators {
			c.stop.Check()
			if k := op.LayoutIndex(); k >= 0 {
				if !c.memo.known[k] {
					c.memo.identified[k] = Identify(op.Layout, cat)
					c.memo.known[k] = true
				}
			} else {
				c.newEntries[op] = identifyNew(op.ID, cat)
			}
		}
	}
	return c
}

// Entry returns the catalog entry identified for an operator, or nil.
func (c *Context) Entry(op *rescale.OperatorAssignment) *CatalogEntry {
	if k := op.LayoutIndex(); k >= 0 {
		return c.memo.identified[k]
	}
	return c.newEntries[op]
}

// operators calls f for every operator of the new job that has checkpoint state.
func (c *Context) operators(f func(v *rescale.VertexAssignment, op *rescale.OperatorAssignment)) {
	for _, v := range c.Result.Vertices {
		for _, op := range v.Operators {
			c.stop.Check()
			if op.Layout != nil {
				f(v, op)
			}
		}
	}
}

// finding starts a finding about an operator.
func (c *Context) finding(r Rule, sev Severity, op *rescale.OperatorAssignment) Finding {
	f := Finding{RuleID: r.ID(), Title: r.Title(), Severity: sev}
	if op == nil {
		return f
	}
	f.OperatorID = op.ID.String()
	f.OperatorName = op.Name
	f.OperatorUID = op.UID
	f.VertexID = op.VertexID.String()
	if e := c.Entry(op); e != nil {
		f.CatalogEntry = e.ID
		if f.OperatorName == "" {
			f.OperatorName = e.Name
		}
	}
	return f
}

// opLabel names an operator in messages: `name` (uid u, ID x) or the ID alone.
func opLabel(op *rescale.OperatorAssignment, e *CatalogEntry) string {
	s := op.ID.String()
	switch {
	case op.UID != "" && op.Name != "":
		s = "operator \"" + op.Name + "\" (uid " + op.UID + ", ID " + s + ")"
	case op.UID != "":
		s = "operator uid " + op.UID + " (ID " + s + ")"
	case op.Name != "":
		s = "operator \"" + op.Name + "\" (ID " + s + ")"
	default:
		s = "operator " + s
	}
	if e != nil {
		s += ", identified as " + e.Name + ","
	}
	return s
}

// stateIndex returns the index of the named state in op.States, or -1. Managed state wins over
// raw state of the same name.
func stateIndex(op *rescale.OperatorAssignment, name string) int {
	for i, s := range op.States {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// subtasksWhere lists the new subtasks i of op for which pred(share of state k, n) is true. n is
// the number of subtasks the call stands for: 1, except for a UNION state, whose share is the
// same for every subtask and is built and judged once (n = parallelism), so that the cost stays
// linear in old + new parallelism. It checks c's stop per subtask.
func subtasksWhere(c *Context, op *rescale.OperatorAssignment, k int, pred func(sh rescale.Share, n int) bool) []int32 {
	var out []int32
	if k < 0 || k >= len(op.States) {
		return nil
	}
	s := op.States[k]
	if s.Mode == checkpoint.Union {
		if op.NewParallelism > 0 && pred(s.Share(0), op.NewParallelism) {
			return rangeFrom(0, int32(op.NewParallelism))
		}
		return nil
	}
	for i := 0; i < op.NewParallelism; i++ {
		c.stop.Check()
		if pred(s.Share(i), 1) {
			out = append(out, int32(i))
		}
	}
	return out
}

// keyedOwned returns the keyed bytes new subtask i owns (managed and raw).
func keyedOwned(op *rescale.OperatorAssignment, i int) int64 {
	var n int64
	for _, k := range []*rescale.KeyedDistribution{op.ManagedKeyed, op.RawKeyed} {
		if k != nil {
			n += k.Share(i).OwnedBytes
		}
	}
	return n
}

// oldElementsPerSubtask returns, per old subtask of the layout, the elements of the named state
// (managed and raw together).
func oldElementsPerSubtask(op *checkpoint.OperatorLayout, name string) []int64 {
	out := make([]int64, op.Parallelism)
	for i := range op.Subtasks {
		st := &op.Subtasks[i]
		if st.Index < 0 || st.Index >= len(out) {
			continue
		}
		var n int64
		for _, h := range []*checkpoint.OperatorStateHandleLayout{st.ManagedOperatorState, st.RawOperatorState} {
			if h == nil {
				continue
			}
			for _, s := range h.States {
				if s.Name == name {
					n += s.Elements
				}
			}
		}
		out[st.Index] += n
	}
	return out
}
