package findings

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// Session checks a restore range of vertices by range of vertices, so that a caller holds one
// range's simulation at a time instead of the whole job's: for a checkpoint of a hundred
// thousand operators the simulation is the larger part of a check's memory, larger than the
// Layout (bench/README.md, "Operator-heavy files, CLI and daemon"). Its findings, verdict and
// nearest safe parallelisms are CheckContext's on the whole Result (TestSessionMatchesCheck):
// most rules judge one vertex, an operator or a failure at a time and run on every range; the
// rules that judge the job as a whole (jobWide) run once, in Finish, which also checks what
// concerns no vertex (Resimulator.Unrestored).
//
// PF121 (jobManagerMemory) weighs every vertex's payload together: with Options.JobManagerMemory
// set, a caller first passes over every range with PayloadPass (NeedsPayloadPass), which keeps
// each vertex's payload total, and then checks the ranges with Vertices; the rule's finding
// comes with the range holding the vertex it names, as the findings of other rules do. The
// job is simulated twice, and held one range at a time.
type Session struct {
	layout *checkpoint.Layout
	plan   rescale.Plan
	cat    *Catalog
	opts   Options
	rules  []*Rule
	memo   *checkMemo
	resim  *rescale.Resimulator
	// worst is the most severe finding Vertices returned: the ranges' findings are the
	// caller's (a session keeps none, so that 100,000 of them are not held twice).
	worst Severity
	safe  []SafeParallelism

	// payloads is every vertex's payload total for the JobManager-memory rule (nil when it is
	// off); passed is the first vertex PayloadPass has not simulated yet.
	payloads *jobPayloads
	passed   int
}

// NewSession resolves plan against layout (a *rescale.PlanError when it cannot be applied) and
// prepares a range-by-range check. cat nil means DefaultCatalog().
func NewSession(ctx context.Context, layout *checkpoint.Layout, plan rescale.Plan, cat *Catalog, opts Options) (*Session, error) {
	if opts.AllowNonRestoredState {
		plan.AllowNonRestoredState = true
	}
	resim, err := rescale.NewResimulator(ctx, layout, plan)
	if err != nil {
		return nil, err
	}
	if cat == nil {
		cat = sharedDefault()
	}
	s := &Session{layout: layout, plan: plan, cat: cat, opts: opts, rules: enabledRules(opts), memo: newCheckMemo(layout), resim: resim}
	if opts.JobManagerMemory > 0 && slices.ContainsFunc(s.rules, func(r *Rule) bool { return r.meta == &jobManagerMemory }) {
		s.payloads = newJobPayloads(0)
	}
	return s, nil
}

// NeedsPayloadPass reports whether PayloadPass must cover every vertex before Vertices: the
// JobManager-memory rule is on.
func (s *Session) NeedsPayloadPass() bool {
	return s.payloads != nil && s.passed < s.resim.NumVertices()
}

// PayloadPass simulates the vertices [from, to) and keeps only their payload totals (about 50
// bytes a vertex); the ranges must be consecutive from 0 to NumVertices().
func (s *Session) PayloadPass(ctx context.Context, from, to int) (err error) {
	switch {
	case s.payloads == nil:
		return errors.New("findings: PayloadPass with the JobManager-memory rule off")
	case from != s.passed || to < from:
		return fmt.Errorf("findings: PayloadPass(%d, %d) out of order (next vertex %d)", from, to, s.passed)
	}
	res, err := s.resim.Vertices(ctx, from, to)
	if err != nil {
		return err
	}
	stop, release := cancel.Watch(ctx)
	defer release()
	defer cancel.Recover(&err)
	for _, v := range res.Vertices {
		stop.Check()
		s.payloads.add(v)
	}
	if s.passed = to; s.passed == s.resim.NumVertices() {
		s.payloads.finish(stop)
	}
	return nil
}

// Resimulator is the session's resolved plan: NumVertices and VertexSize cut the job into
// ranges.
func (s *Session) Resimulator() *rescale.Resimulator { return s.resim }

// Vertices simulates the plan's vertices [from, to) and checks them: the rules that judge
// vertices, operators and failures, then the nearest-safe search for the vertices they deny.
// It returns the range's Result and findings, both the caller's to keep or convert and drop
// (Finish weighs the findings' severities in its verdict but does not return them).
func (s *Session) Vertices(ctx context.Context, from, to int) (_ *rescale.Result, _ []Finding, err error) {
	if s.NeedsPayloadPass() {
		return nil, nil, errPayloadPass
	}
	res, err := s.resim.Vertices(ctx, from, to)
	if err != nil {
		return nil, nil, err
	}
	stop, release := cancel.Watch(ctx)
	defer release()
	defer cancel.Recover(&err)
	c := s.context(ctx, stop, res)
	var fs []Finding
	for _, r := range s.rules {
		if !r.jobWide {
			c.stop.Check()
			fs = append(fs, r.Check(c)...)
		}
	}
	for i := range fs {
		s.worst = max(s.worst, fs[i].Severity)
	}
	setPositions(c, fs, false)
	s.safe = append(s.safe, safeParallelism(c, s.rules, fs)...)
	return res, fs, nil
}

// Finish checks what concerns no vertex and runs the job-wide rules, and returns their findings
// (sorted) with the verdict and the nearest safe parallelisms of every range checked. The
// ranges' findings are not in it: Vertices returned them, and the caller merges them (sorted
// by Finding.Order) into its report.
func (s *Session) Finish(ctx context.Context) (rep Report, err error) {
	if s.NeedsPayloadPass() {
		return Report{}, errPayloadPass
	}
	res, err := s.resim.Unrestored(ctx)
	if err != nil {
		return Report{}, err
	}
	stop, release := cancel.Watch(ctx)
	defer release()
	defer cancel.Recover(&err)
	c := s.context(ctx, stop, res)
	fs := runRules(c, s.rules)
	s.safe = append(s.safe, safeParallelism(c, s.rules, fs)...)
	sortFindings(fs)
	sortSafe(s.safe)
	// The verdict weighs the ranges' findings too: the worst of them stands for all.
	verdict := max(verdictOf(fs, s.opts.failLevel()), verdictOf([]Finding{{Severity: s.worst}}, s.opts.failLevel()))
	return Report{Findings: fs, Verdict: verdict, Safe: s.safe}, nil
}

// context is a rules context over one range's Result, sharing the session's catalog
// identifications and resolved plan.
func (s *Session) context(ctx context.Context, stop *cancel.Flag, res *rescale.Result) *Context {
	c := newStoppableContext(ctx, stop, s.layout, s.plan, res, s.cat, s.opts, s.memo)
	c.searchIndex().resim = s.resim
	c.payloads = s.payloads
	return c
}

var errPayloadPass = errors.New("findings: the JobManager-memory rule is on: PayloadPass must cover every vertex first")
