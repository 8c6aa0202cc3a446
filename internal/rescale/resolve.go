package rescale

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// resolver turns the plan's keys into operator IDs.
type resolver struct {
	layout *checkpoint.Layout
	byID   map[checkpoint.OperatorID]int // checkpoint operators by ID
	byUID  map[string][]int              // format 5+
	byName map[string][]int              // format 5+
	// known are the new job's operators declared by the plan (Vertices, NewJobOperators,
	// UserDefinedOperatorIDs keys), by generated ID, with the key that declared them.
	known map[checkpoint.OperatorID]string
	// byHash are the plan keys that named a checkpoint operator only through the hash of a uid
	// the checkpoint does not store (format 1-4, or an operator without uid), by operator ID:
	// reports say so, since nothing else in the file ties the key to the operator.
	byHash map[checkpoint.OperatorID]string
	// stop ends the loops over the layout's operators and the plan's keys.
	stop *cancel.Flag
}

func newResolver(l *checkpoint.Layout, stop *cancel.Flag) *resolver {
	r := &resolver{layout: l, byID: make(map[checkpoint.OperatorID]int, len(l.Operators)),
		known: map[checkpoint.OperatorID]string{}, stop: stop}
	for i := range l.Operators {
		stop.Check()
		op := &l.Operators[i]
		if _, dup := r.byID[op.ID]; !dup {
			r.byID[op.ID] = i
		}
	}
	return r
}

// indexNames builds byUID and byName on the first key that needs them: most plans name
// operators by ID or not at all.
func (r *resolver) indexNames() {
	if r.byUID != nil {
		return
	}
	r.byUID, r.byName = map[string][]int{}, map[string][]int{}
	for i := range r.layout.Operators {
		r.stop.Check()
		op := &r.layout.Operators[i]
		if op.UID != "" {
			r.byUID[op.UID] = append(r.byUID[op.UID], i)
		}
		if op.Name != "" {
			r.byName[op.Name] = append(r.byName[op.Name], i)
		}
	}
}

// checkpointMatches returns the IDs of the checkpoint operators a key names: by ID, uid hash,
// uid or name, or else by a prefix of the ID's hex (the short IDs reports print).
func (r *resolver) checkpointMatches(key string) []checkpoint.OperatorID {
	var out []checkpoint.OperatorID
	add := func(id checkpoint.OperatorID) {
		for _, x := range out {
			if x == id {
				return
			}
		}
		out = append(out, id)
	}
	if id, err := checkpoint.ParseOperatorID(key); err == nil {
		if _, ok := r.byID[id]; ok {
			add(id)
		}
		return out
	}
	if id := checkpoint.OperatorIDFromUID(key); r.has(id) {
		add(id)
		if i, ok := r.byID[id]; ok && r.layout.Operators[i].UID == "" {
			if r.byHash == nil {
				r.byHash = map[checkpoint.OperatorID]string{}
			}
			r.byHash[id] = key
		}
	}
	r.indexNames()
	for _, i := range r.byUID[key] {
		add(r.layout.Operators[i].ID)
	}
	for _, i := range r.byName[key] {
		add(r.layout.Operators[i].ID)
	}
	if len(out) == 0 && checkpoint.IsIDPrefix(key) {
		for i := range r.layout.Operators {
			r.stop.Check()
			if id := r.layout.Operators[i].ID; id.HasPrefix(key) {
				add(id)
			}
		}
	}
	return out
}

// NamedOperator is the one checkpoint operator of l that a plan key which is not a hex ID names,
// by the rule checkpointMatches applies: the key's hash as a uid is an operator's ID, or the
// key is an operator's uid or name (format 5+), or else a prefix of its ID's hex (checkpoint.MinIDPrefix
// digits or more). ok is false when the key names no operator or
// several. It scans l without building an index, for callers that resolve a key or two against
// an already decoded layout (the server's result keys); TestNamedOperatorMatchesResolver holds
// it to checkpointMatches.
func NamedOperator(l *checkpoint.Layout, key string) (id checkpoint.OperatorID, ok bool) {
	if key == "" {
		return id, false
	}
	n := 0
	add := func(x checkpoint.OperatorID) {
		if n == 0 || x != id {
			id = x
			n++
		}
	}
	uidHash := checkpoint.OperatorIDFromUID(key)
	for i := range l.Operators {
		if l.Operators[i].ID == uidHash {
			add(uidHash)
			break
		}
	}
	for i := range l.Operators {
		if op := &l.Operators[i]; op.UID != "" && op.UID == key || op.Name != "" && op.Name == key {
			add(op.ID)
		}
	}
	if n == 0 && checkpoint.IsIDPrefix(key) {
		for i := range l.Operators {
			if l.Operators[i].ID.HasPrefix(key) {
				add(l.Operators[i].ID)
			}
		}
	}
	return id, n == 1
}

func (r *resolver) has(id checkpoint.OperatorID) bool {
	_, ok := r.byID[id]
	return ok
}

// declare resolves an operator of the new job named by the plan: a hex ID, or a uid or name of a
// checkpoint operator, or else the uid of a new operator.
func (r *resolver) declare(field, key string) (checkpoint.OperatorID, error) {
	if id, err := checkpoint.ParseOperatorID(key); err == nil {
		r.known[id] = key
		return id, nil
	}
	if key == "" {
		return checkpoint.OperatorID{}, &PlanError{Field: field, Msg: "empty operator key"}
	}
	m := r.checkpointMatches(key)
	switch len(m) {
	case 0:
		id := checkpoint.OperatorIDFromUID(key)
		r.known[id] = key
		return id, nil
	case 1:
		r.known[m[0]] = key
		return m[0], nil
	}
	return checkpoint.OperatorID{}, r.ambiguous(field, key, "operators of the checkpoint", m)
}

// ambiguous is the error for a key that names several operators (a name that two operators
// share, or one operator's name that is another's uid): it lists them with their IDs, so that
// the user can pick one as the key.
func (r *resolver) ambiguous(field, key, what string, ids []checkpoint.OperatorID) error {
	list := make([]string, 0, len(ids))
	for _, id := range ids {
		list = append(list, r.describe(id))
	}
	return &PlanError{Field: field, Key: key, Msg: fmt.Sprintf("ambiguous: names %d %s: %s; use one operator's ID (or its uid) as the key",
		len(ids), what, strings.Join(list, ", "))}
}

// describe names an operator for an error message: its name and uid when the checkpoint has
// them, its position in the checkpoint, and its ID.
func (r *resolver) describe(id checkpoint.OperatorID) string {
	i, ok := r.byID[id]
	if !ok {
		if key := r.known[id]; key != "" {
			return fmt.Sprintf("new operator %q (ID %s)", key, id)
		}
		return "operator " + id.String()
	}
	op := &r.layout.Operators[i]
	var parts []string
	if op.UID != "" {
		parts = append(parts, "uid "+op.UID)
	}
	parts = append(parts, fmt.Sprintf("#%d in the checkpoint", i+1), "ID "+id.String())
	name := "operator"
	if op.Name != "" {
		name = fmt.Sprintf("%q", op.Name)
	}
	return name + " (" + strings.Join(parts, ", ") + ")"
}

// lookup returns the operators (checkpoint or declared) a key of a plan map names.
func (r *resolver) lookup(key string) []checkpoint.OperatorID {
	if id, err := checkpoint.ParseOperatorID(key); err == nil {
		if _, ok := r.known[id]; ok || r.has(id) {
			return []checkpoint.OperatorID{id}
		}
		return nil
	}
	m := r.checkpointMatches(key)
	if id := checkpoint.OperatorIDFromUID(key); len(m) == 0 {
		if _, ok := r.known[id]; ok {
			m = append(m, id)
		}
	}
	return m
}

// vertexBuild is the state of buildVertices: the operators declared so far and the checkpoint
// state each new-job operator takes.
type vertexBuild struct {
	r        *resolver
	inVertex map[checkpoint.OperatorID]string // where each declared operator is, for errors
	newJob   map[checkpoint.OperatorID]bool
	aliases  map[checkpoint.OperatorID]checkpoint.OperatorID // generated ID → user-defined ID
	consumed []bool                                          // per checkpoint operator
	solo     []soloRef
	soloFull []soloVertex
}

// buildVertices resolves the chains and the new job's operators (§3.4, §3.5). consumed marks the
// checkpoint operators whose state some operator of the new job takes.
func buildVertices(r *resolver, plan Plan) ([]vertexPlan, []soloRef, []soloVertex, []bool, error) {
	b := &vertexBuild{r: r, inVertex: map[checkpoint.OperatorID]string{}}
	var vps []vertexPlan
	for vi, spec := range plan.Vertices {
		vp, err := b.declareVertex(vi, spec)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		vps = append(vps, vp)
	}
	if err := b.declareNewJob(plan); err != nil {
		return nil, nil, nil, nil, err
	}
	b.consumed = make([]bool, len(r.layout.Operators))
	for v := range vps {
		r.stop.Check()
		vp := &vps[v]
		for _, id := range vp.ops {
			i, st := b.stateOf(id)
			vp.states = append(vp.states, i)
			vp.stIDs = append(vp.stIDs, st)
		}
	}
	b.soloVertices(plan)
	return vps, b.solo, b.soloFull, b.consumed, nil
}

// declareVertex resolves plan.Vertices[vi]: its operators, and its ID (the head's).
func (b *vertexBuild) declareVertex(vi int, spec VertexSpec) (vertexPlan, error) {
	var vp vertexPlan
	add := func(field, key string, id checkpoint.OperatorID) error {
		if prev, dup := b.inVertex[id]; dup {
			return &PlanError{Field: field, Key: key, Msg: "operator is already in " + prev}
		}
		b.inVertex[id] = fmt.Sprintf("vertices[%d]", vi)
		vp.ops = append(vp.ops, id)
		return nil
	}
	for oi, key := range spec.Operators {
		b.r.stop.Check()
		field := fmt.Sprintf("vertices[%d].operators[%d]", vi, oi)
		id, err := b.r.declare(field, key)
		if err != nil {
			return vp, err
		}
		if err := add(field, key, id); err != nil {
			return vp, err
		}
	}
	if spec.ID != "" {
		field := fmt.Sprintf("vertices[%d].id", vi)
		id, err := b.r.declare(field, spec.ID)
		if err != nil {
			return vp, err
		}
		switch {
		case len(vp.ops) == 0:
			if err := add(field, spec.ID, id); err != nil {
				return vp, err
			}
		case id != vp.ops[0]:
			return vp, &PlanError{Field: field, Key: spec.ID,
				Msg: "a vertex ID is its head operator's ID, but this names another operator than operators[0]"}
		}
	}
	if len(vp.ops) == 0 {
		return vp, &PlanError{Field: fmt.Sprintf("vertices[%d]", vi), Msg: "vertex without operators"}
	}
	return vp, nil
}

// declareNewJob resolves NewJobOperators and UserDefinedOperatorIDs.
func (b *vertexBuild) declareNewJob(plan Plan) error {
	b.newJob = map[checkpoint.OperatorID]bool{}
	for i, key := range plan.NewJobOperators {
		b.r.stop.Check()
		id, err := b.r.declare(fmt.Sprintf("new_job_operators[%d]", i), key)
		if err != nil {
			return err
		}
		b.newJob[id] = true
	}
	b.aliases = map[checkpoint.OperatorID]checkpoint.OperatorID{}
	for _, key := range sortedKeys(plan.UserDefinedOperatorIDs) {
		field := "user_defined_operator_ids"
		id, err := b.r.declare(field, key)
		if err != nil {
			return err
		}
		ud, err := checkpoint.ParseOperatorID(plan.UserDefinedOperatorIDs[key])
		if err != nil {
			return &PlanError{Field: field, Key: key, Msg: err.Error()}
		}
		b.aliases[id] = ud
		b.newJob[id] = true
	}
	return nil
}

// stateOf picks the checkpoint state of a new-job operator: the user-defined ID when the
// checkpoint holds state under it, else the generated ID (newer StateAssignmentOperation).
func (b *vertexBuild) stateOf(id checkpoint.OperatorID) (int, checkpoint.OperatorID) {
	r, consumed := b.r, b.consumed
	if ud, ok := b.aliases[id]; ok {
		if i, ok := r.byID[ud]; ok && !consumed[i] {
			consumed[i] = true
			if g, ok := r.byID[id]; ok {
				// State under the generated ID too: Flink maps it (the ID belongs to the
				// vertex) but restores the user-defined one; the generated ID's state is ignored.
				consumed[g] = true
			}
			return i, ud
		}
	}
	if i, ok := r.byID[id]; ok && !consumed[i] {
		consumed[i] = true
		return i, id
	}
	return -1, id
}

// soloOf returns the vertex of its own for operator id.
func (b *vertexBuild) soloOf(id checkpoint.OperatorID) soloRef {
	i, st := b.stateOf(id)
	if i >= 0 && st == id && b.r.layout.Operators[i].ID == id {
		return soloRef(i)
	}
	b.soloFull = append(b.soloFull, soloVertex{id: id, stID: st, state: int32(i)})
	return soloRef(-len(b.soloFull))
}

// soloVertices gives operators named only in NewJobOperators or UserDefinedOperatorIDs one
// vertex each, checkpoint operators first (file order), then new ones. A checkpoint operator's
// own vertex is marked by the index of the first operator with its ID (a slice, not a map entry
// per operator: files may hold a million operators).
func (b *vertexBuild) soloVertices(plan Plan) {
	r := b.r
	aliasTarget := map[checkpoint.OperatorID]bool{} // restored by the operator that declares it
	for _, ud := range b.aliases {
		aliasTarget[ud] = true
	}
	own := make([]bool, len(r.layout.Operators))
	taken := func(id checkpoint.OperatorID) bool {
		if b.inVertex[id] != "" {
			return true
		}
		i, ok := r.byID[id]
		return ok && own[i]
	}
	for i := range r.layout.Operators {
		r.stop.Check()
		id := r.layout.Operators[i].ID
		if b.consumed[i] || taken(id) || aliasTarget[id] {
			continue
		}
		if plan.NewJobOperators != nil && !b.newJob[id] {
			continue
		}
		own[r.byID[id]] = true
		b.solo = append(b.solo, b.soloOf(id))
	}
	for _, id := range sortedIDs(b.newJob) {
		r.stop.Check()
		if taken(id) {
			continue
		}
		b.inVertex[id] = "a vertex of its own"
		b.solo = append(b.solo, b.soloOf(id))
	}
}

func sortedIDs(m map[checkpoint.OperatorID]bool) []checkpoint.OperatorID {
	out := make([]checkpoint.OperatorID, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].String() < out[b].String() })
	return out
}

// verticesOf returns the vertices a plan key applies to.
func verticesOf(r *resolver, byOp map[checkpoint.OperatorID]int, field, key string) ([]int, error) {
	ids := r.lookup(key)
	if len(ids) == 0 {
		return nil, r.unknownKey(field, key)
	}
	var vs []int
	var in []checkpoint.OperatorID // the matched operators that are in some vertex
	for _, id := range ids {
		if v, ok := byOp[id]; ok {
			in = append(in, id)
			if !slices.Contains(vs, v) {
				vs = append(vs, v)
			}
		}
	}
	if len(vs) > 1 {
		// A name two operators share would silently set both vertices: the user meant one.
		return nil, r.ambiguous(field, key, "operators in different vertices", in)
	}
	return vs, nil
}

func resolveInts(r *resolver, byOp map[checkpoint.OperatorID]int, field string, m map[string]int) (map[int]int, error) {
	out := map[int]int{}
	for _, key := range sortedKeys(m) {
		p := m[key]
		if p < 1 || p > UpperBoundMaxParallelism {
			return nil, &PlanError{Field: field, Key: key,
				Msg: fmt.Sprintf("parallelism %d not within 1..%d", p, UpperBoundMaxParallelism)}
		}
		vs, err := verticesOf(r, byOp, field, key)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if old, ok := out[v]; ok && old != p {
				return nil, &PlanError{Field: field, Key: key,
					Msg: fmt.Sprintf("parallelism %d contradicts %d given for the same vertex", p, old)}
			}
			out[v] = p
		}
	}
	return out, nil
}

func resolveMappers(r *resolver, byOp map[checkpoint.OperatorID]int, field string, m map[string]SubtaskMapper) (map[int]SubtaskMapper, error) {
	out := map[int]SubtaskMapper{}
	for _, key := range sortedKeys(m) {
		vs, err := verticesOf(r, byOp, field, key)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if old, ok := out[v]; ok && old != m[key] {
				return nil, &PlanError{Field: field, Key: key, Msg: "contradicts another key for the same vertex"}
			}
			out[v] = m[key]
		}
	}
	return out, nil
}

// sortedKeys returns m's keys in order, so that errors and results do not depend on map order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
