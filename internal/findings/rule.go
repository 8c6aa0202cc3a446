package findings

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

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
	// ConnectorVersions are the versions of the connectors and libraries in the job, by the
	// component names of the catalog ("iceberg": "1.4.3", "flink-connector-kafka": "3.2.0",
	// "flink-cdc", "paimon", "flink-agents", "hudi"; ParseConnectorVersion reads the CLI's
	// --connector-version NAME=VERSION). A connector bug or a state label confined to some
	// connector versions is compared with them; a connector missing here is treated like an
	// unknown FlinkVersion: its unfixed behaviour is assumed and the findings say so.
	ConnectorVersions map[string]string
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
	// RestoreMode is how the job is restored: RestoreClaim, RestoreNoClaim or RestoreLegacy
	// (--restore-mode; Flink's -claimMode / execution.state-recovery.claim-mode); "" = not given,
	// Flink's default NO_CLAIM is assumed and the findings say so.
	RestoreMode string
	// KafkaTransactionTimeout is the Kafka producers' transaction.timeout.ms; 0 = the
	// connector's default, one hour.
	KafkaTransactionTimeout time.Duration
	// SnapshotTime is when the checkpoint was taken (--snapshot-time, or the _metadata object's
	// modification time); zero = unknown, and the rules that need the snapshot's age are silent.
	SnapshotTime time.Time
	// Now is the time the restore happens; zero = time.Now().
	Now time.Time
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

// Rule is one check: its facts as data (Meta) and the one function that detects it (Check).
// Check reads the context and returns findings started with Context.finding, so that RuleID,
// Title and Severity come from the Meta. The other fields are optional hooks of the
// safe-parallelism search and of a Session.
type Rule struct {
	meta  *RuleMeta
	check func(c *Context) []Finding
	// safeAt says, without re-simulating, whether the rule would fire on a vertex at another
	// parallelism; known=false means "cannot tell" and the search then re-simulates. Rules
	// without it are always re-simulated.
	safeAt func(c *Context, v *rescale.VertexAssignment, p int) (safe, known bool)
	// unsafeEverywhere tells that no parallelism passes the rule on v, which ends the search for
	// the vertex without walking the candidates (only with safeAt).
	unsafeEverywhere func(c *Context, v *rescale.VertexAssignment) bool
	// jobWide marks a rule that judges the checkpoint or the options as a whole rather than what
	// a range of vertices holds; a Session runs it once. A rule that reports something for a
	// Result without vertices, failures or non-restored operators must be one
	// (TestJobWideRulesMarked).
	jobWide bool
}

// Meta returns the rule's facts.
func (r *Rule) Meta() *RuleMeta { return r.meta }

// Check returns the rule's findings.
func (r *Rule) Check(c *Context) []Finding { return r.check(c) }

// RuleMeta is everything a rule says about itself, kept next to its Check function: the
// generated docs/rules.md, `preflight rules` and every finding's rule ID and title come from it.
type RuleMeta struct {
	ID    string
	Title string
	// Severity is the highest severity the rule reports; Grading says when a finding is graded
	// lower ("" when every finding has Severity).
	Severity Severity
	Grading  string
	// Cause says what Flink does that the rule detects, and why it matters.
	Cause string
	// Remedies are the remediation texts, by case; Text may hold fmt verbs that the rule fills
	// in (a parallelism, a max parallelism).
	Remedies []Remedy
	// References are documentation URLs and issue ids every finding of the rule cites.
	References []string
	// Bugs are the Flink issues the rule models, with the affected versions: the rule compares
	// them with Options.FlinkVersion. Empty when the rule describes behaviour by design.
	Bugs []Bug
}

// Remedy is one remediation text and the case it applies to.
type Remedy struct {
	When string // "" for the rule's only or default case
	Text string
	// Args name Text's fmt verbs for the docs, in argument order ("max parallelism").
	Args []string
}

// remedy returns the remediation for case when (the first one when none matches), with args
// filled into its fmt verbs.
func (m *RuleMeta) remedy(when string, args ...any) string {
	if len(m.Remedies) == 0 {
		return ""
	}
	text := m.Remedies[0].Text
	for _, r := range m.Remedies {
		if r.When == when {
			text = r.Text
			break
		}
	}
	if len(args) > 0 {
		return fmt.Sprintf(text, args...)
	}
	return text
}

// refs returns the rule's references for a finding: shared by all its findings, and capped so
// that a finding that appends to them gets a copy.
func (m *RuleMeta) refs() []string {
	return m.References[:len(m.References):len(m.References)]
}

// bugApplies reports whether the rule's bug with the given id affects the restoring Flink
// version, with the note that explains the decision (the bug must be in m.Bugs).
func (m *RuleMeta) bugApplies(id, flinkVersion string) (bool, string) {
	for i := range m.Bugs {
		if m.Bugs[i].ID == id {
			return m.Bugs[i].Applies(Options{FlinkVersion: flinkVersion})
		}
	}
	panic("findings: rule " + m.ID + " names unknown bug " + id)
}

// bugAffects is bugApplies without the note: cheap enough for SafeAt, which the
// safe-parallelism search calls per candidate.
func (m *RuleMeta) bugAffects(id, flinkVersion string) bool {
	for i := range m.Bugs {
		if b := &m.Bugs[i]; b.ID == id {
			match, _ := matchVersions(b.Component, b.Affected, Options{FlinkVersion: flinkVersion})
			return match != versionOut
		}
	}
	panic("findings: rule " + m.ID + " names unknown bug " + id)
}

// registry holds the built-in rules, in ID order; every rules_*.go file registers its rules from
// init, next to their tables and check functions.
var registry []*Rule

// register adds a built-in rule. A duplicate or incomplete ID is a programming error.
func register(r *Rule) {
	m := r.meta
	if !strings.HasPrefix(m.ID, "PF") || m.Title == "" || m.Severity == SeverityUnspecified || m.Cause == "" {
		panic(fmt.Sprintf("findings: rule %q is missing its ID, title, severity or cause", m.ID))
	}
	for _, x := range registry {
		if x.meta.ID == m.ID {
			panic("findings: rule " + m.ID + " registered twice")
		}
	}
	registry = append(registry, r)
	sort.Slice(registry, func(i, j int) bool { return registry[i].meta.ID < registry[j].meta.ID })
}

// Rules returns every built-in rule, in ID order.
func Rules() []*Rule { return append([]*Rule(nil), registry...) }

// RuleByID returns the built-in rule with the given ID (case-insensitive), or nil.
func RuleByID(id string) *Rule {
	for _, r := range registry {
		if strings.EqualFold(r.Meta().ID, strings.TrimSpace(id)) {
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
	payloads   *jobPayloads                                  // every vertex's payload total (payloads.go)
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
	// compression is compressedStreams per checkpoint operator (PF135), filled when first asked.
	compression map[*checkpoint.OperatorLayout][3]int
}

func newContext(layout *checkpoint.Layout, plan rescale.Plan, result *rescale.Result, cat *Catalog, opts Options,
	memo *checkMemo) *Context {
	return newStoppableContext(context.Background(), nil, layout, plan, result, cat, opts, memo)
}

func newCheckMemo(layout *checkpoint.Layout) *checkMemo {
	n := 0
	if layout != nil { // rules that read only the options need no checkpoint
		n = len(layout.Operators)
	}
	return &checkMemo{identified: make([]*CatalogEntry, n), known: make([]bool, n), unionFloors: map[checkpoint.OperatorID]int64{}}
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
		c.memo = newCheckMemo(layout)
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
func (c *Context) finding(m *RuleMeta, sev Severity, op *rescale.OperatorAssignment) Finding {
	f := Finding{RuleID: m.ID, Title: m.Title, Severity: sev}
	if op == nil {
		return f
	}
	f.OperatorID = op.ID.String()
	f.OperatorName = op.Name
	f.OperatorUID = op.UID
	f.VertexID = f.OperatorID // one string when the operator heads its vertex (most do)
	if op.VertexID != op.ID {
		f.VertexID = op.VertexID.String()
	}
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

// stateIndex returns the k of the named state (op.State(k), k < op.NumStates()), or -1. Managed state wins over
// raw state of the same name.
func stateIndex(op *rescale.OperatorAssignment, name string) int {
	for i := range op.NumStates() {
		if op.StateName(i) == name {
			return i
		}
	}
	return -1
}

// subtasksOf lists the new subtasks i of op for which pred(share of s, n) is true, s being one
// of op's states, already built. n is the number of subtasks the call stands for: 1, except for a
// UNION state, whose share is the same for every subtask and is built and judged once (n =
// parallelism), so that the cost stays linear in old + new parallelism. It checks c's stop per
// subtask. Without slices, pred sees the share's counts (rescale.StateDistribution.ShareCounts:
// no Slices, nothing allocated per subtask); with slices, the share's Slices too.
func subtasksOf(c *Context, op *rescale.OperatorAssignment, s *rescale.StateDistribution, slices bool, pred func(sh rescale.Share, n int) bool) []int32 {
	var out []int32
	share := s.ShareCounts
	if slices {
		share = s.Share
	}
	if s.Mode == checkpoint.Union {
		if op.NewParallelism > 0 && pred(share(0), op.NewParallelism) {
			return rangeFrom(0, int32(op.NewParallelism))
		}
		return nil
	}
	for i := 0; i < op.NewParallelism; i++ {
		c.stop.Check()
		if pred(share(i), 1) {
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
		for s := range st.OperatorStates() {
			if s.Name == name {
				n += s.Elements
			}
		}
		out[st.Index] += n
	}
	return out
}

// failureFindings turns the simulator's precondition failures of the given kinds into one
// finding per (kind, vertex), skipping failures for which skip returns true.
func failureFindings(c *Context, m *RuleMeta, kinds []rescale.FailureKind, skip func(v *rescale.VertexAssignment, op *rescale.OperatorAssignment) bool,
	build func(f *Finding, fl rescale.Failure, v *rescale.VertexAssignment, op *rescale.OperatorAssignment)) []Finding {
	var out []Finding
	seen := map[string]bool{}
	for _, fl := range c.Result.Failures {
		match := false
		for _, k := range kinds {
			match = match || fl.Kind == k
		}
		if !match {
			continue
		}
		key := fmt.Sprintf("%d/%s", fl.Kind, fl.VertexID)
		if seen[key] {
			continue
		}
		var v *rescale.VertexAssignment
		if fl.VertexID != (checkpoint.OperatorID{}) {
			v = c.Result.Vertex(fl.VertexID)
		}
		op := failureOperator(c, fl, v)
		if skip != nil && skip(v, op) {
			continue
		}
		seen[key] = true
		f := c.finding(m, m.Severity, op)
		if op == nil && v != nil {
			f.VertexID = v.ID.String()
		}
		build(&f, fl, v, op)
		out = append(out, f)
	}
	return out
}

func failureOperator(c *Context, fl rescale.Failure, v *rescale.VertexAssignment) *rescale.OperatorAssignment {
	if fl.OperatorID != (checkpoint.OperatorID{}) {
		if op := c.Result.Operator(fl.OperatorID); op != nil {
			return op
		}
	}
	if v != nil {
		for _, op := range v.Operators {
			if op.Layout != nil {
				return op
			}
		}
		if len(v.Operators) > 0 {
			return v.Operators[0]
		}
	}
	return nil
}

// rangeFrom returns from, from+1, ..., to-1.
func rangeFrom(from, to int32) []int32 {
	var out []int32
	for i := max(from, 0); i < to; i++ {
		out = append(out, i)
	}
	return out
}
