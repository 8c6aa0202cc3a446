package findings

import (
	"context"
	"strings"

	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// The safe-parallelism search (safeParallelism in check.go) tests candidate parallelisms of each
// denied vertex. Its cost is kept linear in the job: what a candidate's test needs is computed
// once per check and indexed by vertex (searchIndex), bounds that hold at every parallelism end
// the search at once (unsafeEverywhere), and a candidate that passes the bounds is confirmed by
// re-simulating that vertex alone (rescale.Resimulator) and running the rules on it.

// searchIndex holds what the search computes once per check, for the check's own Context.
type searchIndex struct {
	failures map[checkpoint.OperatorID][]rescale.Failure // by vertex ID
	hits     map[hitsKey][]stateRuleHit                  // state-rule hits by label set and vertex
	hitsDone map[[4]string]bool                          // label sets indexed
	vertices map[string]*rescale.VertexAssignment        // by vertex ID hex

	resim    *rescale.Resimulator
	resimErr error
	floors   map[checkpoint.OperatorID]*payloadFloor // PF120's (frameSize) bounds by vertex ID
}

type hitsKey struct {
	labels [4]string
	vertex checkpoint.OperatorID
}

func (c *Context) searchIndex() *searchIndex {
	if c.search == nil {
		c.search = &searchIndex{hits: map[hitsKey][]stateRuleHit{}, hitsDone: map[[4]string]bool{}}
	}
	return c.search
}

// vertexFailures returns the check's failures that name vertex v.
func vertexFailures(c *Context, v *rescale.VertexAssignment) []rescale.Failure {
	x := c.searchIndex()
	if x.failures == nil {
		x.failures = map[checkpoint.OperatorID][]rescale.Failure{}
		for _, fl := range c.Result.Failures {
			c.stop.Check()
			if fl.VertexID != (checkpoint.OperatorID{}) {
				x.failures[fl.VertexID] = append(x.failures[fl.VertexID], fl)
			}
		}
	}
	return x.failures[v.ID]
}

// vertexStateRules is stateRules(c, labels...) restricted to vertex v, indexed on first use so
// that a bound tested for many candidates costs the vertex's hits, not the job's.
func vertexStateRules(c *Context, v *rescale.VertexAssignment, labels ...string) []stateRuleHit {
	if len(labels) > 4 {
		var out []stateRuleHit
		for _, h := range stateRules(c, labels...) {
			if h.v.ID == v.ID {
				out = append(out, h)
			}
		}
		return out
	}
	x := c.searchIndex()
	var key [4]string
	copy(key[:], labels)
	if !x.hitsDone[key] {
		x.hitsDone[key] = true
		for _, h := range stateRules(c, labels...) {
			k := hitsKey{key, h.v.ID}
			x.hits[k] = append(x.hits[k], h)
		}
	}
	return x.hits[hitsKey{key, v.ID}]
}

// vertexByHex returns the check's vertex with the given ID hex, or nil.
func (x *searchIndex) vertexByHex(c *Context, hex string) *rescale.VertexAssignment {
	if x.vertices == nil {
		x.vertices = make(map[string]*rescale.VertexAssignment, len(c.Result.Vertices))
		for _, v := range c.Result.Vertices {
			c.stop.Check()
			x.vertices[v.ID.String()] = v
		}
	}
	return x.vertices[hex]
}

// frameSizeEverywhere is PF120's unsafeEverywhere: the UNION part of the payload alone is over
// the frame size at every parallelism.
func frameSizeEverywhere(c *Context, v *rescale.VertexAssignment) bool {
	_, known := frameSizeSafeAt(c, v, 0) // p = 0: the UNION part alone
	return known
}

// maxParallelismChangedEverywhere is PF111's unsafeEverywhere: no parallelism helps.
func maxParallelismChangedEverywhere(c *Context, v *rescale.VertexAssignment) bool {
	safe, _ := maxParallelismChangedSafeAt(c, v, 0)
	return !safe
}

// payloadFloor is what every parallelism of a vertex puts into its new subtasks' deployment
// payloads, from its simulation in the check: the UNION part each subtask receives whole
// (rescale.OperatorAssignment.UnionPayloadBytes, the same at any parallelism) and the
// SPLIT_DISTRIBUTE part's floors (rescale.PayloadFloor) of its restored operators.
type payloadFloor struct {
	union, splitTotal int64
	split             []rescale.PayloadFloor
}

// vertexPayloadFloor computes the vertex's payloadFloor once per check. v must come from a
// simulation that distributed the vertex.
func vertexPayloadFloor(c *Context, v *rescale.VertexAssignment) *payloadFloor {
	x := c.searchIndex()
	if f := x.floors[v.ID]; f != nil {
		return f
	}
	f := &payloadFloor{}
	if !v.FullyFinished {
		for _, op := range v.Operators {
			c.stop.Check()
			if op.Layout != nil && op.Path != rescale.PathNotRestored && op.Path != rescale.PathNotSimulated {
				f.union += op.UnionPayloadBytes()
				if sf := op.SplitPayloadFloor(); sf.Total > 0 {
					f.split = append(f.split, sf)
					f.splitTotal += sf.Total
				}
			}
		}
	}
	if x.floors == nil {
		x.floors = map[checkpoint.OperatorID]*payloadFloor{}
	}
	x.floors[v.ID] = f
	return f
}

// at is a lower bound of the largest payload of a new subtask at parallelism p: the UNION part,
// plus the larger of the SPLIT_DISTRIBUTE part's average and any one operator's per-name bound
// (that subtask receives at least the UNION part of the other operators too).
func (f *payloadFloor) at(p int) int64 {
	if p < 1 {
		return f.union
	}
	most := (f.splitTotal + int64(p) - 1) / int64(p)
	for _, sf := range f.split {
		most = max(most, sf.MaxAt(p))
	}
	return f.union + most
}

// frameSizeSafeAt is PF120's (frameSize) bound. When the UNION part alone reaches the level that
// denies (above the frame size for an ERROR; at 80% of it when WARNING findings deny too),
// every parallelism is refused; otherwise p is refused when the payload's lower bound at p
// reaches it. Above the bound the payload depends on how SPLIT_DISTRIBUTE state falls, and the
// search re-simulates.
func frameSizeSafeAt(c *Context, v *rescale.VertexAssignment, p int) (safe, known bool) {
	frame := c.Options.frameSize()
	f := vertexPayloadFloor(c, v)
	warnDenies := c.Options.failLevel() <= Warning
	if f.union > frame || warnDenies && f.union >= frame/10*8 {
		return false, true
	}
	if p < 1 {
		return false, false
	}
	if lb := f.at(p); lb > frame || warnDenies && lb >= frame/10*8 {
		return false, true
	}
	return false, false
}

// resimulateSafe re-simulates vertex v alone at parallelism p and reports whether none of the
// rules yields a denying finding for it.
func resimulateSafe(c *Context, rules []*Rule, v *rescale.VertexAssignment, p int, fail Severity) bool {
	ids, err := vertexDenials(c, rules, v.ID, p, fail, true)
	return err == nil && len(ids) == 0
}

// vertexDenials re-simulates the vertex with ID id alone at parallelism p and returns the IDs
// of the rules with a finding for it at or above fail (only the first when first is set). The
// rules see a Result of that vertex only (with the failures that name it);
// PF121 (jobManagerMemory), the one rule that weighs all vertices together, is judged here with the
// other vertices' payloads from the check. A vertex the plan does not have, or leaves out, is
// a *rescale.PlanError.
func vertexDenials(c *Context, rules []*Rule, id checkpoint.OperatorID, p int, fail Severity, first bool) ([]string, error) {
	ctx := c.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	x := c.searchIndex()
	if x.resim == nil && x.resimErr == nil {
		x.resim, x.resimErr = rescale.NewResimulator(ctx, c.Layout, c.Plan)
	}
	var res *rescale.Result
	var err error
	vid := id.String()
	prev := x.vertexByHex(c, vid)
	if x.resimErr == nil && prev != nil {
		// The check's own simulation of the vertex is live (its findings and report need it):
		// the re-simulation shares its grouping of the states instead of a second one.
		res, err = x.resim.VertexFrom(ctx, prev, p)
	} else if x.resimErr == nil {
		res, err = x.resim.Vertex(ctx, id, p)
	} else if prev != nil {
		res, err = rescale.SimulateContext(ctx, c.Layout, withVertexParallelism(c.Plan, prev, p))
	} else {
		err = errNoVertex(vid)
	}
	if err != nil && ctx.Err() != nil {
		cancel.Unwind(ctx.Err())
	}
	if err != nil {
		return nil, err
	}
	if len(res.Vertices) == 0 {
		return nil, errNoVertex(vid) // a vertex of new operators whose parallelism the plan does not give
	}
	// The rules do not read the plan's parallelism: the Result carries it.
	nc := newStoppableContext(c.ctx, c.stop, c.Layout, c.Plan, res, c.Catalog, c.Options, c.memo)
	var ids []string
	for _, r := range rules {
		if !mayReach(r.Meta(), fail) {
			continue // an INFO rule such as PF170 cannot deny: its work on every state is not needed here
		}
		if r.jobWide {
			// It judges the checkpoint or the options as a whole, so its findings name no vertex
			// (TestJobWideRulesNameNoVertex), and running it would read every operator of the
			// layout per test: vertices × operators for a search or probes of every vertex.
			continue
		}
		if r.meta == &jobManagerMemory && x.resimErr == nil {
			if jobManagerMemoryDenies(c, res, id, fail) {
				if ids = append(ids, r.Meta().ID); first {
					return ids, nil
				}
			}
			continue
		}
		for _, f := range r.Check(nc) {
			if f.VertexID == vid && f.Severity >= fail {
				if ids = append(ids, r.Meta().ID); first {
					return ids, nil
				}
				break
			}
		}
	}
	return ids, nil
}

// VertexProbe tests one vertex of a checked plan at other parallelisms the way the
// safe-parallelism search does: the vertex is re-simulated alone (the plan resolved once, by
// the Session it comes from) and every enabled rule runs on it, with the other vertices as
// planned (the JobManager-memory rule reads the Session's payload totals). A test costs that
// vertex's simulation and nothing holds the whole job's, so probing many vertices of a large
// job stays linear in time and bounded in memory. Not safe for concurrent use.
type VertexProbe struct {
	c     *Context
	rules []*Rule
}

// Probe returns a VertexProbe of the Session's plan and options. With the JobManager-memory
// rule on, PayloadPass must have covered every vertex.
func (s *Session) Probe() (*VertexProbe, error) {
	if s.NeedsPayloadPass() {
		return nil, errPayloadPass
	}
	return &VertexProbe{c: s.context(context.Background(), nil, &rescale.Result{}), rules: s.rules}, nil
}

// DenyingAt returns the IDs of the rules whose findings for the vertex (JobVertexID hex) at
// parallelism p reach the fail level: empty means p is safe for it. It stops with ctx's error
// when ctx ends; a vertex the plan does not have is an error.
func (vp *VertexProbe) DenyingAt(ctx context.Context, vertexID string, p int) (ids []string, err error) {
	c := vp.c
	id, err := checkpoint.ParseOperatorID(strings.ToLower(vertexID))
	if err != nil {
		return nil, errNoVertex(vertexID)
	}
	if p < 1 || p > rescale.UpperBoundMaxParallelism {
		return nil, &rescale.PlanError{Field: "vertex_parallelism", Key: vertexID, Msg: "parallelism not within 1..32768"}
	}
	stop, release := cancel.Watch(ctx)
	defer release()
	defer cancel.Recover(&err)
	c.ctx, c.stop = ctx, stop
	defer func() { c.ctx, c.stop = nil, nil }()
	stop.Check()
	return vertexDenials(c, vp.rules, id, p, c.Options.failLevel(), false)
}

func errNoVertex(vertexID string) error {
	return &rescale.PlanError{Field: "vertex", Key: vertexID, Msg: "names no vertex of the plan"}
}

// withVertexParallelism copies the plan, removing every parallelism key that names the vertex
// and setting the vertex's ID to p. Only this vertex's findings matter to the search, so the
// other vertices are not distributed (Plan.OnlyVertices).
func withVertexParallelism(plan rescale.Plan, v *rescale.VertexAssignment, p int) rescale.Plan {
	out := plan
	out.Parallelism = make(map[string]int, len(plan.Parallelism)+1)
	for k, val := range plan.Parallelism {
		if !keyNamesVertex(plan, k, v) {
			out.Parallelism[k] = val
		}
	}
	out.Parallelism[v.ID.String()] = p
	out.OnlyVertices = []string{v.ID.String()}
	return out
}

// keyNamesVertex reports whether a plan key names the vertex or one of its operators.
func keyNamesVertex(plan rescale.Plan, k string, v *rescale.VertexAssignment) bool {
	if strings.EqualFold(k, v.ID.String()) {
		return true
	}
	h := uidHash(k)
	for _, op := range v.Operators {
		if strings.EqualFold(k, op.ID.String()) || strings.EqualFold(k, op.StateID.String()) || h == op.ID || h == op.StateID ||
			(op.UID != "" && k == op.UID) || (op.Name != "" && k == op.Name) {
			return true
		}
	}
	for _, vs := range plan.Vertices {
		if vs.ID == k {
			for _, o := range vs.Operators {
				if keyNamesVertex(rescale.Plan{}, o, v) {
					return true
				}
			}
		}
	}
	return false
}
