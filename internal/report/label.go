package report

import (
	"fmt"
	"strings"

	"github.com/flinkpreflight/preflight/internal/units"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// minShortID is the fewest hex digits a short operator ID shows (as the API's short_id).
const minShortID = 8

// opRef is what a label needs of an operator.
type opRef struct {
	name, uid, id, short string
	position             int32
	uidByHash            string // the plan key matched through its uid hash (format 1-4)
}

func assignmentRef(op *pb.OperatorAssignment) opRef {
	return opRef{op.GetName(), op.GetUid(), op.GetOperatorId(), op.GetShortId(), op.GetPosition(), op.GetUidByHash()}
}

func infoRef(op *pb.OperatorInfo) opRef {
	return opRef{name: op.GetName(), uid: op.GetUid(), id: op.GetOperatorId(), short: op.GetShortId(), position: op.GetPosition()}
}

// shortID is the API's short_id, or (an answer of an older server) the first eight hex digits.
func (o opRef) shortID() string {
	if o.short != "" {
		return o.short
	}
	if len(o.id) > minShortID {
		return o.id[:minShortID]
	}
	return o.id
}

// unnamed is how an operator without a name or uid (format versions 1-4, or an empty name) is
// called: by its position in the checkpoint, "operator #3"; an operator not in the checkpoint
// (a new operator of the plan) by its short ID.
func (o opRef) unnamed() string {
	if o.position > 0 {
		return fmt.Sprintf("operator #%d", o.position)
	}
	return "operator " + o.shortID()
}

// parts splits an operator's name into its base ("#2 Co-Process-Broadcast-Keyed", "#3 uid
// sink", "operator #4") and what goes in parentheses after it: the uid when it differs from the
// name (two operators may share a name, never a uid).
func (o opRef) parts() (base string, extra []string) {
	pos := ""
	if o.position > 0 {
		pos = fmt.Sprintf("#%d ", o.position)
	}
	switch {
	case o.name != "":
		base = pos + o.name
		if o.uid != "" && o.uid != o.name {
			extra = append(extra, "uid "+o.uid)
		}
	case o.uid != "":
		base = pos + "uid " + o.uid
	default:
		base = o.unnamed()
	}
	if o.uid == "" && o.uidByHash != "" {
		extra = append(extra, "uid "+o.uidByHash+", matched by hash")
	}
	return base, extra
}

// column is the operator column of a table that has an ID column beside it: position, name and
// the uid where it differs, "#2 Co-Process-Broadcast-Keyed (uid BrProcess2)"; an operator
// without name or uid by its position alone ("operator #3").
func (o opRef) column() string {
	base, extra := o.parts()
	if len(extra) == 0 {
		return base
	}
	return base + " (" + strings.Join(extra, ", ") + ")"
}

// withID is column with the given ID inside the parentheses: "#2 Flat Map (uid flat, 4b20…)".
func (o opRef) withID(id string) string {
	base, extra := o.parts()
	return base + " (" + strings.Join(append(extra, id), ", ") + ")"
}

// label names an operator the way a Flink engineer finds it: as column, and an operator without
// name or uid with its short ID, "operator #3 (a1b2c3d4)" (never the ID twice).
func (o opRef) label() string {
	if o.name == "" && o.uid == "" && o.position > 0 {
		return o.withID(o.shortID())
	}
	return o.column()
}

// operatorIndex finds the operators that findings and safe-parallelism entries refer to without
// a name, so that they are labelled like the operators table. Only the referenced IDs are kept:
// a report may hold a million operators.
type operatorIndex map[string]opRef

// indexReferenced indexes the operators of r that a finding or a safe-parallelism entry names by
// ID alone.
func indexReferenced(r *pb.RescaleReport) operatorIndex {
	idx := operatorIndex{}
	for _, f := range r.GetFindings() {
		if f.GetOperatorId() != "" && f.GetOperatorName() == "" && f.GetOperatorUid() == "" {
			idx[f.GetOperatorId()] = opRef{}
		}
	}
	for _, s := range r.GetSafeParallelism() {
		if s.GetVertexName() == "" || s.GetVertexName() == s.GetVertexId() {
			idx[s.GetVertexId()] = opRef{}
		}
	}
	if len(idx) == 0 {
		return idx
	}
	for _, op := range r.GetOperators() {
		if _, ok := idx[op.GetOperatorId()]; ok {
			idx[op.GetOperatorId()] = assignmentRef(op)
		}
	}
	return idx
}

// finding is a finding's operator: its name and uid when the finding has them (a streamed
// report labels a finding before or after the range holding its operator), else the report's
// entry for its ID.
func (idx operatorIndex) finding(f *pb.Finding) opRef {
	if f.GetOperatorName() != "" || f.GetOperatorUid() != "" {
		return opRef{name: f.GetOperatorName(), uid: f.GetOperatorUid(), id: f.GetOperatorId(), position: f.GetOperatorPosition()}
	}
	if o, ok := idx[f.GetOperatorId()]; ok && o.id != "" {
		return o
	}
	return opRef{id: f.GetOperatorId(), position: f.GetOperatorPosition()}
}

// vertex labels a safe-parallelism entry's vertex: its name, else its head operator (whose ID is
// the vertex ID).
func (idx operatorIndex) vertex(s *pb.SafeParallelism) string {
	if s.GetVertexName() != "" && s.GetVertexName() != s.GetVertexId() {
		return s.GetVertexName()
	}
	if o, ok := idx[s.GetVertexId()]; ok && o.id != "" {
		return o.label()
	}
	return s.GetVertexId()
}

// findingWhere is the line under a finding's title: the operator with its full ID (to paste
// into --set), the state, and the new subtasks it concerns.
func findingWhere(f *pb.Finding, o opRef) string {
	var where []string
	switch {
	case f.GetOperatorId() == "":
	case o.name != "" || o.uid != "":
		where = append(where, "operator "+o.withID(f.GetOperatorId()))
	case o.position > 0:
		where = append(where, o.withID(f.GetOperatorId()))
	default:
		where = append(where, "operator "+f.GetOperatorId())
	}
	if n := len(f.GetOperatorIds()); n > 1 && len(where) > 0 {
		where[0] = operatorsWhere(where[0], n)
	}
	if states := statesWhere(f); states != "" {
		where = append(where, states)
	}
	if len(f.GetAffectedSubtasks()) > 0 {
		where = append(where, subtasksText(f.GetAffectedSubtasks()))
	}
	return strings.Join(where, ", ")
}

// subtasksText names new subtasks: "new subtask 3", "new subtasks 0-3, 7", or "none".
func subtasksText(idx []int32) string {
	switch len(idx) {
	case 0:
		return "none"
	case 1:
		return "new subtask " + units.Ranges(idx)
	}
	return "new subtasks " + units.Ranges(idx)
}
