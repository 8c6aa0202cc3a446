package engine

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/placement"
	"github.com/flinkpreflight/preflight/internal/rescale"
	"github.com/flinkpreflight/preflight/internal/units"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// UnplacedRuleID is the finding for a checkpoint operator that cannot be placed in one vertex
// of the running job (see internal/placement).
const UnplacedRuleID = "PF200"

// unplacedRule documents PF200 for `preflight rules` and docs/rules.md; unplacedFindings
// builds its findings from it.
var unplacedRule = findings.RuleMeta{
	ID: UnplacedRuleID, Title: "Operator not placed in a job vertex", Severity: findings.Error,
	Grading: "INFO when every candidate vertex gets the same new parallelism (the operator is simulated at it, nothing is guessed). " +
		"Otherwise an ERROR on each rescaled candidate vertex; a vertex denied for more than 5 operators gets one finding for all of them (operator_ids).",
	Cause: "Checking against a running job, each checkpoint operator must be placed in the job vertex (operator chain) whose parallelism it gets. " +
		"Flink's REST API names only the chain heads' JobVertexIDs; an operator without a uid in a checkpoint without names can match several vertices. " +
		"It is then simulated at its stored parallelism, which is a guess when the candidates are rescaled differently.",
	Remedies: []findings.Remedy{{Text: "Give every operator a uid (format 5+ checkpoints then carry names), restore on Flink 2.x, " +
		"or pass the chains explicitly (--chain HEAD=OP,OP / RescalePlan.vertices)."}},
	References: []string{"StreamingJobGraphGenerator: a JobVertexID is the chain head's hash; chained operator IDs are not in Flink's REST API"},
}

func init() { findings.RegisterDoc(unplacedRule) }

// checkJob checks a plan (as asked, and as withChains made it) whose keys may be JobVertexIDs of
// a running job against the layout, with the job's chains (placed by internal/placement) as the
// plan's vertices (withChains, which Check applied and validated), so that a vertex's
// parallelism reaches every operator chained into it. Operators that could not be placed get a
// PF200 finding: an ERROR on every rescaled candidate vertex when their new parallelisms differ
// (the operator was simulated at its stored parallelism, which is then a guess), an INFO when
// every candidate gets the same parallelism (the operator is simulated at it, so nothing is
// guessed). The new parallelisms this depends on are resolved from the plan without simulating,
// so the job is checked once, and a check in pieces sends its operators as they are converted,
// as a file's does.
func (e *Engine) checkJob(ctx context.Context, c checkRun, asked, plan *pb.RescalePlan, pl *placement.Result) (*pb.RescaleReport, error) {
	opP, err := operatorParallelism(ctx, c, plan, pl)
	if err != nil {
		return nil, err
	}
	newP := map[string]int{}
	for _, v := range pl.Vertices {
		if len(v.Operators) > 0 {
			newP[v.ID] = opP[v.Operators[0]]
		}
	}
	idx := pl.Index()
	statelessParallelism(asked, pl, idx, newP)
	// An unplaced operator whose candidates all get one parallelism is simulated at it.
	common := make([]int, len(pl.Unplaced))
	added := false
	for k, u := range pl.Unplaced {
		q := commonParallelism(u, newP)
		if common[k] = q; q > 0 && opP[u.Operator] != q {
			if plan.VertexParallelism == nil {
				plan.VertexParallelism = map[string]int32{}
			}
			plan.VertexParallelism[u.Operator.String()] = int32(q)
			added = true
		}
	}
	if added {
		// The plan gained entries: validated as any plan is.
		if err := ValidateRequest(plan, c.opts); err != nil {
			return nil, err
		}
	}
	rep, err := e.check(ctx, c, plan)
	if err != nil {
		return nil, err
	}
	fail := c.opts.GetFailLevel()
	if fail == pb.Severity_SEVERITY_UNSPECIFIED {
		fail = pb.Severity_SEVERITY_ERROR
	}
	rep.Findings = append(rep.Findings, unplacedFindings(pl, idx, newP, common)...)
	sort.SliceStable(rep.Findings, func(a, b int) bool { return rep.Findings[a].GetSeverity() > rep.Findings[b].GetSeverity() })
	for _, f := range rep.Findings {
		switch {
		case f.GetSeverity() >= fail:
			rep.Verdict = pb.Verdict_VERDICT_DENY
		case f.GetSeverity() >= pb.Severity_SEVERITY_WARNING && rep.Verdict == pb.Verdict_VERDICT_ALLOW:
			rep.Verdict = pb.Verdict_VERDICT_ALLOW_WITH_WARNINGS
		}
	}
	for _, v := range pl.Vertices {
		jv := &pb.JobVertex{Id: v.ID, Name: v.Name, Parallelism: int32(v.Parallelism), MaxParallelism: int32(v.MaxParallelism), PlacedBy: v.PlacedBy}
		for _, op := range v.Operators {
			jv.OperatorIds = append(jv.OperatorIds, op.String())
		}
		rep.JobVertices = append(rep.JobVertices, jv)
	}
	return rep, nil
}

// withChains copies the plan, adding the placed chains as vertices (unless the plan already
// chains one of their operators) and turning keys that name a vertex without any checkpoint
// operator at its head into its first placed operator.
func withChains(p *pb.RescalePlan, pl *placement.Result) *pb.RescalePlan {
	out := &pb.RescalePlan{
		DefaultParallelism:   p.GetDefaultParallelism(),
		Vertices:             append([]*pb.Vertex(nil), p.GetVertices()...),
		MaxParallelism:       p.GetMaxParallelism(),
		NewJobOperators:      p.GetNewJobOperators(),
		InputChannelMappers:  p.GetInputChannelMappers(),
		OutputChannelMappers: p.GetOutputChannelMappers(),
	}
	chained := map[string]bool{}
	for _, v := range p.GetVertices() {
		chained[strings.ToLower(v.GetId())] = true
		for _, o := range v.GetOperators() {
			chained[strings.ToLower(o)] = true
		}
	}
	for _, v := range pl.Vertices {
		if len(v.Operators) == 0 {
			continue
		}
		var ops []string
		taken := false
		for _, o := range v.Operators {
			ops = append(ops, o.String())
			taken = taken || chained[o.String()]
		}
		if taken || len(ops) < 2 && ops[0] == v.ID {
			continue // the plan's own chain wins; a lone head needs no declaration
		}
		out.Vertices = append(out.Vertices, &pb.Vertex{Operators: ops})
	}
	if len(p.GetVertexParallelism()) > 0 {
		out.VertexParallelism = make(map[string]int32, len(p.GetVertexParallelism()))
		idx := pl.Index()
		for k, val := range p.GetVertexParallelism() {
			if v, ok := idx.Vertex(k); ok && len(v.Operators) > 0 && v.Operators[0].String() != strings.ToLower(k) {
				k = v.Operators[0].String()
			} else if ok && len(v.Operators) == 0 {
				continue // a vertex without state in the checkpoint: nothing to check
			}
			out.VertexParallelism[k] = val
		}
	}
	return out
}

// operatorParallelism is the new parallelism the plan gives each operator that heads a placed
// vertex or is unplaced, resolved without simulating (0: the check leaves it out).
func operatorParallelism(ctx context.Context, c checkRun, plan *pb.RescalePlan, pl *placement.Result) (map[checkpoint.OperatorID]int, error) {
	want := make(map[checkpoint.OperatorID]int, len(pl.Vertices)+len(pl.Unplaced))
	for _, v := range pl.Vertices {
		if len(v.Operators) > 0 {
			want[v.Operators[0]] = 0
		}
	}
	for _, u := range pl.Unplaced {
		want[u.Operator] = 0
	}
	rp := toRescalePlan(plan, c.opts)
	rp.AllowNonRestoredState = rp.AllowNonRestoredState || findingsOptions(c.opts).AllowNonRestoredState
	rs, err := rescale.NewResimulator(ctx, c.layout, rp)
	if err != nil {
		return nil, err
	}
	for id, p := range rs.Parallelisms() {
		if _, ok := want[id]; ok {
			want[id] = p
		}
	}
	return want, nil
}

// statelessParallelism adds to newP the new parallelism of each vertex holding no checkpoint
// operator (a vertex new since the checkpoint, whose keys withChains drops from the simulated
// plan): the asked plan's for it, else the job-wide one (which never reaches a vertex of max
// parallelism 1, as plannedParallelism has it), else the one it runs at. Such a vertex can still
// be a candidate of an unplaced operator, which would run at this parallelism there.
func statelessParallelism(asked *pb.RescalePlan, pl *placement.Result, idx placement.Index, newP map[string]int) {
	override := map[*placement.Vertex]int{}
	// In key order: two keys naming one vertex in different cases resolve alike every time.
	for _, k := range slices.Sorted(maps.Keys(asked.GetVertexParallelism())) {
		if v, ok := idx.Vertex(k); ok && len(v.Operators) == 0 {
			override[v] = int(asked.GetVertexParallelism()[k])
		}
	}
	def := int(asked.GetDefaultParallelism())
	for i := range pl.Vertices {
		v := &pl.Vertices[i]
		if len(v.Operators) > 0 {
			continue
		}
		switch {
		case override[v] > 0:
			newP[v.ID] = override[v]
		case def > 0 && v.MaxParallelism == 1:
			newP[v.ID] = 1
		case def > 0:
			newP[v.ID] = def
		default:
			newP[v.ID] = v.Parallelism
		}
	}
}

// commonParallelism is the one new parallelism every candidate vertex of u gets, 0 when they
// differ (or u has none).
func commonParallelism(u placement.Unplaced, newP map[string]int) int {
	q := -1
	for _, c := range u.Candidates {
		p, ok := newP[c]
		if !ok {
			return 0
		}
		if q >= 0 && p != q {
			return 0
		}
		q = p
	}
	return max(q, 0)
}

// maxListedCandidates bounds the candidate vertices a PF200 message lists. In a job whose
// vertices are alike (one parallelism and max parallelism) an unplaced operator has every vertex
// as a candidate, and one finding per rescaled candidate, each listing them all, made the report
// grow with their square (bench/README.md, "Checks against a running job"); each finding names
// its own vertex (vertex_id and the message) whatever the list shows.
const maxListedCandidates = 10

// unplacedFindings is PF200 for pl's unplaced operators, in their order (see checkJob), given
// each one's commonParallelism. A
// vertex denied for more than findings.MergedOperators of them gets one finding for all of them
// (operator_ids, the first few named before the message), as findings.OperatorMerger states one
// cause on many operators: in a job of alike vertices, U operators unplaced among V candidates
// would otherwise make U × V findings.
func unplacedFindings(pl *placement.Result, idx placement.Index, newP map[string]int, common []int) []*pb.Finding {
	us := pl.Unplaced
	rescaled := make(map[string]bool, len(pl.Vertices)) // by ID, as candidates name them
	for _, v := range pl.Vertices {
		rescaled[v.ID] = newP[v.ID] != v.Parallelism
	}
	denials := map[string]int{} // candidate vertex → operators it is denied for
	for k, u := range us {
		if common[k] > 0 {
			continue
		}
		for _, c := range u.Candidates {
			if rescaled[c] {
				denials[c]++
			}
		}
	}
	type merge struct {
		f     *pb.Finding // the first operator's, in out
		names []string
	}
	merged := map[string]*merge{}
	var out []*pb.Finding
	for k, u := range us {
		base, list := unplacedBase(u, idx, newP)
		if len(u.Candidates) == 0 {
			base.Severity = pb.Severity_SEVERITY_ERROR
			base.Message = fmt.Sprintf("Operator %s matches no vertex of the running job by ID, name, or parallelism and max parallelism; "+
				"its state was simulated at its stored parallelism, which may not be the parallelism it restores at.", u.Label())
			out = append(out, base)
			continue
		}
		if q := common[k]; q > 0 {
			base.Severity = pb.Severity_SEVERITY_INFO
			base.Message = fmt.Sprintf("Operator %s could be chained in any of %s; all get parallelism %d, so its state was simulated at %d.",
				u.Label(), list, q, q)
			out = append(out, base)
			continue
		}
		id := base.OperatorId
		for _, c := range u.Candidates {
			if !rescaled[c] {
				continue
			}
			if m := merged[c]; m != nil {
				m.f.OperatorIds = append(m.f.OperatorIds, id)
				if len(m.names) < findings.MergedOperators {
					m.names = append(m.names, cmp.Or(u.Name, u.UID, id))
				}
				continue
			}
			f := proto.Clone(base).(*pb.Finding)
			f.Severity = pb.Severity_SEVERITY_ERROR
			f.VertexId = c
			f.Message = fmt.Sprintf("Operator %s could be chained in any of %s, which get different parallelisms; "+
				"its state was simulated at its stored parallelism, so this restore of vertex %s is not checked for it.",
				u.Label(), list, c)
			out = append(out, f)
			if denials[c] > findings.MergedOperators {
				f.OperatorIds = []string{id}
				merged[c] = &merge{f: f, names: []string{cmp.Or(u.Name, u.UID, id)}}
			}
		}
	}
	for _, m := range merged {
		m.f.Message = findings.OperatorsText(m.names, len(m.f.OperatorIds)) + m.f.Message
	}
	return out
}

// unplacedBase is u's PF200 finding before its severity and message, and the list of its
// candidate vertices (at most maxListedCandidates) with their new parallelisms.
func unplacedBase(u placement.Unplaced, idx placement.Index, newP map[string]int) (*pb.Finding, string) {
	base := &pb.Finding{
		RuleId:       UnplacedRuleID,
		Title:        unplacedRule.Title,
		OperatorId:   u.Operator.String(),
		OperatorName: u.Name,
		OperatorUid:  u.UID,
		Remediation:  unplacedRule.Remedies[0].Text,
		References:   append([]string(nil), unplacedRule.References...),
	}
	var cands []string
	for _, c := range u.Candidates[:min(len(u.Candidates), maxListedCandidates)] {
		v, _ := idx.Vertex(c)
		cands = append(cands, fmt.Sprintf("%s %q (→ %d)", c, v.Name, newP[c]))
	}
	if more := len(u.Candidates) - maxListedCandidates; more > 0 {
		cands = append(cands, "and "+units.Plural(int64(more), "more vertex", "more vertices"))
	}
	return base, strings.Join(cands, ", ")
}
