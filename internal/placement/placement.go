// Package placement places the operators of a checkpoint into the job vertices of a running
// job, so that a plan keyed by JobVertexID (what autoscalers have) reaches every operator chained
// into the vertex.
//
// What can be known, from Flink's sources: a JobVertexID is the hash of the chain's head
// operator, so the head is the checkpoint operator with that ID (StreamingJobGraphGenerator). The
// other operators of a chain are in JobVertex.getOperatorIDs, which no REST response lists. The
// REST API gives their names instead: Flink 2.x's stream graph (JobDetailsInfo "stream-graph")
// lists every operator with its job_vertex_id; Flink 1.x names a vertex by joining its
// operators' names with " -> ". Checkpoints of format 5+ (Flink 2.x) store each operator's name,
// so names place them. Older checkpoints store only IDs, parallelism and max parallelism, which
// a chain shares: an operator is placed when exactly one vertex has both. Anything else is
// reported as unplaced with its candidate vertices, never guessed.
package placement

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/flinkrest"
	"github.com/flinkpreflight/preflight/internal/fold"
)

// How an operator was placed.
const (
	ByID          = "id"          // the vertex ID is the operator's ID (chain head)
	ByName        = "name"        // the operator's stored name is one of the vertex's operators
	ByParallelism = "parallelism" // the only vertex with the operator's parallelism and max parallelism
)

// Vertex is a job vertex with the checkpoint operators placed in it, head first.
type Vertex struct {
	ID             string
	Name           string
	Parallelism    int
	MaxParallelism int
	Operators      []checkpoint.OperatorID
	PlacedBy       []string // per operator
}

// Unplaced is a checkpoint operator that could not be placed in exactly one vertex.
type Unplaced struct {
	Operator   checkpoint.OperatorID
	Name, UID  string
	Candidates []string // vertex IDs sharing its parallelism and max parallelism; may be empty
}

// Label names the operator for messages.
func (u Unplaced) Label() string {
	switch {
	case u.Name != "" && u.UID != "":
		return fmt.Sprintf("%s (uid %s, %s)", u.Name, u.UID, u.Operator)
	case u.Name != "":
		return fmt.Sprintf("%s (%s)", u.Name, u.Operator)
	}
	return u.Operator.String()
}

// Result is the placement of one checkpoint into one job.
type Result struct {
	Vertices []Vertex // in the job's order
	Unplaced []Unplaced
}

// Place places every operator of the layout into the job's vertices.
func Place(l *checkpoint.Layout, job *flinkrest.Job) *Result {
	res := &Result{}
	byID := map[string]int{}
	for i, v := range job.Vertices {
		res.Vertices = append(res.Vertices, Vertex{ID: strings.ToLower(v.ID), Name: v.Name, Parallelism: v.Parallelism, MaxParallelism: v.MaxParallelism})
		byID[strings.ToLower(v.ID)] = i
	}
	placed := make([]bool, len(l.Operators))
	// Heads first, so that every vertex's operator list starts with its head.
	for i := range l.Operators {
		op := &l.Operators[i]
		if vi, ok := byID[op.ID.String()]; ok {
			res.Vertices[vi].Operators = append(res.Vertices[vi].Operators, op.ID)
			res.Vertices[vi].PlacedBy = append(res.Vertices[vi].PlacedBy, ByID)
			placed[i] = true
		}
	}
	// Names: the vertices whose operator names include the operator's stored name.
	nameIn := map[string][]int{}
	for vi, v := range job.Vertices {
		seen := map[string]bool{}
		for _, n := range v.Operators {
			if !seen[n] {
				seen[n] = true
				nameIn[n] = append(nameIn[n], vi)
			}
		}
	}
	nameCount := map[string]int{} // checkpoint operators per name: a duplicated name places nothing
	for i := range l.Operators {
		if n := l.Operators[i].Name; n != "" {
			nameCount[n]++
		}
	}
	for i := range l.Operators {
		op := &l.Operators[i]
		if placed[i] || op.Name == "" || nameCount[op.Name] != 1 {
			continue
		}
		if vs := nameIn[op.Name]; len(vs) == 1 {
			res.Vertices[vs[0]].Operators = append(res.Vertices[vs[0]].Operators, op.ID)
			res.Vertices[vs[0]].PlacedBy = append(res.Vertices[vs[0]].PlacedBy, ByName)
			placed[i] = true
		}
	}
	// Parallelism and max parallelism, which every operator of a chain shares; a vertex without
	// a max parallelism (<= 0: an archived job's plan) matches any. The vertices are indexed by
	// both, so that each operator costs its candidates, not a scan of the job.
	byP := map[[2]int][]int{} // {parallelism, max parallelism or 0} → vertices in job order
	for vi, v := range job.Vertices {
		k := [2]int{v.Parallelism, max(v.MaxParallelism, 0)}
		byP[k] = append(byP[k], vi)
	}
	for i := range l.Operators {
		op := &l.Operators[i]
		if placed[i] {
			continue
		}
		cands := byP[[2]int{op.Parallelism, 0}]
		if op.MaxParallelism > 0 {
			cands = merge(byP[[2]int{op.Parallelism, op.MaxParallelism}], cands)
		}
		if len(cands) == 1 {
			v := &res.Vertices[cands[0]]
			v.Operators = append(v.Operators, op.ID)
			v.PlacedBy = append(v.PlacedBy, ByParallelism)
			continue
		}
		u := Unplaced{Operator: op.ID, Name: op.Name, UID: op.UID}
		for _, vi := range cands {
			u.Candidates = append(u.Candidates, res.Vertices[vi].ID)
		}
		res.Unplaced = append(res.Unplaced, u)
	}
	// By ID, as its hex string sorts (lower-case hex keeps the bytes' order).
	slices.SortStableFunc(res.Unplaced, func(a, b Unplaced) int { return bytes.Compare(a.Operator[:], b.Operator[:]) })
	return res
}

// merge merges two ascending lists of vertex indexes, into a new one when neither is empty (the
// result is only read).
func merge(a, b []int) []int {
	switch {
	case len(a) == 0:
		return b
	case len(b) == 0:
		return a
	}
	out := make([]int, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0] < b[0] {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// Index looks vertices up by ID in any case (as strings.EqualFold compares), from a map built
// once: callers look up many IDs (a plan's keys, unplaced operators' candidates), which a scan
// would answer by reading every vertex each time.
type Index struct {
	byID map[string]*Vertex // fold.Key of the ID → the first vertex with it
}

// Index indexes the vertices; it sees the vertices as they are now.
func (r *Result) Index() Index {
	x := Index{byID: make(map[string]*Vertex, len(r.Vertices))}
	for i := range r.Vertices {
		if k := fold.Key(r.Vertices[i].ID); x.byID[k] == nil {
			x.byID[k] = &r.Vertices[i]
		}
	}
	return x
}

// Vertex returns the first vertex whose ID equals id in any case.
func (x Index) Vertex(id string) (*Vertex, bool) {
	v := x.byID[fold.Key(id)]
	return v, v != nil
}
