package findings

import (
	"cmp"
	"context"
	"sort"
	"strings"

	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// Check applies the rules to a simulated restore and returns the findings (most severe first),
// the verdict and, for every vertex with a denying finding, the nearest safe parallelism. cat
// nil means DefaultCatalog(). result must be rescale.Simulate(layout, plan).
func Check(layout *checkpoint.Layout, plan rescale.Plan, result *rescale.Result, cat *Catalog, opts Options) Report {
	rep, _ := CheckContext(context.Background(), layout, plan, result, cat, opts)
	return rep
}

// CheckContext is Check that stops when ctx ends and then returns ctx's error: the rules' loops
// over operators, states and subtasks and the safe-parallelism search with its re-simulations
// check it.
func CheckContext(ctx context.Context, layout *checkpoint.Layout, plan rescale.Plan, result *rescale.Result, cat *Catalog, opts Options) (rep Report, err error) {
	err = withContext(ctx, layout, plan, result, cat, opts, func(c *Context, rules []*Rule) {
		fs := runRules(c, rules)
		rep = Report{Findings: fs, Verdict: verdictOf(fs, opts.failLevel())}
		rep.Safe = safeParallelism(c, rules, fs)
	})
	return rep, err
}

// withContext runs fn with the rule Context of a check and the enabled rules; it returns ctx's
// error when ctx ends during fn (the rules' loops check it through c.stop).
func withContext(ctx context.Context, layout *checkpoint.Layout, plan rescale.Plan, result *rescale.Result, cat *Catalog, opts Options, fn func(c *Context, rules []*Rule)) (err error) {
	stop, release := cancel.Watch(ctx)
	defer release()
	defer cancel.Recover(&err)
	if opts.AllowNonRestoredState {
		plan.AllowNonRestoredState = true
	}
	fn(newStoppableContext(ctx, stop, layout, plan, result, cat, opts, nil), enabledRules(opts))
	return nil
}

func enabledRules(opts Options) []*Rule {
	off := map[string]bool{}
	for _, id := range opts.Disabled {
		off[strings.ToUpper(strings.TrimSpace(id))] = true
	}
	var out []*Rule
	for _, r := range Rules() {
		if !off[r.Meta().ID] {
			out = append(out, r)
		}
	}
	return out
}

func runRules(c *Context, rules []*Rule) []Finding {
	var fs []Finding
	for _, r := range rules {
		c.stop.Check()
		fs = append(fs, r.Check(c)...)
	}
	setPositions(c, fs, true)
	sortFindings(fs)
	return fs
}

// sortFindings orders by severity (descending), rule ID, position, vertex, operator, state,
// first affected subtask, message: deterministic for equal inputs.
func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Order().Before(fs[j].Order()) })
}

// Order is what orders findings in a report; a caller holding findings in another form (the
// API's messages) sorts them the same way by building it from their fields.
type Order struct {
	Severity                                Severity
	Position                                int32 // Finding.Position
	RuleID, VertexID, OperatorID, StateName string
	FirstSubtask                            int32 // -1 when no subtask is affected
	Message                                 string
}

// Order returns f's sort key.
func (f *Finding) Order() Order {
	first := int32(-1)
	if len(f.AffectedSubtasks) > 0 {
		first = f.AffectedSubtasks[0]
	}
	return Order{Severity: f.Severity, Position: f.Position, RuleID: f.RuleID, VertexID: f.VertexID,
		OperatorID: f.OperatorID, StateName: f.StateName, FirstSubtask: first, Message: f.Message}
}

// Before reports whether a finding keyed a comes before one keyed b: severity (descending),
// rule ID, position, vertex, operator, state, first affected subtask, message.
func (a Order) Before(b Order) bool {
	return cmp.Or(
		cmp.Compare(b.Severity, a.Severity),
		cmp.Compare(a.RuleID, b.RuleID),
		cmp.Compare(a.Position, b.Position),
		cmp.Compare(a.VertexID, b.VertexID),
		cmp.Compare(a.OperatorID, b.OperatorID),
		cmp.Compare(a.StateName, b.StateName),
		cmp.Compare(a.FirstSubtask, b.FirstSubtask),
		cmp.Compare(a.Message, b.Message),
	) < 0
}

// safeParallelism searches, per vertex with a denying finding, the largest passing
// parallelism below the request and the smallest above it (within the max parallelism).
// Rules with a safeAt hook reject candidates without re-simulation (and end the search when
// they reject every parallelism); a candidate that passes them is confirmed by re-simulating the
// vertex alone, at most Options.MaxResimulations times per vertex (a value not found within the
// budget is reported as 0). See search.go for what keeps it linear in the job.
func safeParallelism(c *Context, rules []*Rule, fs []Finding) []SafeParallelism {
	fail := c.Options.failLevel()
	denying := map[string]bool{} // vertex hex
	var order []string
	for _, f := range fs {
		if f.Severity < fail || f.VertexID == "" || denying[f.VertexID] {
			continue
		}
		denying[f.VertexID] = true
		order = append(order, f.VertexID)
	}
	if len(order) == 0 {
		return nil
	}
	budgetMax := c.Options.MaxResimulations
	if budgetMax <= 0 {
		budgetMax = 32
	}
	// Rules that can state a bound (safeAt) reject candidates without re-simulating; a
	// candidate that passes every bound is confirmed by re-simulating the vertex at that
	// parallelism and running all rules, so that a candidate never trades one denial for another.
	var bounders []*Rule
	var everywhere []*Rule
	for _, r := range rules {
		if r.safeAt != nil && r.meta.Severity >= fail {
			bounders = append(bounders, r)
			if r.unsafeEverywhere != nil {
				everywhere = append(everywhere, r)
			}
		}
	}
	x := c.searchIndex()
	var out []SafeParallelism
	for _, vid := range order {
		c.stop.Check()
		v := x.vertexByHex(c, vid)
		if v == nil {
			continue
		}
		sp := SafeParallelism{VertexID: vid, VertexName: v.Name, Requested: int32(v.NewParallelism), Position: vertexPosition(v)}
		never := false
		for _, e := range everywhere {
			never = never || e.unsafeEverywhere(c, v)
		}
		if never {
			out = append(out, sp)
			continue
		}
		limit := searchLimit(v)
		budget := budgetMax
		test := func(p int) (safe, ok bool) {
			c.stop.Check()
			for _, b := range bounders {
				if s, known := b.safeAt(c, v, p); known && !s {
					return false, true
				}
			}
			if budget <= 0 {
				return false, false
			}
			budget--
			return resimulateSafe(c, rules, v, p, fail), true
		}
		belowDone, aboveDone := false, false
		for d := 1; !(belowDone && aboveDone); d++ {
			if !belowDone {
				p := v.NewParallelism - d
				if p < 1 {
					belowDone = true
				} else if s, ok := test(p); !ok {
					belowDone = true
				} else if s {
					sp.Below, belowDone = int32(p), true
				}
			}
			if !aboveDone {
				p := v.NewParallelism + d
				if p > limit {
					aboveDone = true
				} else if s, ok := test(p); !ok {
					aboveDone = true
				} else if s {
					sp.Above, aboveDone = int32(p), true
				}
			}
		}
		out = append(out, sp)
	}
	sortSafe(out)
	return out
}

// searchLimit is the largest parallelism worth trying: the effective max parallelism, capped
// by the stored and a configured one.
func searchLimit(v *rescale.VertexAssignment) int {
	limit := v.MaxParallelism
	if limit <= 0 {
		limit = rescale.UpperBoundMaxParallelism
	}
	for _, op := range v.Operators {
		if op.CheckpointMaxParallelism > 0 && op.CheckpointMaxParallelism < limit {
			limit = op.CheckpointMaxParallelism
		}
	}
	if v.MaxParallelismConfigured && v.NewJobMaxParallelism > 0 && v.NewJobMaxParallelism < limit {
		limit = v.NewJobMaxParallelism
	}
	return limit
}

func sortInt32(xs []int32) { sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] }) }
