// Package decision turns a check of an autoscaler's proposal into an answer per job vertex:
// APPROVE the proposed parallelism, ADJUST it to the nearest safe parallelism in the direction
// of the proposal, or VETO it (keep the current one), each with the finding IDs behind it. It
// is a thin layer over the engine's report: it owns no simulation, only the choice among
// parallelisms the engine judged, and it is deterministic (same checkpoint and proposal, same
// answer). Sources, REST discovery and caching belong to its callers.
package decision

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/flinkrest"
	"github.com/flinkpreflight/preflight/internal/placement"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// MaxProbes bounds the extra single-vertex simulations per vertex when the engine's nearest
// safe parallelism is not key-group aligned.
const MaxProbes = 16

// Input is a decoded checkpoint, optionally the running job it belongs to, and the proposal.
type Input struct {
	Layout    *checkpoint.Layout
	Source    string               // label of the checkpoint (URI)
	Job       *flinkrest.Job       // nil without REST discovery
	Placement *placement.Result    // with Job
	Choice    *pb.CheckpointChoice // how the checkpoint was chosen, if discovered
	Request   *pb.DecideRequest
	// Files is what verify_files found (nil when it did not run) and FileFindings its findings:
	// one at or above the fail level vetoes every vertex, since no parallelism restores from a
	// checkpoint whose files are missing or wrong.
	Files        *pb.FileVerification
	FileFindings []*pb.Finding
}

// ErrNoProposal is returned for a request without proposed parallelism.
var ErrNoProposal = errors.New("decide: proposed_parallelism is empty")

// Decide checks the proposal and decides per vertex.
func Decide(ctx context.Context, eng *engine.Engine, in Input) (*pb.DecideResponse, error) {
	req := in.Request
	if len(req.GetProposedParallelism()) == 0 {
		return nil, ErrNoProposal
	}
	opts := proto.Clone(orEmpty(req.GetOptions())).(*pb.CheckOptions)
	if opts.GetFlinkVersion() == "" && in.Job != nil {
		opts.FlinkVersion = in.Job.FlinkVersion
	}
	fail := opts.GetFailLevel()
	if fail == pb.Severity_SEVERITY_UNSPECIFIED {
		fail = pb.Severity_SEVERITY_ERROR
	}
	plan := &pb.RescalePlan{VertexParallelism: map[string]int32{}}
	places := indexPlacement(in.Placement)
	stateless := map[string]bool{} // proposal keys naming a vertex with no operator in the checkpoint
	for k, p := range req.GetProposedParallelism() {
		if in.Placement != nil {
			if v, ok := places.vertex(k); ok && len(v.Operators) == 0 {
				stateless[k] = true
				continue
			}
		}
		plan.VertexParallelism[k] = p
	}
	rep, err := eng.Check(ctx, engine.Request{Layout: in.Layout, Source: in.Source, Plan: plan, Options: opts, Placement: in.Placement})
	if err != nil {
		return nil, err
	}
	resp := &pb.DecideResponse{Checkpoint: in.Source, CheckpointChoice: in.Choice, Parallelism: map[string]int32{}}
	if in.Choice != nil {
		resp.CheckpointNote = in.Choice.GetNote()
	}
	for _, f := range rep.GetFindings() {
		if f.GetSeverity() >= fail {
			resp.Findings = append(resp.Findings, f)
		}
	}
	d := &decider{ctx: ctx, eng: eng, in: in, rep: rep, plan: plan, opts: opts, fail: fail, places: places}
	d.index()
	keys := make([]string, 0, len(req.GetProposedParallelism()))
	for k := range req.GetProposedParallelism() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var vd *pb.VertexDecision
		if stateless[k] {
			v, _ := places.vertex(k)
			p := req.GetProposedParallelism()[k]
			vd = &pb.VertexDecision{VertexId: v.ID, Name: v.Name, Key: k, CurrentParallelism: int32(v.Parallelism), ProposedParallelism: p,
				MaxParallelism: int32(v.MaxParallelism), Action: pb.DecisionAction_DECISION_ACTION_APPROVE, Parallelism: p,
				Reason: "The vertex has no operator in the checkpoint: no state to redistribute."}
		} else if vd, err = d.vertex(k, req.GetProposedParallelism()[k], req.GetAlignToKeyGroups()); err != nil {
			return nil, err
		}
		resp.Vertices = append(resp.Vertices, vd)
		resp.Parallelism[k] = vd.GetParallelism()
	}
	sort.SliceStable(resp.Vertices, func(a, b int) bool { return resp.Vertices[a].GetVertexId() < resp.Vertices[b].GetVertexId() })
	resp.FileVerification = in.Files
	vetoForFiles(resp, in.FileFindings, fail)
	resp.Action = overall(resp.Vertices)
	if resp.Action == pb.DecisionAction_DECISION_ACTION_VETO {
		resp.Parallelism = nil // FLIP-575: an empty map vetoes the whole scaling
	}
	return resp, nil
}

// vetoForFiles vetoes every vertex when a finding of verify_files is at or above the fail level:
// the restore cannot find its files, whatever the parallelism.
func vetoForFiles(resp *pb.DecideResponse, fs []*pb.Finding, fail pb.Severity) {
	var ids []string
	msg := ""
	for _, f := range fs {
		if f.GetSeverity() < fail {
			continue
		}
		resp.Findings = append(resp.Findings, f)
		if !slices.Contains(ids, f.GetRuleId()) {
			ids = append(ids, f.GetRuleId())
		}
		if msg == "" {
			msg = firstSentence(f.GetMessage())
		}
	}
	if len(ids) == 0 {
		return
	}
	sort.Strings(ids)
	for _, v := range resp.Vertices {
		for _, id := range ids {
			if !slices.Contains(v.FindingIds, id) {
				v.FindingIds = append(v.FindingIds, id)
			}
		}
		sort.Strings(v.FindingIds)
		v.Action, v.Parallelism = pb.DecisionAction_DECISION_ACTION_VETO, v.GetCurrentParallelism()
		v.Reason = fmt.Sprintf("Vetoed: %s: %s; no parallelism restores from this checkpoint. Keep %d.", strings.Join(ids, ", "), msg, v.GetCurrentParallelism())
		resp.Parallelism[v.GetKey()] = v.GetParallelism()
	}
}

func orEmpty(o *pb.CheckOptions) *pb.CheckOptions {
	if o == nil {
		return &pb.CheckOptions{}
	}
	return o
}

func overall(vs []*pb.VertexDecision) pb.DecisionAction {
	a := pb.DecisionAction_DECISION_ACTION_APPROVE
	for _, v := range vs {
		if v.GetAction() > a {
			a = v.GetAction() // APPROVE < ADJUST < VETO
		}
	}
	return a
}

type decider struct {
	ctx  context.Context
	eng  *engine.Engine
	in   Input
	rep  *pb.RescaleReport
	plan *pb.RescalePlan
	opts *pb.CheckOptions
	fail pb.Severity

	// The report indexed once (index), so that deciding each of many vertices does not scan
	// every operator, finding and safe-parallelism entry: first operator (report order) by
	// operator ID, vertex ID, uid and name; the vertex's head operator; findings and safe
	// entries by vertex ID.
	opByID, opByVertex, opByUID, opByName map[string]int
	head                                  map[string]int
	findingsOf                            map[string][]int
	safeOf                                map[string][]*pb.SafeParallelism
	// prober tests aligned candidates, vertex by vertex; built on first use.
	prober *engine.Prober
	places placementIndex
}

// placementIndex answers placement.Result's lookups from maps (its own scan every vertex).
type placementIndex struct {
	byID map[string]*placement.Vertex // lower-case vertex ID
	byOp map[checkpoint.OperatorID]*placement.Vertex
}

func indexPlacement(pl *placement.Result) placementIndex {
	x := placementIndex{byID: map[string]*placement.Vertex{}, byOp: map[checkpoint.OperatorID]*placement.Vertex{}}
	if pl == nil {
		return x
	}
	for i := range pl.Vertices {
		v := &pl.Vertices[i]
		if k := strings.ToLower(v.ID); x.byID[k] == nil {
			x.byID[k] = v
		}
		for _, o := range v.Operators {
			if x.byOp[o] == nil {
				x.byOp[o] = v
			}
		}
	}
	return x
}

func (x placementIndex) vertex(id string) (*placement.Vertex, bool) {
	v := x.byID[strings.ToLower(id)]
	return v, v != nil
}

func (x placementIndex) vertexOf(op checkpoint.OperatorID) (*placement.Vertex, bool) {
	v := x.byOp[op]
	return v, v != nil
}

// index builds the decider's lookups over the report.
func (d *decider) index() {
	ops := d.rep.GetOperators()
	d.opByID, d.opByVertex = make(map[string]int, len(ops)), make(map[string]int, len(ops))
	d.opByUID, d.opByName, d.head = map[string]int{}, map[string]int{}, map[string]int{}
	first := func(m map[string]int, k string, i int) {
		if _, ok := m[k]; !ok {
			m[k] = i
		}
	}
	for i, o := range ops {
		first(d.opByID, o.GetOperatorId(), i)
		first(d.opByVertex, o.GetVertexId(), i)
		if o.GetUid() != "" {
			first(d.opByUID, o.GetUid(), i)
		}
		if o.GetName() != "" {
			first(d.opByName, o.GetName(), i)
		}
		if o.GetOperatorId() == o.GetVertexId() {
			first(d.head, o.GetVertexId(), i)
		}
	}
	d.findingsOf = map[string][]int{}
	add := func(vertex string, i int) {
		if l := d.findingsOf[vertex]; len(l) == 0 || l[len(l)-1] != i {
			d.findingsOf[vertex] = append(l, i)
		}
	}
	for i, f := range d.rep.GetFindings() {
		if f.GetSeverity() < d.fail {
			continue
		}
		add(f.GetVertexId(), i)
		// One finding stands for the same rule and cause on many operators (operator_ids): it
		// denies each of their vertices, not only the first one's.
		for _, id := range f.GetOperatorIds() {
			if j, ok := d.opByID[id]; ok {
				add(ops[j].GetVertexId(), i)
			}
		}
	}
	d.safeOf = map[string][]*pb.SafeParallelism{}
	for _, s := range d.rep.GetSafeParallelism() {
		d.safeOf[s.GetVertexId()] = append(d.safeOf[s.GetVertexId()], s)
	}
}

// target is the vertex a proposal key names.
type target struct {
	id, reportID, name string
	current, maxP      int
}

func (d *decider) resolve(key string) (target, bool) {
	lk := strings.ToLower(key)
	if d.in.Placement != nil {
		if v, ok := d.places.vertex(key); ok {
			t := target{id: v.ID, name: v.Name, current: v.Parallelism, maxP: v.MaxParallelism}
			if len(v.Operators) > 0 {
				t.reportID = d.reportVertex(v.Operators[0].String())
			}
			return t, t.reportID != ""
		}
	}
	// The first operator in report order that the key names by operator ID, vertex ID, uid
	// hash, uid or name.
	uidHash := checkpoint.OperatorIDFromUID(key).String()
	at := -1
	for _, m := range []struct {
		idx map[string]int
		k   string
	}{{d.opByID, lk}, {d.opByVertex, lk}, {d.opByID, uidHash}, {d.opByUID, key}, {d.opByName, key}} {
		if i, ok := m.idx[m.k]; ok && (at < 0 || i < at) {
			at = i
		}
	}
	if at < 0 {
		return target{}, false
	}
	o := d.rep.GetOperators()[at]
	t := target{id: o.GetVertexId(), reportID: o.GetVertexId(), name: o.GetName(), current: int(o.GetOldParallelism()), maxP: int(o.GetMaxParallelism())}
	if v, ok := d.places.vertexOf(mustID(o.GetOperatorId())); ok {
		t.id, t.name, t.current, t.maxP = v.ID, v.Name, v.Parallelism, v.MaxParallelism
	}
	if head := d.headName(o.GetVertexId()); t.name == "" {
		t.name = head
	}
	return t, true
}

func mustID(s string) checkpoint.OperatorID {
	id, _ := checkpoint.ParseOperatorID(s)
	return id
}

func (d *decider) reportVertex(opID string) string {
	if i, ok := d.opByID[opID]; ok {
		return d.rep.GetOperators()[i].GetVertexId()
	}
	return ""
}

func (d *decider) headName(vid string) string {
	if i, ok := d.head[vid]; ok {
		return d.rep.GetOperators()[i].GetName()
	}
	return ""
}

// denying returns the rule IDs of the vertex's findings at or above the fail level, and the
// first such finding's message.
func (d *decider) denying(t target) ([]string, string) {
	var ids []string
	msg := ""
	idx := d.findingsOf[t.reportID]
	if t.id != t.reportID {
		idx = mergeSorted(idx, d.findingsOf[t.id])
	}
	for _, i := range idx {
		f := d.rep.GetFindings()[i]
		if !slices.Contains(ids, f.GetRuleId()) {
			ids = append(ids, f.GetRuleId())
		}
		if msg == "" {
			msg = f.GetMessage()
		}
	}
	sort.Strings(ids)
	return ids, msg
}

func (d *decider) vertex(key string, proposed int32, align bool) (*pb.VertexDecision, error) {
	t, ok := d.resolve(key)
	if !ok {
		return nil, &engine.PlanError{Field: "proposed_parallelism", Key: key, Msg: "names no vertex of the job or operator of the checkpoint"}
	}
	vd := &pb.VertexDecision{VertexId: t.id, Name: t.name, Key: key, CurrentParallelism: int32(t.current), ProposedParallelism: proposed, MaxParallelism: int32(t.maxP)}
	ids, msg := d.denying(t)
	p := int(proposed)
	if len(ids) == 0 && (!align || p == t.current || aligned(p, t.maxP)) {
		vd.Action, vd.Parallelism = pb.DecisionAction_DECISION_ACTION_APPROVE, proposed
		vd.Reason = fmt.Sprintf("Parallelism %d restores without findings at or above %s.", p, severityName(d.fail))
		return vd, nil
	}
	vd.FindingIds = ids
	why := fmt.Sprintf("parallelism %d is not a divisor of max parallelism %d (key groups would be spread unevenly)", p, t.maxP)
	if len(ids) > 0 {
		why = fmt.Sprintf("parallelism %d fails %s: %s", p, strings.Join(ids, ", "), firstSentence(msg))
	}
	veto := func(reason string) *pb.VertexDecision {
		vd.Action, vd.Parallelism = pb.DecisionAction_DECISION_ACTION_VETO, int32(t.current)
		vd.Reason = fmt.Sprintf("Vetoed: %s; %s Keep %d.", why, reason, t.current)
		return vd
	}
	if p == t.current {
		return veto("the current parallelism itself does not restore cleanly, so there is nothing to adjust to."), nil
	}
	if slices.Contains(ids, engine.UnplacedRuleID) {
		return veto("an operator of the checkpoint cannot be placed in one vertex, so no parallelism of this vertex can be checked."), nil
	}
	c, err := d.nearestSafe(key, t, p, align)
	if err != nil {
		return nil, err
	}
	if c == 0 {
		dir := "above"
		if p < t.current {
			dir = "below"
		}
		return veto(fmt.Sprintf("no safe parallelism %s the current %d in the direction of the proposal was found%s.", dir, t.current, alignNote(align))), nil
	}
	vd.Action, vd.Parallelism = pb.DecisionAction_DECISION_ACTION_ADJUST, int32(c)
	vd.Reason = fmt.Sprintf("Adjusted to %d: %s; %d is the nearest safe parallelism in the direction of the proposal%s.", c, why, c, alignNote(align))
	return vd, nil
}

func alignNote(align bool) string {
	if align {
		return " that divides the max parallelism"
	}
	return ""
}

func severityName(s pb.Severity) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "SEVERITY_"))
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i]
	}
	return strings.TrimSuffix(s, ".")
}

func aligned(p, maxP int) bool { return maxP <= 0 || maxP%p == 0 }

// nearestSafe returns the safe parallelism nearest to the proposal on the proposal's side of
// the current parallelism (0 if none): the engine's search gives the nearest safe value below
// and above the proposal; when key-group alignment is asked and those are not aligned, aligned
// candidates are tested one by one, nearest first.
func (d *decider) nearestSafe(key string, t target, p int, align bool) (int, error) {
	up := p > t.current
	inRange := func(c int) bool {
		if c < 1 || c == p {
			return false
		}
		if up {
			return c > t.current && (t.maxP <= 0 || c <= t.maxP)
		}
		return c < t.current
	}
	closer := func(a, b int) bool { // a nearer the proposal than b; ties go towards the current
		da, db := abs(a-p), abs(b-p)
		if da != db {
			return da < db
		}
		return abs(a-t.current) < abs(b-t.current)
	}
	best := 0
	for _, s := range d.safeOf[t.reportID] {
		for _, c := range []int{int(s.GetBelow()), int(s.GetAbove())} {
			if inRange(c) && (best == 0 || closer(c, best)) {
				best = c
			}
		}
	}
	if best != 0 && (!align || aligned(best, t.maxP)) {
		return best, nil
	}
	if !align {
		return 0, nil
	}
	// Aligned candidates: divisors of the max parallelism on the proposal's side, nearest first.
	var cands []int
	for c := 1; c <= t.maxP; c++ {
		if t.maxP%c == 0 && inRange(c) {
			cands = append(cands, c)
		}
	}
	sort.SliceStable(cands, func(a, b int) bool { return closer(cands[a], cands[b]) })
	for i, c := range cands {
		if i >= MaxProbes {
			break
		}
		// The vertex at c, every other vertex as proposed: the prober simulated the proposal once
		// and re-simulates only this vertex per candidate.
		if d.prober == nil {
			pr, err := d.eng.NewProber(d.ctx, d.in.Layout, d.plan, d.opts, d.in.Placement)
			if err != nil {
				return 0, err
			}
			d.prober = pr
		}
		ids, err := d.prober.DenyingAt(d.ctx, t.reportID, c)
		if err != nil {
			return 0, err
		}
		if len(ids) == 0 {
			return c, nil
		}
	}
	return 0, nil
}

// mergeSorted merges two ascending index lists.
func mergeSorted(a, b []int) []int {
	out := make([]int, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0] <= b[0] {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Failed is the answer when the check could not run: every proposed vertex vetoed
// (FAIL_CLOSED, the default) or approved as proposed (FAIL_OPEN), with failed set and the
// reason. code is the gRPC code name of the failure, e.g. "UNAVAILABLE".
func Failed(req *pb.DecideRequest, code string, err error) *pb.DecideResponse {
	open := req.GetOnFailure() == pb.FailurePolicy_FAILURE_POLICY_FAIL_OPEN
	resp := &pb.DecideResponse{Failed: true, Failure: code + ": " + err.Error()}
	keys := make([]string, 0, len(req.GetProposedParallelism()))
	for k := range req.GetProposedParallelism() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if open {
		resp.Action = pb.DecisionAction_DECISION_ACTION_APPROVE
		resp.Parallelism = map[string]int32{}
	} else {
		resp.Action = pb.DecisionAction_DECISION_ACTION_VETO
	}
	for _, k := range keys {
		p := req.GetProposedParallelism()[k]
		vd := &pb.VertexDecision{VertexId: strings.ToLower(k), Key: k, ProposedParallelism: p}
		if open {
			vd.Action, vd.Parallelism = pb.DecisionAction_DECISION_ACTION_APPROVE, p
			vd.Reason = "Approved unchecked (fail-open): " + resp.Failure
			resp.Parallelism[k] = p
		} else {
			vd.Action = pb.DecisionAction_DECISION_ACTION_VETO
			vd.Reason = "Vetoed unchecked (fail-closed): " + resp.Failure
		}
		resp.Vertices = append(resp.Vertices, vd)
	}
	return resp
}
