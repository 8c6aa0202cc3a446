package rescale

import (
	"fmt"

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
}

func newResolver(l *checkpoint.Layout) *resolver {
	r := &resolver{layout: l, byID: map[checkpoint.OperatorID]int{}, byUID: map[string][]int{},
		byName: map[string][]int{}, known: map[checkpoint.OperatorID]string{}}
	for i := range l.Operators {
		op := &l.Operators[i]
		if _, dup := r.byID[op.ID]; !dup {
			r.byID[op.ID] = i
		}
		if op.UID != "" {
			r.byUID[op.UID] = append(r.byUID[op.UID], i)
		}
		if op.Name != "" {
			r.byName[op.Name] = append(r.byName[op.Name], i)
		}
	}
	return r
}

// checkpointMatches returns the IDs of the checkpoint operators a key names.
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
	}
	for _, i := range r.byUID[key] {
		add(r.layout.Operators[i].ID)
	}
	for _, i := range r.byName[key] {
		add(r.layout.Operators[i].ID)
	}
	return out
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
	return checkpoint.OperatorID{}, &PlanError{Field: field, Key: key,
		Msg: fmt.Sprintf("names %d operators of the checkpoint; use an operator ID", len(m))}
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
